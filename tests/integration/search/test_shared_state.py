"""Two server processes, one Redis: one query cache and one rate limit between them."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import redis
from mcp import Client
from mcp_types import CallToolResult

from service.settings import Settings
from tests.support.net import free_port
from tests.support.servers import error_of, http_server, server_env

pytestmark = pytest.mark.integration


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A real redis-server (Debian's) on a free port, nothing persisted, stopped after the test."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is installed by scripts/install-system-deps.sh (make install)"
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline and process.poll() is None, "redis-server did not start"
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(10)


async def search(url: str, query: str) -> CallToolResult:
    async with Client(url, read_timeout_seconds=120) as client:
        return await client.call_tool("search_documents", {"query": query, "limit": 2})


def test_a_response_cached_by_one_process_is_served_by_the_other(opensearch_url: str, corpus_settings: Settings,
                                                                 redis_url: str) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_REDIS_URL=redis_url)
    with http_server(env, free_port()) as (first, _), http_server(env, free_port()) as (second, _):
        fresh = anyio.run(search, first, "монтажный стык колонн")
        shared = anyio.run(search, second, "монтажный стык колонн")
        other = anyio.run(search, second, "анкерные болты фундамента")

    assert not fresh.is_error and fresh.structured_content["meta"]["cached"] is False
    assert shared.structured_content["meta"]["cached"] is True
    assert [r["id"] for r in shared.structured_content["results"]] == \
        [r["id"] for r in fresh.structured_content["results"]]
    assert other.structured_content["meta"]["cached"] is False
    assert list(redis.Redis.from_url(redis_url).scan_iter("stroidok:response:*"))


def test_two_processes_enforce_one_rate_limit(opensearch_url: str, corpus_settings: Settings, redis_url: str) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_REDIS_URL=redis_url,
                     STROIDOK_SEARCH_RATE_LIMIT="4/minute", STROIDOK_SEARCH_CACHE_TTL_S="0")
    with http_server(env, free_port()) as (first, _), http_server(env, free_port()) as (second, _):
        allowed = [anyio.run(search, url, f"бетон {i}") for i, url in enumerate([first, second, first, second])]
        refused = [anyio.run(search, url, "бетон 9") for url in (first, second)]

    assert not any(r.is_error for r in allowed)
    assert all(error_of(r)["code"] == "RATE_LIMIT" for r in refused)  # each process alone allowed 2 of 4
