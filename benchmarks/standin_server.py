"""The product's MCP HTTP server with a stand-in search service, for ``benchmarks/concurrency.py --standin-ms``.

The server is the one ``stroidok serve --http`` runs (same app, guards, tool wrapper and uvicorn options); only
the service behind the tool is replaced by one that waits ``--wait-ms`` (as for the engine) and answers a stored
answer of the real service. Its CPU per call is what the MCP SDK, HTTP and our tool wrapper cost without any
search: the floor under the server's share of a call. A diagnostic, never a result of the product.

    .venv/bin/python -m benchmarks.standin_server --answer answer.json --port 8811 --wait-ms 40
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import uvicorn

from service.search.answer.models import SearchResponse
from service.server.http import http_app, uvicorn_options
from service.server.tools import build_server
from service.settings import Settings


class StandInLog:
    """The query log's interface, writing nothing."""

    def flush(self, timeout_s: float) -> None:
        """Nothing is queued."""


class StandInService:
    """Answers every search with one stored answer after a fixed wait."""

    def __init__(self, answer: SearchResponse, wait_s: float) -> None:
        self.answer, self.wait_s, self.log = answer, wait_s, StandInLog()

    def search(self, arguments: dict[str, Any], principal: Any, client_id: str | None = None) -> SearchResponse:
        time.sleep(self.wait_s)
        return self.answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answer", type=Path, required=True, help="A search answer of the real service (JSON).")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--wait-ms", type=float, default=40.0)
    args = parser.parse_args()
    settings = Settings()
    answer = SearchResponse.model_validate_json(args.answer.read_text(encoding="utf-8"))
    service: Any = StandInService(answer, args.wait_ms / 1000)
    app = http_app(build_server(settings, service=service), settings.server)
    uvicorn.Server(uvicorn.Config(app, **uvicorn_options(settings.server, args.port))).run()


if __name__ == "__main__":
    main()
