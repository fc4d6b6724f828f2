"""Scan planning: the planner, its model, what a plan reads of a manifest, and which delete files apply to which data files."""
