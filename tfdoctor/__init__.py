"""tfdoctor: diagnose TensorFlow installs, from the facts of the machine to a verdict per check."""

__version__ = "0.1.0"

# The Python API (tfdoctor/api.py), loaded on first use: `import tfdoctor` stays light (no rich,
# no TensorFlow, no checks) for the CLI's --version and for scripts that only read __version__.
__all__ = ["__version__", "diagnose", "explain", "Report", "DoctorError"]


def __getattr__(name: str):
    if name in ("diagnose", "explain", "Report", "DoctorError"):
        from tfdoctor import api

        return getattr(api, name)
    raise AttributeError(f"module 'tfdoctor' has no attribute {name!r}")


from tfdoctor import source_tree  # noqa: E402,F401 - run from a clone, its top-level checks/ is tfdoctor.checks
