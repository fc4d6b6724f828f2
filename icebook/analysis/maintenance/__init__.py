"""Maintenance previews of Spark's procedures (retention, orphans, compaction, rewrites), the health report, and before/after diffs."""
