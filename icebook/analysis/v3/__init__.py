"""Format-version 3 structures as frozen results: deletion vectors, row lineage, default values,
variant shredding and geo bounds (``Table.v3``; each section also stands alone)."""
