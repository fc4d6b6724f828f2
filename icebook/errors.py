"""One error hierarchy for icebook.

Every error that comes from reading a table names the file it was reading and,
where there is one, the field that was wrong, so that a user can go and look.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager


class IcebookError(Exception):
    """Base class of every error icebook raises on purpose."""


class MetadataError(IcebookError):
    """A table file (metadata JSON, manifest list, manifest, Puffin) is malformed.

    The message reads ``<kind> <file>: <field>: <problem>``.
    """

    may_pass = False
    """True when another try may succeed: the decoder missed its deadline or died (a loaded machine), rather
    than the file's content failing a decode or a check."""

    def __init__(self, file: str, field: str | None, problem: str, *, kind: str = "file") -> None:
        self.file = file
        self.field = field
        self.problem = problem
        self.kind = kind
        where = f"{kind} {file}"
        super().__init__(f"{where}: {field}: {problem}" if field else f"{where}: {problem}")


class _SettingValue(Exception):
    """A named setting holds a value icebook cannot use: ``<what> <name>=<value>: <problem>``."""

    what = "setting"

    def __init__(self, name: str, value: str, problem: str) -> None:
        self.name = name
        self.value = value
        self.problem = problem
        super().__init__(f"{self.what} {name}={value!r}: {problem}")


class PropertyError(_SettingValue, IcebookError):
    """A table property icebook reads holds a value it cannot use.

    The message reads ``table property <name>=<value>: <problem>``.
    """

    what = "table property"


class OptionError(IcebookError):
    """An option or argument a procedure would reject, with the procedure's own reason."""


class ConfigError(_SettingValue, OptionError):
    """An ``ICEBOOK_*`` environment variable holds a value icebook cannot use (``icebook/config.py``).

    The message reads ``environment variable <name>=<value>: <problem>``.
    """

    what = "environment variable"


class NotFound(IcebookError):
    """A file, snapshot, branch, tag or table that does not exist.

    ``available`` lists what does exist, so the message can suggest it.
    """

    def __init__(self, what: str, *, available: Iterable[object] = ()) -> None:
        self.what = what
        self.available = tuple(available)
        message = what
        if self.available:
            shown = ", ".join(str(a) for a in self.available[:20])
            more = f" (and {len(self.available) - 20} more)" if len(self.available) > 20 else ""
            message = f"{what}; available: {shown}{more}"
        super().__init__(message)


class UnsupportedFeature(IcebookError):
    """Valid Iceberg that icebook does not read yet (e.g. an unknown format version)."""


class EngineError(IcebookError):
    """A query engine (Spark, Arrow) failed; the first line is the engine's own message."""


class StorageError(IcebookError):
    """Storage refused a request (credentials, permissions, network, a store that cannot be set up).

    One line naming the file, and for object stores its bucket and key.
    """


class CatalogError(IcebookError):
    """A catalog could not be reached or answered with an error; names the catalog and its URI."""


class EnvironmentProblem(IcebookError):
    """The machine lacks something icebook needs (Java, the Iceberg jar, a writable path).

    The message says what is missing and how to fix it.
    """


class IcebookWarning(UserWarning):
    """Base class of every warning icebook gives on purpose (``warnings.filterwarnings`` takes it)."""


class LargeListingWarning(IcebookWarning):
    """A listing about to be built as one pandas DataFrame is large (``analysis/tables/listing_size.py``):
    the message gives its rows and estimated memory and how to stream it instead."""


ONE_LINE_LIMIT = 500
"""Characters an error shown as one line keeps at most."""


def one_line(exc: BaseException) -> str:
    """``exc`` as the one line a cell, the command line, a widget or the lake browser shows.

    An ``IcebookError`` is its message (written for the user: it names the file, field or property); any
    other exception is its type and message. Only the first non-blank line counts (below it come an engine's
    stack or a server's details), its whitespace collapsed; at most ``ONE_LINE_LIMIT`` characters.
    """
    first = next((line for line in str(exc).splitlines() if line.strip()), "")
    text = " ".join(first.split())
    if not isinstance(exc, IcebookError):
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    text = text or type(exc).__name__
    return text if len(text) <= ONE_LINE_LIMIT else text[: ONE_LINE_LIMIT - 3] + "..."


@contextmanager
def decoded_values(file: str, field: str | None, *, kind: str = "file") -> Iterator[None]:
    """The one rule for computing over values decoded from a table's files (an Arrow cast of bounds, a string
    function over paths, a map lookup, numpy over the bytes): a failure is one ``MetadataError`` naming the
    file and the field, never a foreign exception. ``IcebookError`` passes through (it already names them)."""
    try:
        yield
    except IcebookError:
        raise
    except Exception as exc:
        raise MetadataError(file, field, f"values cannot be used as written ({one_line(exc)})", kind=kind) from None
