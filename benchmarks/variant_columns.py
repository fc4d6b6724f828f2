"""How fast the Arrow engine turns a file's variant column into icebook's form, and variants into JSON text.

Builds ``--rows`` variants (objects of a few fields, an array among them) twice in memory: unshredded, as
``metadata``/``value``, and shredded, the same values split into ``typed_value`` columns as a shredding
writer stores them. Times ``conform_v3`` on each (every value walked; the shredded one rebuilt) and
``variant_json``, and exits non-zero unless the rebuilt values equal the unshredded ones byte for byte.

    python benchmarks/variant_columns.py --rows 200000
"""

from __future__ import annotations

import argparse
import sys
import time

import pyarrow as pa

from icebook.analysis.variant_text import variant_json
from icebook.engines.arrow_v3_types import conform_v3
from icebook.spec import variant_encode as enc
from icebook.spec.types import VARIANT

KEYS = ("page", "ms", "tags")
METADATA = enc.encode_metadata(KEYS)


def unshredded(rows: int) -> pa.Array:
    values = [
        enc.encode_object(
            [
                (0, "page", enc.encode_string(f"/p{i}")),
                (1, "ms", enc.encode_int(i, 8)),
                (2, "tags", enc.encode_array([enc.encode_string(f"t{i % 7}")])),
            ]
        )
        for i in range(rows)
    ]
    return pa.StructArray.from_arrays(
        [pa.array([METADATA] * rows, pa.binary()), pa.array(values, pa.binary())], names=["metadata", "value"]
    )


def shredded(rows: int) -> pa.Array:
    def field(typed: pa.Array) -> pa.Array:
        return pa.StructArray.from_arrays([pa.nulls(rows, pa.binary()), typed], names=["value", "typed_value"])

    element = pa.struct([pa.field("value", pa.binary()), pa.field("typed_value", pa.string())])
    tags = pa.array([[{"value": None, "typed_value": f"t{i % 7}"}] for i in range(rows)], pa.list_(element))
    typed = pa.StructArray.from_arrays(
        [field(pa.array([f"/p{i}" for i in range(rows)])), field(pa.array(range(rows), pa.int64())), field(tags)],
        names=list(KEYS),
    )
    return pa.StructArray.from_arrays(
        [pa.array([METADATA] * rows, pa.binary()), pa.nulls(rows, pa.binary()), typed],
        names=["metadata", "value", "typed_value"],
    )


def timed(label: str, rows: int, call: object) -> object:
    started = time.perf_counter()
    result = call()  # type: ignore[operator]
    seconds = time.perf_counter() - started
    print(f"{label:<28} {seconds:8.3f} s  {rows / seconds:12,.0f} rows/s")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    rows = parser.parse_args().rows
    plain, split = unshredded(rows), shredded(rows)
    checked = timed("unshredded (checked)", rows, lambda: conform_v3(plain, VARIANT))
    rebuilt = timed("shredded (rebuilt)", rows, lambda: conform_v3(split, VARIANT))
    texts = timed("variant_json", rows, lambda: variant_json(checked))  # type: ignore[arg-type]
    if rebuilt.field("value") != plain.field("value") or checked.field("value") != plain.field("value"):  # type: ignore[attr-defined]
        print("the rebuilt values differ from the unshredded ones", file=sys.stderr)
        return 1
    first = texts.to_pylist()[0]  # type: ignore[attr-defined]
    if first != '{"ms":0,"page":"/p0","tags":["t0"]}':
        print(f"unexpected JSON text {first!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
