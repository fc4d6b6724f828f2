"""Manifest decoding speed: the decoders side by side on the same manifests, each in a fresh process.

Decodes either a synthetic manifest (default 100k entries, 8 columns of stats each, the exact
manifest_entry Avro schema Iceberg's Spark runtime writes: v3, partitioned by bucket + day) or, with
``--table``, every manifest of a table's current snapshot (``benchmarks/synthetic_table.py``'s 500,000-file
table: 200 manifests of 2,500 entries), with:

* fastavro (records as dicts: the peer every ratio is against);
* polars-avro with its options: defaults, a projection (the entry fields only), ``batch_size``, ``utf8_view``,
  ``rechunk``, every manifest in one call, the blocks inflated first by zlib (``avro_header.inflated``), and
  its reader called without its polars frame after that inflate (what icebook's workers run:
  ``avro_decode.read_polars_avro``);
* DuckDB's ``read_avro`` (the ``avro`` extension: DuckDB downloads it from its own site, which may not be
  reachable; the output says so);
* icebook's whole path: ``read_manifest_entries`` (a worker process, the checks, inheritance), and the
  worker's task run in this process (``manifest_columns``).

Each measurement runs in its own process (``--measure``), so its peak memory is its own. Prints entries/s,
the ratio to fastavro and the peak memory; then checks that every icebook decoder gives the same entries
(exit status 1 if not).

    python benchmarks/avro_decode.py [--entries 100000] [--codec deflate] [--repeat 3] [--table DIR [--manifests N]]
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import subprocess
import sys
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


# ------------------------------------------------------------------ one measurement (a child process)

ENTRY_FIELDS = ["status", "snapshot_id", "sequence_number", "file_sequence_number"]


def _polars_avro(datas: list[bytes], **options: Any) -> int:
    import polars_avro

    return sum(polars_avro.read_avro(io.BytesIO(d), **options).height for d in datas)


def _polars_avro_inflated(datas: list[bytes]) -> int:
    from icebook.io.avro_header import inflated

    return _polars_avro([inflated(d, check_framing(d, "m", kind="manifest"), "m", kind="manifest") for d in datas])


def _polars_avro_reader(datas: list[bytes]) -> int:
    """polars-avro's reader without its polars frame, after zlib's inflate: what icebook's workers run."""
    from icebook.io.avro_decode import read_polars_avro
    from icebook.io.avro_header import inflated

    total = 0
    for d in datas:
        stored = inflated(d, check_framing(d, "m", kind="manifest"), "m", kind="manifest")
        total += read_polars_avro(stored, None).num_rows
    return total


def _polars_avro_one_call(datas: list[bytes]) -> int:
    import polars_avro

    return int(polars_avro.read_avro([io.BytesIO(d) for d in datas]).height)


def _fastavro(datas: list[bytes]) -> int:
    return sum(len(list(fastavro.reader(io.BytesIO(d)))) for d in datas)


def _duckdb(paths: list[str]) -> int:
    import duckdb

    con = duckdb.connect()
    try:
        con.execute("LOAD avro")
    except duckdb.Error:
        con.execute("INSTALL avro FROM community")
        con.execute("LOAD avro")
    listing = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
    return int(con.execute(f"SELECT count(*) FROM (SELECT * FROM read_avro([{listing}]))").fetchone()[0])


def _icebook(manifests: list[ManifestFile]) -> int:
    fileio = ArrowFileIO()
    return sum(read_manifest_entries(fileio, m).num_rows for m in manifests)


def _icebook_in_process(datas: list[bytes]) -> int:
    total = 0
    for d in datas:
        layout = manifest_layout(header_from_metadata("m", dict(check_framing(d, "m", kind="m").metadata)))
        schema = entries_schema(layout.partition_type)
        targets = {n: schema.field(n).type for n in schema.names if n not in INHERITED_FLAGS and n != "spec_id"}
        _, ipc, _ = manifest_columns(d, layout, targets, ["polars-avro"])
        total += import_ipc_rows(ipc)
    return total


def import_ipc_rows(ipc: Any) -> int:
    import pyarrow as pa

    return int(pa.ipc.open_stream(pa.py_buffer(ipc)).read_all().num_rows)


MEASURES: dict[str, str] = {
    "fastavro": "fastavro records (peer)",
    "polars-avro": "polars-avro defaults",
    "polars-avro-entry-fields": "polars-avro projection: entry fields",
    "polars-avro-batch-1M": "polars-avro batch_size=1M",
    "polars-avro-utf8-view": "polars-avro utf8_view",
    "polars-avro-rechunk": "polars-avro rechunk",
    "polars-avro-one-call": "polars-avro every manifest, one call",
    "polars-avro-inflated": "polars-avro after zlib inflate",
    "polars-avro-reader": "polars-avro's reader, Arrow batches, after zlib inflate (icebook)",
    "duckdb": "DuckDB read_avro",
    "icebook": "icebook read_manifest_entries (worker)",
    "icebook-in-process": "icebook worker task, in this process",
}


def measure(name: str, spec: dict[str, Any], repeat: int) -> dict[str, Any]:
    """Decode the manifests of ``spec`` with ``name`` ``repeat`` times in this process: the best time, the
    entries decoded and this process's peak memory (its inputs and imports included)."""
    paths = spec["paths"]
    datas = [Path(p).read_bytes() for p in paths]
    manifests = [ManifestFile(**m) for m in spec["manifests"]]
    work = {
        "fastavro": lambda: _fastavro(datas),
        "polars-avro": lambda: _polars_avro(datas),
        "polars-avro-entry-fields": lambda: _polars_avro(datas, columns=ENTRY_FIELDS),
        "polars-avro-batch-1M": lambda: _polars_avro(datas, batch_size=1 << 20),
        "polars-avro-utf8-view": lambda: _polars_avro(datas, utf8_view=True),
        "polars-avro-rechunk": lambda: _polars_avro(datas, rechunk=True),
        "polars-avro-one-call": lambda: _polars_avro_one_call(datas),
        "polars-avro-inflated": lambda: _polars_avro_inflated(datas),
        "polars-avro-reader": lambda: _polars_avro_reader(datas),
        "duckdb": lambda: _duckdb(paths),
        "icebook": lambda: _icebook(manifests),
        "icebook-in-process": lambda: _icebook_in_process(datas),
    }[name]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        work()  # once untimed: imports, a worker's start, DuckDB's extension
        entries, best = 0, float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            entries = work()
            best = min(best, time.perf_counter() - started)
    except Exception as exc:
        return {"note": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"entries": entries, "seconds": best, "peak_mib": peak / 1024, "inputs_mib": before / 1024}


def _in_child(name: str, spec_file: Path, repeat: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--measure", name, "--spec", str(spec_file), "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"note": f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1][:160]}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


# ------------------------------------------------------------------ the comparison


def _synthetic_manifest(folder: Path, entries: int, codec: str) -> dict[str, Any]:
    path = folder / "bench-m0.avro"
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(SCHEMA), _entries(entries), codec=codec, metadata=METADATA)
    manifest = {
        "manifest_path": str(path),
        "manifest_length": path.stat().st_size,
        "partition_spec_id": 0,
        "content": int(ManifestContent.DATA),
        "sequence_number": 5,
        "min_sequence_number": 5,
        "added_snapshot_id": 1,
        "first_row_id": 0,
        "format_version": 3,
    }
    return {"paths": [str(path)], "manifests": [manifest]}


def _table_manifests(location: str, most: int) -> dict[str, Any]:
    import dataclasses

    import icebook

    t = icebook.open(location)
    snapshot = t.metadata.current_snapshot()
    listed = t.store.manifest_list(snapshot) if snapshot is not None else ()
    listed = listed[:most] if most else listed
    manifests = []
    for m in listed:
        fields = {f.name: getattr(m, f.name) for f in dataclasses.fields(m) if f.init}
        fields["content"] = int(m.content) if m.content is not None else None
        manifests.append({k: v for k, v in fields.items() if v is None or isinstance(v, (int, str))})
    return {"paths": [m.manifest_path.removeprefix("file://") for m in listed], "manifests": manifests}


def _agree(spec: dict[str, Any]) -> bool:
    """Every icebook decoder gives the same entries for the first manifest."""
    fileio = ArrowFileIO()
    manifest = ManifestFile(**spec["manifests"][0])
    tables = {d: read_manifest_entries(fileio, manifest, decoder=d) for d in available_decoders()}
    reference = next(iter(tables.values()))
    differ = [d for d, table in tables.items() if not table.equals(reference)]
    print(f"decoders agree: {', '.join(tables)}" if not differ else f"decoders differ: {', '.join(differ)}")
    return not differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--codec", default="deflate")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--table", help="decode the manifests of this table's current snapshot instead")
    parser.add_argument("--manifests", type=int, default=0, help="with --table: only the first N (0: all)")
    parser.add_argument("--measure", choices=list(MEASURES), help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, json.loads(Path(args.spec).read_text()), args.repeat)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        spec = (
            _table_manifests(args.table, args.manifests)
            if args.table
            else _synthetic_manifest(Path(tmp), args.entries, args.codec)
        )
        spec_file = Path(tmp) / "spec.json"
        spec_file.write_text(json.dumps(spec))
        size = sum(Path(p).stat().st_size for p in spec["paths"])
        source = args.table or f"a synthetic manifest, codec {args.codec}"
        print(
            f"{len(spec['paths'])} manifests ({size / 1e6:.1f} MB) of {source}; best of {args.repeat}, each in a fresh process"
        )
        print(f"{'decoder':<44}{'entries':>10}{'entries/s':>12}{'/fastavro':>10}{'peak MiB':>10}  note")
        peer_rate = None
        for name, label in MEASURES.items():
            if name == "polars-avro-one-call" and len(spec["paths"]) < 2:
                continue
            r = _in_child(name, spec_file, args.repeat)
            if "note" in r:
                reason = r["note"]
                if name == "duckdb":
                    reason = f"not measured: {reason}"
                print(f"{label:<44}{'-':>10}{'-':>12}{'-':>10}{'-':>10}  {reason}")
                continue
            rate = r["entries"] / r["seconds"] if r["seconds"] else 0.0
            peer_rate = rate if name == "fastavro" else peer_rate
            ratio = f"{rate / peer_rate:.1f}x" if peer_rate else "-"
            print(
                f"{label:<44}{r['entries']:>10,}{rate:>12,.0f}{ratio:>10}{r['peak_mib']:>10,.0f}"
                f"  {r['inputs_mib']:,.0f} MiB before decoding"
            )
        if not _agree(spec):
            raise SystemExit(1)


if __name__ == "__main__":
    main()
