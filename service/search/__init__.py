"""The search: ``service`` (SearchService: plan, run, answer), ``query`` (the request's contract, the engine's
request bodies, passages and their ranking), ``documents`` (lookups by id), ``render`` (answers for people),
``designations`` (the grammar of normative designations), ``vectors`` (which embedder queries need)."""
