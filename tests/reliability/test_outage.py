"""Engine outage mid-session: every tool answers INDEX_UNAVAILABLE within 2 s (connect timeout, not
the 30 s read timeout), and the same server process answers again within 5 s of the engine being
green, over stdio and over HTTP, with no traceback on stderr."""

from __future__ import annotations

import json
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.embedders.navec import NavecEmbedder
from service.engine.launcher.process import EngineProcess
from tests.support.engine import engine_client, managed_engine_settings, product_settings
from tests.support.net import free_port
from tests.support.servers import http_server, server_env

pytestmark = pytest.mark.integration
CALLS = [("search_documents", {"query": "приемка ростверка"}), ("get_document", {"id": "0" * 20}),
         ("list_sources", {})]


def code_of(result: Any) -> str:
    if not result.is_error:
        return "ok"
    text = result.content[0].text
    return str(json.loads(text[text.index("{"):])["code"])


async def timed_calls(client: Client) -> list[tuple[str, str, float]]:
    out = []
    for name, arguments in CALLS:
        began = time.perf_counter()
        result = await client.call_tool(name, arguments)
        out.append((name, code_of(result), time.perf_counter() - began))
    return out


async def first_success_after(client: Client, limit_s: float) -> float | None:
    began = time.perf_counter()
    while time.perf_counter() - began < limit_s:
        if code_of(await client.call_tool(*CALLS[0])) == "ok":
            return time.perf_counter() - began
        await anyio.sleep(0.2)
    return None


def test_outage_is_reported_fast_and_the_same_servers_recover(tmp_path: Path, navec_embedder: NavecEmbedder) -> None:
    engine = EngineProcess(managed_engine_settings(heap="512m"))
    try:
        url = engine.up().url
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "акт.txt").write_text("Акт приемки бетонных работ по устройству ростверка.",
                                                   encoding="utf-8")
        settings = product_settings(url, f"outage-{uuid.uuid4().hex[:6]}")
        run_ingest(IngestOptions([tmp_path / "docs"]), settings, engine_client(url), navec_embedder,
                   quiet=True)
        env = server_env(settings.index.alias, url)
        port = free_port()
        stdio = StdioServerParameters(command=sys.executable, args=["-m", "service.cli", "serve"], env=env)

        async def scenario() -> dict[str, Any]:
            with http_server(env, port) as (http_url, _):
                async with Client(stdio, read_timeout_seconds=60) as a, Client(http_url, read_timeout_seconds=60) as b:
                    before = [await timed_calls(c) for c in (a, b)]
                    await anyio.to_thread.run_sync(engine.down)
                    down = [await timed_calls(c) for c in (a, b)]
                    await anyio.to_thread.run_sync(engine.up)
                    recovered = [await first_success_after(c, 5.0) for c in (a, b)]
            return {"before": before, "down": down, "recovered": recovered}

        outcome = anyio.run(scenario)
    finally:
        engine.down()
        shutil.rmtree(engine.paths.root, ignore_errors=True)

    for calls in outcome["before"]:
        assert [c for _, c, _ in calls] == ["ok", "NOT_FOUND", "ok"]
    for calls in outcome["down"]:
        assert {c for _, c, _ in calls} == {"INDEX_UNAVAILABLE"}, calls
        assert max(s for _, _, s in calls) <= 2.0, calls
    assert all(r is not None and r <= 5.0 for r in outcome["recovered"]), outcome["recovered"]
