"""Run from a clone: the top-level checks/ directory is `tfdoctor.checks`, as it is once installed.

pyproject.toml maps checks/ to tfdoctor.checks (package-dir), and an editable install's finder does the
same. But `python -m tfdoctor` run from the clone's root puts the root first on sys.path, so the source
tree's tfdoctor/ is imported instead of the installed package, and it holds no checks/: every command
failed with "No module named 'tfdoctor.checks'" after a plain `pip install .`. Importing this module
(tfdoctor/__init__.py does) registers the clone's checks/ under that name; an installed package, which
has tfdoctor/checks/ inside, is left alone.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
CHECKS_NAME = "tfdoctor.checks"


def checks_directory(package_dir: str = PACKAGE_DIR) -> str | None:
    """checks/ beside the package in a source tree; None in an installed package (its checks are inside)."""
    if os.path.isdir(os.path.join(package_dir, "checks")):
        return None
    root = os.path.dirname(package_dir)
    candidate = os.path.join(root, "checks")
    is_clone = os.path.isfile(os.path.join(root, "pyproject.toml"))
    return candidate if is_clone and os.path.isfile(os.path.join(candidate, "__init__.py")) else None


def adopt_checks() -> None:
    """Load the clone's checks/ as `tfdoctor.checks` (its __init__ holds only the MODULES tuple: cheap)."""
    directory = checks_directory()
    if directory is None or CHECKS_NAME in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        CHECKS_NAME, os.path.join(directory, "__init__.py"), submodule_search_locations=[directory])
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[CHECKS_NAME] = module
    spec.loader.exec_module(module)
    package: Any = sys.modules["tfdoctor"]  # a module object: its attributes are not declared
    package.checks = module


adopt_checks()
