"""Faults of a long-lived installation on a real node: the disk past its flood-stage watermark, a tripped
circuit breaker, searches while a large ingest runs, and two ingests of one index at once."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from ingest.lease import KIND, lease_body, lease_id
from service.errors import EngineBusy
from service.search import SearchService
from service.security import Principal
from service.settings import IndexSettings, Settings
from tests.support.crash import (
    REPO,
    chunks_per_document,
    ingest_env,
    registry_chunks,
    registry_count,
    run_ingest_cli,
    start_ingest,
    write_corpus,
)
from tests.support.engine import product_settings
from tests.support.load import percentile
from tests.support.net import wait_until

pytestmark = pytest.mark.integration

WATERMARK = "cluster.routing.allocation.disk.watermark"
ANYONE = Principal.of("t", [])


def chunk_index(client: OpenSearch, alias: str) -> str:
    return str(sorted(client.indices.get_alias(name=alias))[-1])


def write_blocked(client: OpenSearch, index: str) -> bool:
    found = client.indices.get_settings(index=index, name="index.blocks.read_only_allow_delete")
    return str(found.get(index, {}).get("settings", {}).get("index", {}).get("blocks", {})
               .get("read_only_allow_delete")) == "true"


def create_blocked(client: OpenSearch) -> bool:
    """Whether the engine blocks creating indexes (it does while every node is past the high watermark)."""
    found = client.cluster.get_settings(flat_settings=True)
    return any(part.get("cluster.blocks.create_index") == "true" for part in found.values())


@pytest.fixture
def flood_stage(client: OpenSearch) -> Iterator[Any]:
    """Forces the node's flood stage through its own config (every watermark above its free space), and
    puts the defaults back afterwards, whatever happened."""
    def force() -> None:
        client.cluster.put_settings(body={"transient": {
            f"{WATERMARK}.low": "1002tb", f"{WATERMARK}.high": "1001tb", f"{WATERMARK}.flood_stage": "1000tb",
            "cluster.info.update.interval": "10s"}})

    def release() -> None:
        client.cluster.put_settings(body={"transient": {f"{WATERMARK}.low": None, f"{WATERMARK}.high": None,
                                                        f"{WATERMARK}.flood_stage": None}})

    try:
        yield force, release
    finally:  # the engine lifts its blocks at its next disk check after space is back (up to a minute)
        release()
        wait_until(lambda: not create_blocked(client), timeout=150, step=2)
        client.cluster.put_settings(body={"transient": {"cluster.info.update.interval": None},
                                          "persistent": {"cluster.blocks.create_index": None}})
        client.indices.put_settings(index="_all", body={"index.blocks.read_only_allow_delete": None})


def test_a_full_disk_stops_the_ingest_with_disk_full_search_goes_on_and_the_rerun_completes(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str, flood_stage: Any) -> None:
    force, release = flood_stage
    docs = write_corpus(tmp_path / "docs", 4, paragraphs=10)
    env = ingest_env(opensearch_url, alias)
    assert run_ingest_cli(docs, env).returncode == 0
    before = registry_chunks(client, f"{alias}-files")
    write_corpus(tmp_path / "more", 6, paragraphs=10)
    for extra in sorted((tmp_path / "more").iterdir())[4:]:
        extra.rename(docs / extra.name)  # two new files for the blocked run

    force()
    index = chunk_index(client, alias)
    assert wait_until(lambda: write_blocked(client, index), timeout=60, step=1), "the engine set no block"
    blocked = run_ingest_cli(docs, env, timeout=300)
    assert blocked.returncode == 2, blocked.stdout[-2000:] + blocked.stderr[-2000:]
    assert "DISK_FULL" in blocked.stderr and "Traceback" not in blocked.stderr
    assert registry_chunks(client, f"{alias}-files") == before, "nothing refused is recorded as indexed"
    service = SearchService(product_settings(opensearch_url, alias), client, None)
    assert service.search({"query": "контроль прочности бетона", "search_mode": "fulltext"}, ANYONE).results

    release()
    assert wait_until(lambda: not write_blocked(client, index) and not create_blocked(client), timeout=150, step=2), \
        "the engine did not lift its blocks"
    rerun = run_ingest_cli(docs, env, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    registered = registry_chunks(client, f"{alias}-files")
    assert len(registered) == 6 and chunks_per_document(client, alias) == registered  # nothing lost or doubled


def test_a_tripped_circuit_breaker_is_engine_busy_with_a_retry_hint(
        client: OpenSearch, corpus_settings: Settings, navec_embedder: Any) -> None:
    settings = corpus_settings.model_copy(deep=True)
    settings.search.cache_ttl_s = 0
    service = SearchService(settings, client, navec_embedder)
    try:
        client.cluster.put_settings(body={"transient": {"indices.breaker.request.limit": "1b"}})
        with pytest.raises(EngineBusy) as busy:
            service.search({"query": "теплоизоляция наружных стен"}, ANYONE)
        assert busy.value.code == "ENGINE_BUSY" and busy.value.details["retry_after_s"] > 0
        assert "breaker" not in busy.value.message.lower() or "memory" in busy.value.message
    finally:
        client.cluster.put_settings(body={"transient": {"indices.breaker.request.limit": None}})
    assert service.search({"query": "теплоизоляция наружных стен"}, ANYONE).results  # and after, it answers


def test_searches_during_a_large_ingest_all_answer_and_never_show_half_a_document(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str, navec_embedder: Any) -> None:
    docs = write_corpus(tmp_path / "docs", 100, paragraphs=20)
    settings = product_settings(opensearch_url, alias)
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "100000/minute"  # one client searching as fast as it can, not an abuser
    running = start_ingest(docs, ingest_env(opensearch_url, alias))
    service = SearchService(settings, client, navec_embedder)
    latencies: list[float] = []
    seen: list[tuple[str, int]] = []
    failures = 0
    errors: list[str] = []
    while running.poll() is None:
        began = time.perf_counter()
        try:
            response = service.search({"query": "контроль прочности бетона", "search_mode": "fulltext",
                                       "limit": 5}, ANYONE)
        except Exception as exc:  # before the index exists, a refusal is expected
            if registry_count(client, alias, done_only=False) > 0:
                failures += 1
                errors.append(repr(exc)[:300])
            time.sleep(0.2)
            continue
        latencies.append((time.perf_counter() - began) * 1000)
        for result in response.results:
            visible = client.count(index=alias, body={"query": {"term": {"doc_id": result.id}}})["count"]
            seen.append((result.id, int(visible)))
    assert running.wait(30) == 0, running.stderr.read() if running.stderr else ""
    final = chunks_per_document(client, alias)
    assert failures == 0 and len(latencies) >= 5, (failures, len(latencies), errors[:3])
    assert all(visible == final[doc] for doc, visible in seen), "a document was seen with only some chunks"
    print(f"searches during ingest: {len(latencies)}, failures 0, p50 {statistics.median(latencies):.0f} ms, "
          f"p95 {percentile(latencies, .95):.0f} ms")


def test_a_second_ingest_of_the_same_index_is_refused_while_the_first_runs(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str) -> None:
    docs = write_corpus(tmp_path / "docs", 30, paragraphs=20)
    env = ingest_env(opensearch_url, alias)
    first = start_ingest(docs, env)
    started = wait_until(lambda: registry_count(client, alias, done_only=False) > 0 or first.poll() is not None,
                         timeout=300)
    assert started and first.poll() is None, first.stderr.read()[-2000:] if first.stderr else "no run started"
    began = time.monotonic()
    second = run_ingest_cli(docs, env, timeout=300)
    assert second.returncode == 2 and "INGEST_RUNNING" in second.stderr, second.stderr[-2000:]
    assert time.monotonic() - began < 60, "refused at once, not after waiting"
    assert first.wait(600) == 0
    registered = registry_chunks(client, f"{alias}-files")
    assert len(registered) == 30 and chunks_per_document(client, alias) == registered  # nothing doubled
    assert run_ingest_cli(docs, env).returncode == 0, "the lease is released at the end of a run"


def test_shards_of_one_run_proceed_together_but_a_whole_run_waits_for_them(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str) -> None:
    docs = write_corpus(tmp_path / "docs", 24, paragraphs=10)
    env = ingest_env(opensearch_url, alias)
    shards = [subprocess.Popen([sys.executable, "-m", "service.cli", "ingest", str(docs), "--shard", f"{k}/2"],
                               cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for k in (1, 2)]
    assert all(p.wait(600) == 0 for p in shards), [p.stderr.read() for p in shards if p.stderr]
    assert len(registry_chunks(client, f"{alias}-files")) == 24


def test_a_lease_whose_holder_died_is_taken_over_once_expired(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str) -> None:
    docs = write_corpus(tmp_path / "docs", 2, paragraphs=5)
    env = ingest_env(opensearch_url, alias)
    assert run_ingest_cli(docs, env).returncode == 0  # creates the index and its meta index
    meta = IndexSettings(alias=alias).meta_index
    client.index(index=meta, id=lease_id("all"), refresh=True, body=lease_body("all", "gone:1:dead", ttl_s=-5))
    taken = run_ingest_cli(docs, env)
    assert taken.returncode == 0, taken.stderr[-2000:]
    client.index(index=meta, id=lease_id("all"), refresh=True, body=lease_body("all", "alive:2:live", ttl_s=600))
    refused = run_ingest_cli(docs, env)
    assert refused.returncode == 2 and "alive:2:live" in refused.stderr
    client.delete(index=meta, id=lease_id("all"), refresh=True)
    assert client.search(index=meta, body={"query": {"term": {"kind": KIND}}})["hits"]["total"]["value"] == 0
