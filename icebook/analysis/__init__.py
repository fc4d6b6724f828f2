"""Pure functions from table models (plus a manifest store) to frozen results.

Sub-packages, lowest first (each imports only the root and the ones before it; ``tests/test_layers.py``):
``expr`` (filter expressions: parsing, binding, projection, evaluation), ``store`` (the manifest store,
its cross-checks, column metrics and reachability), ``scan`` (planning and the delete index), ``tables``
(Spark-shaped metadata tables), ``history`` (lineage, diffs, evolution, changes), ``maintenance``
(retention, orphans, compaction and rewrite previews, health). The root keeps what all of them share.
"""
