"""The package's version, in a module of its own so that any layer can show it without importing the
package root (which imports the facade on first use). The build reads it from here (pyproject.toml's
``[tool.hatch.version]``)."""

__version__ = "0.1.0"
