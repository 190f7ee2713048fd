"""tfdoctor: diagnose TensorFlow installs, from the facts of the machine to a verdict per check."""

__version__ = "0.1.0"

from tfdoctor import source_tree  # noqa: E402,F401 - run from a clone, its top-level checks/ is tfdoctor.checks

# The Python API (tfdoctor/api.py: no rich, no TensorFlow, no checks until a diagnosis runs). The
# submodule tfdoctor.explain loads first, so that the package attribute `explain` is the API function
# (importing a submodule again does not rebind it); `from tfdoctor.explain import ...` still works.
from tfdoctor import explain as _saved_reports  # noqa: E402,F401
from tfdoctor.api import DoctorError, Report, diagnose, explain  # noqa: E402

__all__ = ["__version__", "diagnose", "explain", "Report", "DoctorError"]
