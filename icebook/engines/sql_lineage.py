"""SQL that names the row-lineage metadata columns (``_row_id``, ``_last_updated_sequence_number``; v3).

Spark resolves metadata columns on a table, never through a view, and leaves them out of ``*``. Both
engines read a query over the view ``t``, so a query that names either column gets a ``t`` that has the
two columns after the table's own (Spark: a projection of the pinned DataFrame; the Arrow engine: its lazy
scan with them), and each ``*`` item of a select list (``*`` or ``alias.*``) is written out as the
table's own columns, so ``SELECT _row_id, _last_updated_sequence_number, * FROM t`` answers as Spark
answers it on the table. A query naming neither is left as it is. In a join, a bare ``*`` is written
out as ``t``'s columns only; qualify the other table's (``u.*``) there.
"""

from __future__ import annotations

from collections.abc import Sequence

from icebook.engines.arrow_lineage import LINEAGE_FIELDS, lineage_names
from icebook.engines.sql_names import token_spans
from icebook.errors import UnsupportedFeature
from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import Schema

_BEFORE_ITEM = {"SELECT", "DISTINCT", "ALL", ","}
_AFTER_ITEM = {",", "FROM", ")", ";"}


def named_lineage(query: str) -> tuple[str, ...]:
    """The lineage columns ``query`` names (as words or quoted names, any case), in the spec's order."""
    spans = token_spans(query) or []
    words = {_unquoted(kind, text).lower() for kind, text, _, _ in spans if kind in ("word", "qid")}
    return tuple(name for name in LINEAGE_FIELDS if name in words)


def prepare(query: str, metadata: TableMetadata, schema: Schema) -> tuple[str, tuple[str, ...]]:
    """(the query to run over ``t``, the lineage columns ``t`` must have): unchanged and none when the query
    names neither lineage column (or the table has columns of those names); one ``UnsupportedFeature`` when
    it names one of a table of format version 1 or 2, which has no row lineage."""
    own = {f.name.lower() for f in schema.columns}
    asked = tuple(name for name in named_lineage(query) if name not in own)
    if not asked:
        return query, ()
    if metadata.format_version < 3:
        raise UnsupportedFeature(
            f"{', '.join(asked)}: a table of format version {metadata.format_version} has no row lineage "
            "(the _row_id and _last_updated_sequence_number columns exist from format version 3)"
        )
    return expand_stars(query, [f.name for f in schema.columns]), lineage_names(metadata, schema)


def expand_stars(query: str, columns: Sequence[str]) -> str:
    """``query`` with every ``*`` select item written out as ``columns`` (``a.*`` as ``a.`x`, a.`y```)."""
    spans = token_spans(query)
    if spans is None:
        return query
    out, at = [], 0
    for i, (_, text, start, end) in enumerate(spans):
        if text != "*":
            continue
        after = spans[i + 1][1].upper() if i + 1 < len(spans) else ";"
        if after not in _AFTER_ITEM:
            continue
        qualifier, first = "", start
        if i >= 2 and spans[i - 1][1] == "." and spans[i - 2][0] in ("word", "qid"):
            qualifier, first = spans[i - 2][1] + ".", spans[i - 2][2]
            before_index = i - 3
        else:
            before_index = i - 1
        if before_index < 0 or spans[before_index][1].upper() not in _BEFORE_ITEM:
            continue
        out += [query[at:first], ", ".join(qualifier + _quoted(c) for c in columns)]
        at = end
    return "".join(out) + query[at:]


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _unquoted(kind: str, text: str) -> str:
    if kind != "qid":
        return text
    quote = text[0]
    return text[1:-1].replace(quote * 2, quote)


__all__ = ["expand_stars", "named_lineage", "prepare"]
