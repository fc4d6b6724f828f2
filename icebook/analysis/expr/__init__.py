"""Filter expressions: the nodes, their parser and binding, inclusive projection onto partition specs, and evaluation against partition values, summaries, column stats and rows."""
