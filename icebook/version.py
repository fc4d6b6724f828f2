"""The package's version, in a module of its own so that any layer can show it without importing the
package root (which imports the facade on first use). pyproject.toml carries the same number."""

__version__ = "0.1.0"
