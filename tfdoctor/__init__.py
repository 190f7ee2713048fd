"""tfdoctor: diagnose TensorFlow installs, from the facts of the machine to a verdict per check.

The Python API (tfdoctor/api.py) is loaded on first use of one of its names (PEP 562), so importing any
lower floor (tfdoctor.facts, tfdoctor.report.run, a check) does not load it, and `tfdoctor.explain` is the
API function whatever was imported first. No module of the package reads this one's names: they import
the module that defines them (`from tfdoctor._version import __version__`).
"""

from __future__ import annotations

from typing import Any

from tfdoctor import source_tree  # noqa: F401 - run from a clone, its top-level checks/ is tfdoctor.checks
from tfdoctor._version import __version__

_API_NAMES = ("diagnose", "explain", "Report", "DoctorError")

__all__ = ["__version__", *_API_NAMES]


def __getattr__(name: str) -> Any:
    if name in _API_NAMES:
        from tfdoctor import api

        return getattr(api, name)
    raise AttributeError(f"module 'tfdoctor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API_NAMES))
