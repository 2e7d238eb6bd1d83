"""The bytes the engine receives, recorded for two trees side by side: each tree's ``stroidok serve`` (stdio, the
query cache off) answers the same tool calls (searches in every mode and operator, filters, a second page, a call
inside one document, ``get_document`` by id, clause and query, ``list_sources``) with its engine URL pointed at a
recording proxy in front of the engine; every search and lookup request (method, path, body) is compared byte for
byte, but for the engine-side ``timeout`` a call's second request carries: what is left of the call's bound, in
milliseconds, masked. The query log's writes are left out (they carry times and ids), and so are the service's
per-expiry lookups (the index's embedder record, the vector coverage count: they run when their time is up, so
where they fall among a call's requests depends on timing; their kinds are compared).

    git worktree add ../prev <commit>
    .venv/bin/python -m benchmarks.request_bodies --alias norms --previous ../prev
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import os
import re
import sys
import threading
import urllib.request
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from service.engine.gateway import engine_hosts
from service.settings import Settings

REPO = Path(__file__).resolve().parents[1]
#: requests that read the index (the log's and the cache's writes are left out)
READS = ("/_search", "/_msearch", "/_mget", "/_count", "/_doc/")

#: the remaining share of a call's time bound, which differs from run to run
REMAINING = re.compile(rb'"timeout":"\d+ms"')

SEARCHES: list[dict[str, Any]] = [
    {"query": "минимальная высота жилых помещений"},
    {"query": "предел огнестойкости несущих конструкций", "search_mode": "fulltext"},
    {"query": "защитный слой бетона арматуры", "search_mode": "semantic"},
    {"query": "ширина эвакуационного выхода", "operator": "AND", "max_chunks": 5},
    {"query": "\"не менее 2,5 м\" высота", "operator": "AUTO", "limit": 5},
    {"query": "огнезащита стальных конструкций", "operator": "PHRASE"},
    {"query": "бетон марка прочность", "operator": "OR", "page": 2, "document_types": ["txt", "pdf"]},
    {"query": "нагрузки и воздействия", "cites": "СП 20.13330", "current_only": True},
    {"query": "расстояние между зданиями", "threshold": 0.3, "include_context": False},
    {"query": "контроль прочности бетона", "queries": ["испытание контрольных образцов"]},
]


class Recorder(http.server.ThreadingHTTPServer):
    """A proxy in front of the engine that keeps what each client sent, in order."""

    def __init__(self, engine: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.engine, self.lock = engine.rstrip("/"), threading.Lock()
        self.seen: list[tuple[str, str, bytes]] = []


class Handler(http.server.BaseHTTPRequestHandler):
    server: Recorder

    def log_message(self, format: str, *args: Any) -> None:  # stderr stays quiet
        pass

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if any(mark in self.path for mark in READS) and "-queries" not in self.path:
            with self.server.lock:
                self.server.seen.append((self.command, self.path, REMAINING.sub(b'"timeout":"(left)ms"', body)))
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "x-opaque-id")}
        request = urllib.request.Request(self.server.engine + self.path, data=body or None, method=self.command,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, payload, kind = answer.status, answer.read(), answer.headers.get("Content-Type", "")
        except urllib.error.HTTPError as refused:
            status, payload, kind = refused.code, refused.read(), refused.headers.get("Content-Type", "")
        self.send_response(status)
        self.send_header("Content-Type", kind or "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _forward


async def record(tree: Path, alias: str, engine: str) -> list[tuple[str, str, bytes]]:
    """The reads ``tree``'s server sent the engine for the calls, with the ids the first search found."""
    proxy = Recorder(engine)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("STROIDOK_SEARCH_")},
           "STROIDOK_INDEX_ALIAS": alias, "STROIDOK_SEARCH_CACHE_TTL_S": "0",
           "STROIDOK_OPENSEARCH_URL": f"http://127.0.0.1:{proxy.server_address[1]}",
           "STROIDOK_SEARCH_RATE_LIMIT": "100000000/minute", "DO_NOT_TRACK": "1", "PYTHONPATH": str(tree),
           "PYTHONHASHSEED": "0"}  # a set's order (terms of a filter) is the same in both processes
    params = StdioServerParameters(command=sys.executable, args=["-m", "service.cli", "serve"], env=env, cwd=str(tree))
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        first = None
        for arguments in SEARCHES:
            result = await session.call_tool("search_documents", arguments)
            first = first or ((result.structured_content or {}).get("results") or [None])[0]
        if first is None:
            raise SystemExit("no search found a document: is the index empty?")
        for name, arguments in (
                ("search_documents", {"query": "требования к высоте", "path": [first["file_path"]], "max_chunks": 10}),
                ("get_document", {"id": first["id"]}),
                ("get_document", {"id": first["id"], "clause": "5.1"}),
                ("get_document", {"id": first["id"], "query": "требования к высоте"}),
                ("list_sources", {})):
            await session.call_tool(name, arguments)
    proxy.shutdown()
    return proxy.seen


def is_refresh(path: str) -> bool:
    """A read of the service's per-expiry lookups (the index's embedder record, the vector coverage count), which
    run when their time is up, not at a fixed point of a call: every read a tool makes refuses partial results."""
    return "-meta/_doc/" in path or "allow_partial_search_results" not in path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--previous", required=True, help="another tree (git worktree) to compare with")
    args = parser.parse_args()
    engine = engine_hosts(Settings().opensearch.url or "http://127.0.0.1:9200")[0]
    recorded = asyncio.run(record(REPO, args.alias, engine))
    earlier = asyncio.run(record(Path(args.previous).resolve(), args.alias, engine))
    this, previous = ([r for r in rs if not is_refresh(r[1])] for rs in (recorded, earlier))
    same = sum(a == b for a, b in zip(this, previous, strict=False))
    print(f"# python -m benchmarks.request_bodies --alias {args.alias} --previous {args.previous}")
    print(f"the calls' requests this tree: {len(this)}, previous: {len(previous)}, byte-identical in order: {same}")
    for index, (a, b) in enumerate(zip(this, previous, strict=False)):
        if a != b:
            print(f"differs #{index}: {a[0]} {a[1]} ({len(a[2])} B) vs {b[0]} {b[1]} ({len(b[2])} B)")
    print(f"bytes this tree: {sum(len(r[2]) for r in this)}, previous: {sum(len(r[2]) for r in previous)}")
    refreshes = [sorted({(m, path) for m, path, _ in rs if is_refresh(path)}) for rs in (recorded, earlier)]
    print(f"per-expiry lookups (timed, not counted above): this tree {sum(map(is_refresh, (r[1] for r in recorded)))}"
          f", previous {sum(map(is_refresh, (r[1] for r in earlier)))}; the same kinds: {refreshes[0] == refreshes[1]}")
    sys.exit(0 if same == len(this) == len(previous) else 1)


if __name__ == "__main__":
    main()
