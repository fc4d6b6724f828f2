"""Manifest decoding speed: icebook's columnar path vs a fastavro dict-per-entry path.

Writes a synthetic manifest (default 100k entries, 8 columns of stats each) with the
exact manifest_entry Avro schema Iceberg's Spark runtime writes (v3, partitioned by
bucket + day), then decodes it with every available decoder and prints entries/s and
the ratio to fastavro measured in the same run; then polars-avro's options side by side, and checks that
every decoder gives the same entries (exit status 1 if not). DuckDB is not measured: its Avro reader is an
extension it downloads from its own site, not from PyPI.

    python benchmarks/avro_decode.py [--entries 100000] [--codec deflate] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import fastavro

from icebook.io.avro import INHERITED_FLAGS, available_decoders, entries_schema, read_manifest_entries
from icebook.io.avro_decode import manifest_columns
from icebook.io.avro_header import check_framing, header_from_metadata
from icebook.io.avro_schema import manifest_layout
from icebook.io.fileio import ArrowFileIO
from icebook.spec.manifest import ManifestContent, ManifestFile

# The manifest_entry schema of a v3 data manifest written by Iceberg 1.10.2's Spark runtime
# for a table partitioned by (bucket(4, id), days(ts)), copied from such a file's header.
_MAP = '{{"type":"array","items":{{"type":"record","name":"k{k}_v{v}","fields":[{{"name":"key","type":"int","field-id":{k}}},{{"name":"value","type":"{t}","field-id":{v}}}]}},"logicalType":"map"}}'


def _opt(name: str, type_: str, fid: int) -> str:
    return f'{{"name":"{name}","type":["null",{type_}],"default":null,"field-id":{fid}}}'


SCHEMA = json.loads(
    '{"type":"record","name":"manifest_entry","fields":['
    '{"name":"status","type":"int","field-id":0},'
    + _opt("snapshot_id", '"long"', 1)
    + ","
    + _opt("sequence_number", '"long"', 3)
    + ","
    + _opt("file_sequence_number", '"long"', 4)
    + ',{"name":"data_file","type":{"type":"record","name":"r2","fields":['
    '{"name":"content","type":"int","field-id":134},'
    '{"name":"file_path","type":"string","field-id":100},'
    '{"name":"file_format","type":"string","field-id":101},'
    '{"name":"partition","type":{"type":"record","name":"r102","fields":['
    + _opt("id_bucket", '"int"', 1000)
    + ","
    + _opt("ts_day", '{"type":"int","logicalType":"date"}', 1001)
    + ']},"field-id":102},'
    '{"name":"record_count","type":"long","field-id":103},'
    '{"name":"file_size_in_bytes","type":"long","field-id":104},'
    + ",".join(
        _opt(name, _MAP.format(k=k, v=k + 1, t=t), fid)
        for name, k, t, fid in (
            ("column_sizes", 117, "long", 108),
            ("value_counts", 119, "long", 109),
            ("null_value_counts", 121, "long", 110),
            ("nan_value_counts", 138, "long", 137),
            ("lower_bounds", 126, "bytes", 125),
            ("upper_bounds", 129, "bytes", 128),
        )
    )
    + ","
    + _opt("key_metadata", '"bytes"', 131)
    + ","
    + _opt("split_offsets", '{"type":"array","items":"long","element-id":133}', 132)
    + ","
    + _opt("equality_ids", '{"type":"array","items":"int","element-id":136}', 135)
    + ","
    + _opt("sort_order_id", '"int"', 140)
    + ","
    + _opt("first_row_id", '"long"', 142)
    + ","
    + _opt("referenced_data_file", '"string"', 143)
    + ","
    + _opt("content_offset", '"long"', 144)
    + ","
    + _opt("content_size_in_bytes", '"long"', 145)
    + ']},"field-id":2}]}'
)
METADATA = {
    "format-version": "3",
    "partition-spec-id": "0",
    "partition-spec": '[{"name":"id_bucket","transform":"bucket[4]","source-id":1,"field-id":1000},'
    '{"name":"ts_day","transform":"day","source-id":3,"field-id":1001}]',
    "content": "data",
    "schema": '{"type":"struct","schema-id":0,"fields":[]}',
}


def _entries(n: int) -> Any:
    cols = range(1, 9)
    for i in range(n):
        yield {
            "status": 1,
            "snapshot_id": None,
            "sequence_number": None,
            "file_sequence_number": None,
            "data_file": {
                "content": 0,
                "file_path": f"s3://bucket/wh/db/t/data/id_bucket={i % 4}/ts_day=2024-05-01/"
                f"00000-{i}-abcdef01-2345-6789-abcd-ef0123456789-0-00001.parquet",
                "file_format": "PARQUET",
                "partition": {"id_bucket": i % 4, "ts_day": 19844 + i % 30},
                "record_count": 1000 + i,
                "file_size_in_bytes": 50_000 + i,
                "column_sizes": [{"key": c, "value": 100 * c + i} for c in cols],
                "value_counts": [{"key": c, "value": 1000 + i} for c in cols],
                "null_value_counts": [{"key": c, "value": i % 7} for c in cols],
                "nan_value_counts": [{"key": c, "value": 0} for c in (5, 6)],
                "lower_bounds": [{"key": c, "value": (i * c).to_bytes(8, "little")} for c in cols],
                "upper_bounds": [{"key": c, "value": (i * c + 99).to_bytes(8, "little")} for c in cols],
                "key_metadata": None,
                "split_offsets": [4],
                "equality_ids": None,
                "sort_order_id": 0,
                "first_row_id": None,
                "referenced_data_file": None,
                "content_offset": None,
                "content_size_in_bytes": None,
            },
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--codec", default="deflate")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench-m0.avro"
        with open(path, "wb") as f:
            fastavro.writer(
                f, fastavro.parse_schema(SCHEMA), _entries(args.entries), codec=args.codec, metadata=METADATA
            )
        manifest = ManifestFile(
            manifest_path=str(path),
            manifest_length=path.stat().st_size,
            partition_spec_id=0,
            content=ManifestContent.DATA,
            sequence_number=5,
            min_sequence_number=5,
            added_snapshot_id=1,
            first_row_id=0,
            format_version=3,
        )
        fileio = ArrowFileIO()
        data = path.read_bytes()
        print(f"{args.entries} entries, codec {args.codec}, {len(data) / 1e6:.1f} MB; best of {args.repeat}")

        def best(fn: Any) -> float:
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            return min(times)

        peer = best(lambda: list(fastavro.reader(io.BytesIO(data))))
        peer_rate = args.entries / peer
        print(f"{'fastavro dicts (peer)':<34} {peer_rate:>12,.0f} entries/s")
        for decoder in available_decoders():
            seconds = best(lambda d=decoder: read_manifest_entries(fileio, manifest, decoder=d))
            rate = args.entries / seconds
            print(f"{'icebook table via ' + decoder:<34} {rate:>12,.0f} entries/s  {rate / peer_rate:5.1f}x")
        # The cost of isolation: the same decode of this trusted file in this process, as icebook did
        # before decoding moved to worker processes (never done with a table's bytes in a kernel).
        layout = manifest_layout(
            header_from_metadata(str(path), dict(check_framing(data, str(path), kind="m").metadata))
        )
        schema = entries_schema(layout.partition_type)
        targets = {n: schema.field(n).type for n in schema.names if n not in INHERITED_FLAGS and n != "spec_id"}
        in_process = best(lambda: manifest_columns(data, layout, targets, ["polars-avro"]))
        isolated = best(lambda: read_manifest_entries(fileio, manifest))
        print(
            f"{'polars-avro in this process':<34} {args.entries / in_process:>12,.0f} entries/s; "
            f"in a worker, checks and inheritance included: {in_process / isolated:.2f}x of that"
        )
        columns = ["status", "snapshot_id", "sequence_number", "file_sequence_number"]
        seconds = best(lambda: read_manifest_entries(fileio, manifest, columns=columns))
        rate = args.entries / seconds
        print(f"{'icebook projection (entry cols)':<34} {rate:>12,.0f} entries/s  {rate / peer_rate:5.1f}x")
        # polars-avro's own options on the same trusted bytes, side by side (raw decode to a DataFrame).
        import polars_avro

        for label, options in (
            ("defaults", {}),
            ("batch_size=1M", {"batch_size": 1 << 20}),
            ("utf8_view", {"utf8_view": True}),
            ("rechunk", {"rechunk": True}),
        ):
            seconds = best(lambda o=options: polars_avro.read_avro(io.BytesIO(data), **o))
            rate = args.entries / seconds
            print(f"{'polars-avro ' + label:<34} {rate:>12,.0f} entries/s  {rate / peer_rate:5.1f}x")
        # Every decoder must give the same entries: the benchmark fails when one does not.
        tables = {d: read_manifest_entries(fileio, manifest, decoder=d) for d in available_decoders()}
        reference = next(iter(tables.values()))
        differ = [d for d, table in tables.items() if not table.equals(reference)]
        print(f"decoders agree: {', '.join(tables)}" if not differ else f"decoders differ: {', '.join(differ)}")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory of this process: {peak:,.0f} MiB")
        if differ:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
