"""tfdoctor: diagnose TensorFlow installs, from the facts of the machine to a verdict per check."""

__version__ = "0.1.0"

from tfdoctor import source_tree  # noqa: E402,F401 - run from a clone, its top-level checks/ is tfdoctor.checks
