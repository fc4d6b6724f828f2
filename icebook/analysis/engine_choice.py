"""Which engine reads rows or aggregates metadata: the one rule every ``engine=`` argument is read by."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, TypeAlias

from icebook.errors import NotFound

EngineName: TypeAlias = Literal["arrow", "spark"]
"""What an ``engine=`` argument may say (the values of ``Engine``)."""


class Engine(StrEnum):
    """``arrow``: in this process, no JVM; ``spark``: the attached Spark session."""

    ARROW = "arrow"
    SPARK = "spark"

    @classmethod
    def named(cls, name: str) -> Engine:
        """The engine called ``name``; any other name is a ``NotFound`` listing the engines."""
        try:
            return cls(name)
        except ValueError:
            raise NotFound(f"unknown engine {name!r}", available=[e.value for e in cls]) from None


__all__ = ["Engine", "EngineName"]
