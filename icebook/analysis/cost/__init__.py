"""Where a table's time and bytes go: a read's cost down to row groups (``query_cost``), the table's
bytes by what keeps them (``storage``), and the same filter through three planners (``compare_plans``)."""
