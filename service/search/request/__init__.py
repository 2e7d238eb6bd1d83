"""The request: each tool's parameters (one contract for MCP, CLI and HTTP), the query's parse, paging."""
