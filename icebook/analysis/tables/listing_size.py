"""How large a listing will be before it is built as a pandas DataFrame, and the warning when it is large.

The rows come from the manifest list's counts (no manifest is read to know them): a files listing holds a
manifest's ADDED and EXISTING entries, an entries listing all three. Above ``config.listing_warn_rows()`` rows
(5,000,000 unless ``ICEBOOK_LISTING_WARN_ROWS`` says otherwise), ``LargeListingWarning`` says how many rows and
about how much memory the DataFrame takes, and how to stream the same rows instead (``t.inspect.batches``: a
``pyarrow.RecordBatchReader``; ``t.inspect.lazy``: a ``polars.LazyFrame``). The listing is still built whole:
nothing is truncated.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from icebook import config
from icebook.errors import LargeListingWarning
from icebook.spec.manifest import ManifestContent, ManifestFile
from icebook.text import short_byte_size


class ListingContent(StrEnum):
    """What a listing of ``inspect`` holds: every live file, the data or the delete files, or the entries."""

    FILES = "all"
    DATA = "data"
    DELETES = "deletes"
    ENTRIES = "entries"


def of_content(manifests: Iterable[ManifestFile], content: ListingContent) -> tuple[ManifestFile, ...]:
    """The manifests that can list files of ``content``."""
    if content == ListingContent.DATA:
        return tuple(m for m in manifests if m.effective_content == ManifestContent.DATA)
    if content == ListingContent.DELETES:
        return tuple(m for m in manifests if m.effective_content == ManifestContent.DELETES)
    return tuple(manifests)


WARN_ROWS_VARIABLE = "ICEBOOK_LISTING_WARN_ROWS"
BYTES_PER_ROW = 2048
"""Peak memory per row of a files or entries DataFrame, measured on a 500,000-file table (1.2 KiB per row
in the frame, about twice that while it is built); wider schemas carry more metrics per row."""


@dataclass(frozen=True, slots=True)
class ListingSize:
    """Rows a listing of some manifests holds, from the manifest list's counts."""

    rows: int
    exact: bool
    """False when a manifest's counts are missing (v1 lists may omit them): ``rows`` is then a lower bound."""

    @property
    def estimated_bytes(self) -> int:
        return self.rows * BYTES_PER_ROW


def listing_size(manifests: Iterable[ManifestFile], *, deleted: bool) -> ListingSize:
    """Rows of the files listing of ``manifests`` (ADDED and EXISTING entries), or of the entries listing
    (``deleted``: DELETED entries too)."""
    rows = 0
    exact = True
    for m in manifests:
        counts = [m.added_files_count, m.existing_files_count, *((m.deleted_files_count,) if deleted else ())]
        exact &= all(c is not None for c in counts)
        rows += sum(c or 0 for c in counts)
    return ListingSize(rows, exact)


def warn_rows() -> int:
    """The threshold in force: ``ICEBOOK_LISTING_WARN_ROWS`` when set, else 5,000,000 (``icebook.config``)."""
    return config.listing_warn_rows()


def warn_if_large(method: str, at: object, size: ListingSize) -> None:
    """Warn (``LargeListingWarning``) before ``t.inspect.<method>(at)`` builds a DataFrame of more than
    ``warn_rows()`` rows."""
    threshold = warn_rows()
    if size.rows <= threshold:
        return

    def call(form: str = "") -> str:
        return f"t.inspect.{form}{method}({f'at={at!r}' if at is not None else ''})"

    rows = f"{size.rows:,}" if size.exact else f"at least {size.rows:,}"
    warnings.warn(
        f"{call()} builds a pandas DataFrame of {rows} rows (from the manifest lists' counts), about "
        f"{short_byte_size(size.estimated_bytes)} of memory. To stream the same rows instead: "
        f"{call('batches.')} (a pyarrow.RecordBatchReader, one manifest at a time) or "
        f"{call('lazy.')} (a polars.LazyFrame). Warned above {threshold:,} rows ({WARN_ROWS_VARIABLE}).",
        LargeListingWarning,
        stacklevel=4,
    )
