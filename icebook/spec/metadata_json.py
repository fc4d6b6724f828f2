"""A metadata file's bytes as a JSON object (gzip detected by its magic bytes), with errors that say
where the text is broken: truncated, not UTF-8, not JSON, nested too deeply, not an object."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from typing import Any

from icebook.errors import MetadataError

GZIP_MAGIC = b"\x1f\x8b"


def inflate_metadata_json(data: bytes, *, file: str) -> bytes:
    """A metadata file's JSON text as bytes: gunzipped when it starts with the gzip magic bytes."""

    def fail(problem: str) -> MetadataError:
        return MetadataError(file, None, problem, kind="metadata")

    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except EOFError:
            raise fail("truncated gzip data") from None
        except (OSError, zlib.error) as exc:
            raise fail(f"corrupt gzip data ({exc})") from None
    if not data.strip():
        raise fail("empty file")
    return data


_PARTIAL_TOKEN = re.compile(r"-?[0-9]*(\.[0-9]*)?([eE][+-]?[0-9]*)?")


def _cut_short(rest: str) -> bool:
    """Whether the text after a JSON error is nothing, or the start of a literal or number that the end of
    the file cut off (``tr``, ``-1.``): then the file is truncated rather than malformed."""
    rest = rest.strip()
    partial_word = any(word.startswith(rest) for word in ("true", "false", "null"))
    return not rest or partial_word or bool(_PARTIAL_TOKEN.fullmatch(rest))


def decode_metadata_json(data: bytes, *, file: str) -> Any:
    """Bytes -> the decoded JSON object, with errors that say where the text is broken."""

    def fail(problem: str) -> MetadataError:
        return MetadataError(file, None, problem, kind="metadata")

    data = inflate_metadata_json(data, file=file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not valid UTF-8 at byte {exc.start}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        if _cut_short(text[exc.pos :]) or exc.msg.startswith("Unterminated"):
            raise fail(f"truncated: JSON ends unexpectedly at line {exc.lineno} column {exc.colno}") from None
        raise fail(f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise fail(
            "JSON nested too deeply to read (arrays or objects inside each other beyond Python's limit)"
        ) from None
    except ValueError as exc:  # e.g. an integer literal with thousands of digits
        raise fail(f"not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise fail(f"expected a JSON object at the top level, found {type(obj).__name__}")
    return obj


__all__ = ["GZIP_MAGIC", "decode_metadata_json", "inflate_metadata_json"]
