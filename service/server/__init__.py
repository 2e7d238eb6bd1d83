"""The MCP server: the tools (``tools``), the one place a failure becomes the tool's error object
(``errors``), and the streamable-HTTP transport with its guards (``http``)."""
