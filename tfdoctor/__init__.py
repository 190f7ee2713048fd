"""tfdoctor: diagnose TensorFlow installs, from the facts of the machine to a verdict per check."""

__version__ = "0.1.0"

from tfdoctor import source_tree  # noqa: E402,F401 - run from a clone, its top-level checks/ is tfdoctor.checks

# The Python API (tfdoctor/api.py: no rich, no TensorFlow, no checks until a diagnosis runs).
from tfdoctor.api import DoctorError, Report, diagnose, explain  # noqa: E402

__all__ = ["__version__", "diagnose", "explain", "Report", "DoctorError"]
