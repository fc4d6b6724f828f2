"""What the v3 inspector flags: a spec rule a structure breaks, or something worth knowing."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How serious a finding is: ``error`` breaks a rule of the spec; ``note`` is allowed but worth a look."""

    ERROR = "error"
    NOTE = "note"


@dataclass(frozen=True, slots=True, kw_only=True)
class V3Finding:
    """One finding, naming the file (or snapshot) and the field it is about."""

    level: Severity
    subject: str
    """The file path, or ``snapshot <id>`` / ``table metadata``."""
    field: str
    """The field or property the rule is about (``first_row_id``, ``next-row-id``, ...)."""
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.subject}: {self.field}: {self.message}"


__all__ = ["Severity", "V3Finding"]
