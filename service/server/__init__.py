"""The server's door: the MCP tools (``tools``), the one place a failure becomes the tool's error object
(``errors``), the streamable-HTTP transport with its guards (``http``), who is asking and how often they may
(``security``, ``groups``), and the query cache (``cache``)."""
