"""Filter expressions: the nodes and the one way to walk them (``nodes``), the string form (``parser``), binding
to a schema (``binding``), inclusive projection onto partition specs (``projection``), evaluation against
partition values, summaries and column stats (``pruning``; column-wise: ``pruning_arrow``) and rows as
Arrow filters (``filter_arrow``)."""
