"""tfdoctor: diagnose TensorFlow installs, from the facts of the machine to a verdict per check."""

from tfdoctor import source_tree  # noqa: F401 - run from a clone, its top-level checks/ is tfdoctor.checks
from tfdoctor._version import __version__

# The Python API (tfdoctor/api.py: no rich, no TensorFlow, no checks until a diagnosis runs).
from tfdoctor.api import DoctorError, Report, diagnose, explain

__all__ = ["__version__", "diagnose", "explain", "Report", "DoctorError"]
