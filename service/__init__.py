"""StroiDok search: the search side (engine, index, query service, MCP server). Never imports ``ingest``."""
