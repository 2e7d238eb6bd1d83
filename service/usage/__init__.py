"""The operator's view of use: the query log (``querylog``), what agents opened after a search (``feedback``),
and the statistics computed from both by the engine's aggregations (``stats``)."""
