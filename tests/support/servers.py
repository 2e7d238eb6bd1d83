"""The product's MCP server as a user starts it, in a child process: its environment and its HTTP form."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.documents import REPO
from tests.support.net import free_port, port_open

#: what benchmarks add to a server's environment: every call computed (no cache), none rate-limited
UNCACHED_UNLIMITED = {"STROIDOK_SEARCH_CACHE_TTL_S": "0", "STROIDOK_SEARCH_RATE_LIMIT": "100000000/minute"}


def server_env(alias: str, opensearch_url: str | None = None, **extra: str) -> dict[str, str]:
    """This process's environment for a server of ``alias``: against ``opensearch_url`` with no other
    ``STROIDOK_`` setting inherited (tests), or against the configured engine with no inherited search
    settings (benchmarks); ``extra`` on top."""
    drop = "STROIDOK_" if opensearch_url else "STROIDOK_SEARCH_"
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update({"STROIDOK_INDEX_ALIAS": alias, "DO_NOT_TRACK": "1", **extra})
    if opensearch_url:
        env["OPENSEARCH_URL"] = opensearch_url
    return env


@contextmanager
def http_server(env: dict[str, str], port: int | None = None, workers: int = 1,
                standin: list[str] | None = None, timeout_s: float = 90,
                log_path: Path | None = None) -> Iterator[tuple[str, int]]:
    """``stroidok serve --http`` (or, with ``standin``, ``benchmarks.standin_server`` with those arguments) on
    ``port`` (a free one by default): its MCP URL and pid. Its stderr goes to a file (a pipe nobody reads
    fills up and blocks a busy server; ``log_path`` keeps it) and is shown if it dies before it listens."""
    port = port or free_port()
    log = log_path.open("w+b") if log_path else tempfile.TemporaryFile()  # noqa: SIM115 — closed below
    command = (["-m", "benchmarks.standin_server", "--port", str(port), *standin] if standin is not None else
               ["-m", "service.cli", "serve", "--http", str(port), "--workers", str(workers)])
    process = subprocess.Popen([sys.executable, *command], env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + timeout_s
        while not port_open(port):
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError(log.read().decode(errors="replace")[-3000:])
            time.sleep(0.3)
        time.sleep(1.0 if workers > 1 else 0)  # every worker up
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        process.terminate()
        process.wait(30)
        log.close()


def error_of(result: Any) -> dict[str, Any]:
    """The product's error object of a failed tool call (``isError`` and the JSON in its text)."""
    assert result.is_error
    text: str = result.content[0].text
    parsed: dict[str, Any] = json.loads(text[text.index("{"):])
    return parsed
