"""A plan's files and tasks as objects read from its columns: a ``ScanFile`` or ``ScanTask`` whose fields
are taken from the columns they live in when asked (spec: "Scan Planning").

A plan read in full makes a file and a task per data file. Setting every field of each, one call per
field per object, was most of the cost of reading a plan; most readers look at a few fields (the path,
the size, the records, the deletes). ``FileRow`` and ``TaskRow`` are a ``ScanFile`` and a ``ScanTask``
(``isinstance`` holds, the fields are the same, equality and hashing are by value with either class) that
hold only their place in a ``LazyColumns``: a run of rows whose Python values are made one column at a
time, the first time any of its objects reads that field. A kept object keeps its run's columns (a few
thousand rows) alive; ``materialized()`` gives a plain dataclass that keeps nothing else.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from itertools import repeat
from operator import attrgetter
from typing import Any, ClassVar, TypeVar

from icebook.analysis.scan.plan_items import ScanFile, ScanTask


class LazyColumns:
    """The values of ``n`` rows, one Python list per field, each made by its maker on first use (a name
    starting with ``_``: something several columns are made from, made once)."""

    def __init__(
        self, n: int, makers: Mapping[str, Callable[[LazyColumns], Sequence[Any]]], context: Any = None
    ) -> None:
        self.n = n
        self._makers = makers
        self.context = context
        """What the makers read the rows from."""

    def __getattr__(self, name: str) -> Sequence[Any]:
        # Only called for a column not made yet: the made ones are plain attributes.
        make = self.__dict__.get("_makers", {}).get(name)
        if make is None:
            raise AttributeError(name)
        values = make(self)
        if not name.startswith("_") and len(values) != self.n:  # "_name": a value its columns share
            raise ValueError(f"column {name}: {len(values)} values for {self.n} rows")
        setattr(self, name, values)
        return values


def constant(value: Any) -> Callable[[LazyColumns], list[Any]]:
    """A maker of a column holding one value."""
    return lambda c: [value] * c.n


class _Row:
    """What a row object adds to its dataclass: its place, and equality, hashing, repr, copying and
    pickling by value (as the dataclass has them), each through the fields."""

    __slots__ = ()
    _base: ClassVar[type]
    _compared: ClassVar[Any]  # attrgetter of the fields equality compares
    _c: LazyColumns
    _i: int

    def _values(self) -> dict[str, Any]:
        """The fields' values, a task's files as plain dataclasses."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self._base)}

    def materialized(self) -> Any:
        """The plain dataclass with this object's values, its files plain too (it holds no columns)."""
        base: Any = self._base
        return base(**self._values())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, self._base):
            return bool(self._compared(self) == type(self)._compared(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._compared(self))

    def __repr__(self) -> str:
        return repr(self.materialized())

    def __reduce__(self) -> tuple[Any, ...]:
        return _made, (self._base, self._values())

    def __new__(cls, **values: Any) -> Any:  # dataclasses.replace makes a plain dataclass
        base: Any = cls._base
        return base(**values)


def _plain(value: Any) -> Any:
    if isinstance(value, _Row):
        return value.materialized()
    if isinstance(value, tuple) and value and isinstance(value[0], _Row):
        return tuple(v.materialized() for v in value)
    return value


def _made(cls: type, values: dict[str, Any]) -> Any:
    return cls(**values)


class FileRow(_Row, ScanFile):
    """A ``ScanFile`` read from its row of a ``LazyColumns`` (the fields of ``ScanFile``, by name)."""

    __slots__ = ("_c", "_i")
    _base = ScanFile


class TaskRow(_Row, ScanTask):
    """A ``ScanTask`` read from its row of a ``LazyColumns`` (the fields of ``ScanTask``, by name)."""

    __slots__ = ("_c", "_i")
    _base = ScanTask


def _field(name: str) -> property:
    column = attrgetter(name)
    return property(lambda self: column(self._c)[self._i], doc=f"``{name}``, from its column")


for _cls in (FileRow, TaskRow):
    for _f in fields(_cls._base):
        setattr(_cls, _f.name, _field(_f.name))
    _cls._compared = attrgetter(*(f.name for f in fields(_cls._base) if f.compare))  # type: ignore[assignment]

_R = TypeVar("_R", FileRow, TaskRow)


def rows_of(cls: type[_R], columns: LazyColumns) -> list[_R]:
    """One ``cls`` object per row of ``columns``, in order: each holds its place and nothing else."""
    n = columns.n
    made: list[_R] = list(map(object.__new__, repeat(cls, n)))  # type: ignore[call-overload]
    slots: Mapping[str, Any] = cls.__dict__  # the slots' descriptors: set at C speed, no call per object
    deque(map(slots["_c"].__set__, made, repeat(columns, n)), maxlen=0)
    deque(map(slots["_i"].__set__, made, range(n)), maxlen=0)
    return made


__all__ = ["FileRow", "LazyColumns", "TaskRow", "constant", "rows_of"]
