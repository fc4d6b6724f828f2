"""icebook: a Jupyter workbench for seeing inside Apache Iceberg tables and travelling through their history."""

from __future__ import annotations

__version__ = "0.1.0"
