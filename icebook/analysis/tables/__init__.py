"""Metadata tables named and shaped like Spark's: files, entries, manifests, partitions, position deletes, statistics."""
