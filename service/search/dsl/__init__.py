"""The engine's query: pure ``build_*`` functions for every request body (legs, filters, aggregations, lookups)."""
