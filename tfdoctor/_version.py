"""The one place tfdoctor's version is written: pyproject.toml reads it ([tool.setuptools.dynamic]), the
package re-exports it, and the report, the renderers and the CLI import it from here, so none of them
imports the package's __init__ (and with it the API) to learn it."""

__version__ = "0.1.0"
