"""``stroidok stats``: a scripted session of searches, openings and errors, reported exactly from the query log;
callers of other access groups left out; entries past the retention deleted."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.engine.index_admin.apply import apply_all
from service.errors import InvalidQuery, NotFound
from service.search.service import SearchService
from service.settings import Settings
from service.usage.stats import prune_log
from tests.support.documents import TOPICS
from tests.support.servers import server_env

pytestmark = pytest.mark.integration


def stats_cli(opensearch_url: str, settings: Settings, group: str, *args: str) -> dict[str, Any]:
    """``stroidok stats --json`` as an operator of ``group`` runs it."""
    env = {**server_env(settings.index.alias, opensearch_url), "STROIDOK_SERVER_GROUPS": json.dumps([group])}
    done = subprocess.run([sys.executable, "-m", "service.cli", "stats", "--json", *args], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def logged(service: SearchService, client: OpenSearch) -> None:
    assert service.log.flush(10)
    client.indices.refresh(index=service.settings.index.queries_index)


@pytest.fixture
def service(settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder, tmp_path: Path) -> SearchService:
    """Six topics in an index (and a query log) of this test's own."""
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in TOPICS.items():
        (root / f"{name}.txt").write_text(f"{text}\n\n" * 3, encoding="utf-8")
    run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    settings.search.cache_ttl_s, settings.search.rate_limit = 0, "10000/minute"
    return SearchService(settings, client, navec_embedder)


def test_a_scripted_session_is_reported_exactly(service: SearchService, client: OpenSearch, opensearch_url: str,
                                                settings: Settings) -> None:
    group = f"stats-{uuid.uuid4().hex[:8]}"
    agent, other = Principal.of("agent", [group]), Principal.of("other", [group])
    first = service.search({"query": "бетон"}, agent, "claude-1")
    service.get_document(first.results[0].id, agent, "claude-1")  # rank 1 of the first search
    second = service.search({"query": "эвакуационный выход", "queries": ["ширина выхода"], "limit": 5},
                            agent, "claude-1")
    service.get_document(f"{second.results[2].id}:0", agent, "claude-1")  # a chunk of rank 3
    service.search({"query": "zzqx нетакогослова", "search_mode": "fulltext"}, agent, "claude-1")  # no results
    service.search({"query": "zzqx нетакогослова", "search_mode": "fulltext"}, other, "claude-2")  # no results
    service.get_document(first.results[1].id, other, "claude-2")  # another client: its own searches only
    with pytest.raises(InvalidQuery):
        service.search({"query": ""}, agent, "claude-1")
    with pytest.raises(NotFound):
        service.get_document("0" * 20, agent, "claude-1")
    service.search({"query": "бетон"}, Principal.of("outsider", ["elsewhere"]), "claude-3")  # not this group
    logged(service, client)

    stats = stats_cli(opensearch_url, settings, group, "--since", "1h")
    assert stats["calls"] == 9
    assert {name: tool["calls"] for name, tool in stats["tools"].items()} == {"search_documents": 5,
                                                                              "get_document": 4}
    assert stats["errors"] == {"INVALID_QUERY": 1, "NOT_FOUND": 1}
    assert stats["clients"] == {"claude-1": 7, "claude-2": 2}
    assert stats["searches"] == 4  # successful ones
    assert stats["top_queries"] == {"zzqx нетакогослова": 2, "бетон": 1, "эвакуационный выход": 1}
    assert stats["empty_searches"] == 2 and stats["empty_queries"] == {"zzqx нетакогослова": 2}
    assert stats["filters"] == {"queries": 1}
    assert stats["modes"] == {"hybrid": 2, "fulltext": 2}
    assert stats["followed_searches"] == 2 and stats["followed_share"] == 0.5
    assert stats["opened_ranks"] == {"1": 1, "3": 1}
    times = stats["tools"]["search_documents"]
    assert 0 < times["p50_ms"] <= times["p95_ms"] <= times["max_ms"]
    assert 0 < times["engine_share"] < 1


def test_entries_past_the_retention_are_deleted(client: OpenSearch, settings: Settings, opensearch_url: str) -> None:
    apply_all(client, settings.index)
    index = settings.index.queries_index
    group = f"retention-{uuid.uuid4().hex[:8]}"
    now = datetime.now(UTC)
    for days in (1, 100, 200):
        client.index(index=index, body={"timestamp": (now - timedelta(days=days)).isoformat(), "tool": "get_document",
                                        "groups": [group], "status": "ok", "total_ms": 1.0})
    client.indices.refresh(index=index)
    assert stats_cli(opensearch_url, settings, group, "--since", "365d")["calls"] == 3
    assert prune_log(client, index, 90) == 2
    assert stats_cli(opensearch_url, settings, group, "--since", "365d")["calls"] == 1


def test_the_log_writer_prunes_as_it_starts(client: OpenSearch, settings: Settings) -> None:
    from service.usage.querylog import QueryLog

    apply_all(client, settings.index)
    index = settings.index.queries_index
    old = {"timestamp": (datetime.now(UTC) - timedelta(days=40)).isoformat(), "tool": "get_document",
           "groups": ["writer-test"], "status": "ok"}
    client.index(index=index, body=old, refresh=True)
    log = QueryLog(client, index, interval_s=0.05, retention_days=30)
    log.record({"tool": "list_sources", "groups": ["writer-test"], "status": "ok"})
    assert log.flush(10)
    client.indices.refresh(index=index)
    kept = client.search(index=index, body={"query": {"term": {"groups": "writer-test"}}})["hits"]["hits"]
    assert [hit["_source"]["tool"] for hit in kept] == ["list_sources"]
