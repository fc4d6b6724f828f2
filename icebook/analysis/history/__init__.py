"""History: lineage, snapshot diffs, schema and partition evolution, row changes, which commit added a file."""
