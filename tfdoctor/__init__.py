"""tfdoctor: diagnose TensorFlow installs, from the facts of the machine to a verdict per check."""

__version__ = "0.1.0"
