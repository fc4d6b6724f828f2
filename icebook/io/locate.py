"""Finding a table's current metadata file, and reading it.

Order of preference in a table's ``metadata/`` directory:

1. ``version-hint.text`` (Hadoop catalog): it holds N; the file is ``v<N>.metadata.json``
   or one of its GZIP variants (``v<N>.gz.metadata.json``, ``v<N>.metadata.json.gz``). A hint
   may be stale (a writer committed v<N+1> but crashed before rewriting it), so, as Iceberg's
   Java ``HadoopTableOperations`` does, read forward from N while ``v<N+1>`` exists.
2. The highest ``v<N>.metadata.json`` (any variant): when the hint is missing, unreadable or
   names a file that does not exist.
3. The highest ``<NNNNN>-<uuid>.metadata.json`` (any variant). When several files share the
   highest version (a lost concurrent commit), the one with the latest ``last-updated-ms`` wins.
"""

from __future__ import annotations

from collections.abc import Sequence

from icebook.errors import EnvironmentProblem, IcebookError, NotFound, StorageError, UnsupportedFeature
from icebook.io.fileio import FileInfo, FileIO
from icebook.spec.filenames import MetadataFileName, base_name, parse_metadata_file_name
from icebook.spec.metadata import TableMetadata, parse_metadata_json
from icebook.spec.metadata_json import decode_metadata_json

VERSION_HINT = "version-hint.text"
_LOOKED_FOR = (
    f"{VERSION_HINT}, v<N>.metadata.json, <NNNNN>-<uuid>.metadata.json "
    "(and the .gz.metadata.json / .metadata.json.gz variants)"
)


def _looks_like_metadata_file(location: str) -> bool:
    # Any JSON file counts: users may point at a metadata file with a non-standard name.
    return base_name(location).endswith((".json", ".json.gz"))


def _list(fileio: FileIO, directory: str) -> list[FileInfo]:
    try:
        return fileio.list_dir(directory)
    except NotFound as exc:
        raise NotFound(f"no table at {directory}: {exc.what}") from None
    except (StorageError, EnvironmentProblem, UnsupportedFeature):
        raise  # credentials, network, a missing filesystem driver or an unknown scheme: not a missing table
    except (OSError, IcebookError) as exc:
        raise NotFound(f"no table at {directory}: cannot list it ({exc})") from None


def locate_metadata(fileio: FileIO, location: str) -> str:
    """The current metadata file of the table at ``location``.

    ``location`` may be a metadata file (returned as is once it exists), a table directory, or
    its ``metadata/`` directory. Raises ``NotFound`` naming the directory and what was looked for.
    """
    location = location.rstrip("/") or "/"
    if _looks_like_metadata_file(location):
        if not fileio.exists(location):
            raise NotFound(f"metadata file not found: {location}")
        return location
    entries = _list(fileio, location)
    metadata_dir = location
    if base_name(location) != "metadata":
        sub = [e for e in entries if e.is_dir and base_name(e.path) == "metadata"]
        if sub:
            metadata_dir = sub[0].path
            entries = _list(fileio, metadata_dir)
        elif not entries:
            # Object stores have no directories, and some listings (pyarrow's GCS one among them)
            # omit the implied ones: look in <location>/metadata itself, as Iceberg's readers do.
            try:
                entries = _list(fileio, location + "/metadata")
                metadata_dir = location + "/metadata"
            except NotFound:
                pass
    found = find_current_metadata(fileio, metadata_dir, entries)
    if found is None:
        names = sorted(base_name(e.path) for e in entries)
        raise NotFound(f"no table metadata in {metadata_dir}: looked for {_LOOKED_FOR}", available=names)
    return found


def _hadoop_candidates(version: int) -> tuple[str, ...]:
    # Same order as the reference implementation's lookup: plain, then the GZIP codecs.
    return (f"v{version}.metadata.json", f"v{version}.gz.metadata.json", f"v{version}.metadata.json.gz")


def _hadoop_file(files: dict[str, str], version: int) -> str | None:
    return next((files[c] for c in _hadoop_candidates(version) if c in files), None)


def find_current_metadata(fileio: FileIO, metadata_dir: str, entries: Sequence[FileInfo]) -> str | None:
    """Apply the preference order of this module to one directory listing; None if nothing fits."""
    files = {base_name(e.path): e.path for e in entries if not e.is_dir}
    if VERSION_HINT in files:
        hint = fileio.read_bytes(files[VERSION_HINT]).decode("utf-8", errors="replace").strip()
        if hint.isascii() and hint.isdigit():  # int() rejects "²", which isdigit() accepts
            version = int(hint)
            current = _hadoop_file(files, version)
            if current is not None:
                while (newer := _hadoop_file(files, version + 1)) is not None:
                    version, current = version + 1, newer
                return current
        # An unreadable hint, or one naming a missing file: fall through to listing.
    parsed = [p for p in (parse_metadata_file_name(path) for path in files.values()) if p is not None]
    hadoop = [p for p in parsed if p.style == "hadoop"]
    if hadoop:
        found = _hadoop_file(files, max(p.version for p in hadoop))
        if found is not None:
            return found
    versioned = [p for p in parsed if p.style == "versioned"]
    if versioned:
        top = max(p.version for p in versioned)
        tied = sorted((p for p in versioned if p.version == top), key=lambda p: p.name)
        return tied[0].path if len(tied) == 1 else _latest_updated(fileio, tied)
    return None


def _latest_updated(fileio: FileIO, candidates: Sequence[MetadataFileName]) -> str:
    def updated(p: MetadataFileName) -> int:
        try:
            obj = decode_metadata_json(fileio.read_bytes(p.path), file=p.path)
            value = obj.get("last-updated-ms")
            return value if isinstance(value, int) else -1
        except IcebookError:
            return -1

    return max(candidates, key=lambda p: (updated(p), p.name)).path


def read_table_metadata(fileio: FileIO, metadata_location: str) -> TableMetadata:
    """Read and parse one metadata file (GZIP detected from its content)."""
    return parse_metadata_json(fileio.read_bytes(metadata_location), file=metadata_location)


__all__ = ["VERSION_HINT", "find_current_metadata", "locate_metadata", "read_table_metadata"]
