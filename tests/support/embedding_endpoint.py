"""A local OpenAI-compatible ``/v1/embeddings`` endpoint for tests: the answer is a function of the request."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

#: request body and headers → (HTTP status, JSON answer or None for an empty body)
Responder = Callable[[dict[str, Any], Any], tuple[int, dict[str, Any] | None]]


@contextmanager
def embeddings_endpoint(respond: Responder) -> Iterator[str]:
    """Serve ``respond`` on a free loopback port; yields the base URL (``…/v1``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, answer = respond(body, self.headers)
            payload = json.dumps(answer).encode() if answer is not None else b""
            self.send_response(status)
            if answer is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            return None

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
