"""Faults of a long-lived installation on a real node: the disk past its flood-stage watermark, a tripped
circuit breaker, searches while a large ingest runs, and two ingests of one index at once."""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from opensearchpy import OpenSearch

from ingest.backfill import BackfillOptions, run_backfill
from ingest.index import unit_spans
from ingest.lease import KIND, acquire, expires_at, lease_body, lease_id
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.base import Embedder
from service.embedders.navec import NavecEmbedder
from service.engine.gateway import build_client
from service.engine.index_admin.apply import apply_all
from service.engine.index_admin.maintenance import migrate
from service.engine.launcher.process import EngineProcess, running_pid
from service.errors import EngineBusy, IngestRunning, StroidokError
from service.search.service import SearchService
from service.search.vectors import read_coverage
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
from tests.support.faults import (
    blocks_lifted,
    force_flood_stage,
    release_flood_stage,
    reset_disk_faults,
    search_load,
    write_blocked,
)
from tests.support.load import percentile
from tests.support.net import wait_until

pytestmark = pytest.mark.integration

ANYONE = Principal.of("t", [])


def chunk_index(client: OpenSearch, alias: str) -> str:
    return str(sorted(client.indices.get_alias(name=alias))[-1])


@pytest.fixture
def disk_faults(client: OpenSearch) -> Iterator[None]:
    """Whatever the test forces on the disk guard is undone afterwards."""
    try:
        yield
    finally:
        reset_disk_faults(client)


def stroidok_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_a_full_disk_stops_the_ingest_with_disk_full_search_goes_on_and_the_rerun_completes(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str, disk_faults: None) -> None:
    docs = write_corpus(tmp_path / "docs", 4, paragraphs=10)
    env = ingest_env(opensearch_url, alias)
    assert run_ingest_cli(docs, env).returncode == 0
    before = registry_chunks(client, f"{alias}-files")
    write_corpus(tmp_path / "more", 6, paragraphs=10)
    for extra in sorted((tmp_path / "more").iterdir())[4:]:
        extra.rename(docs / extra.name)  # two new files for the blocked run

    force_flood_stage(client)
    index = chunk_index(client, alias)
    assert wait_until(lambda: write_blocked(client, index), timeout=60, step=1), "the engine set no block"
    blocked = run_ingest_cli(docs, env, timeout=300)
    assert blocked.returncode == 2, blocked.stdout[-2000:] + blocked.stderr[-2000:]
    assert "DISK_FULL" in blocked.stderr and "Traceback" not in blocked.stderr
    assert registry_chunks(client, f"{alias}-files") == before, "nothing refused is recorded as indexed"
    service = SearchService(product_settings(opensearch_url, alias), client, None)
    assert service.search({"query": "контроль прочности бетона", "search_mode": "fulltext"}, ANYONE).results
    engine = json.loads(stroidok_cli(["engine", "status", "--json"], env).stdout)
    assert index in engine["disk"]["write_blocked_indexes"] and engine["disk"]["flood_stage"] == "1000tb"
    status = stroidok_cli(["index", "status", "--json"], env)
    assert any("blocked" in problem for problem in json.loads(status.stdout)["problems"])

    release_flood_stage(client)
    assert blocks_lifted(client, index), "the engine did not lift its blocks"
    rerun = run_ingest_cli(docs, env, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    registered = registry_chunks(client, f"{alias}-files")
    assert len(registered) == 6 and chunks_per_document(client, alias) == registered  # nothing lost or doubled


def block_index_creation(client: OpenSearch, on: bool) -> None:
    """What the engine's disk guard sets while every node's disk is full (and lifts at its next disk check).
    Its disk monitor is off meanwhile: with space free it would lift the block at its own next check (after an
    earlier test shortened the interval, within seconds), and the test decides when the block lifts."""
    client.cluster.put_settings(body={
        "persistent": {"cluster.blocks.create_index": True if on else None},
        "transient": {"cluster.routing.allocation.disk.threshold_enabled": False if on else None}})


def test_a_create_index_block_is_waited_out_and_of_two_ingests_one_runs_and_one_is_refused(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str, disk_faults: None) -> None:
    docs = write_corpus(tmp_path / "docs", 120, paragraphs=20)
    env = ingest_env(opensearch_url, alias)
    block_index_creation(client, True)
    runs = [start_ingest(docs, env) for _ in range(2)]
    time.sleep(8)
    gave_up = [run.stderr.read()[-2000:] if run.stderr else "" for run in runs if run.poll() is not None]
    assert not gave_up, f"an ingest gave up while the block was still on: {gave_up}"
    assert not client.indices.get(index=f"{alias}*", allow_no_indices=True, expand_wildcards="all")
    block_index_creation(client, False)  # the engine's next disk check, with space back
    outcomes = sorted((run.wait(900), run.stderr.read() if run.stderr else "") for run in runs)
    assert [code for code, _ in outcomes] == [0, 2], outcomes
    assert "INGEST_RUNNING" in outcomes[1][1] and "Traceback" not in outcomes[1][1]
    registered = registry_chunks(client, f"{alias}-files")
    assert len(registered) == 120 and chunks_per_document(client, alias) == registered  # one writer, nothing doubled


def test_a_create_index_block_that_outlasts_the_wait_is_disk_full_with_advice_and_writes_nothing(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str, disk_faults: None) -> None:
    docs = write_corpus(tmp_path / "docs", 3, paragraphs=5)
    block_index_creation(client, True)
    began = time.monotonic()
    try:
        blocked = run_ingest_cli(docs, ingest_env(opensearch_url, alias, STROIDOK_INDEX_CREATE_BLOCK_WAIT_S="4"), 300)
    finally:
        block_index_creation(client, False)
    assert blocked.returncode == 2 and "DISK_FULL" in blocked.stderr, blocked.stderr[-2000:]
    assert "creating indexes" in " ".join(blocked.stderr.split()) and "Traceback" not in blocked.stderr
    assert 4 <= time.monotonic() - began < 120, "the wait is bounded by the setting"
    assert not client.indices.get(index=f"{alias}*", allow_no_indices=True, expand_wildcards="all")


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
    docs = write_corpus(tmp_path / "docs", 120, paragraphs=20)
    env = ingest_env(opensearch_url, alias)
    first = start_ingest(docs, env)
    meta = IndexSettings(alias=alias).meta_index
    holds = wait_until(lambda: first.poll() is not None or bool(
        client.exists(index=meta, id=lease_id("all"))), timeout=300, step=0.05)
    assert holds and first.poll() is None, first.stderr.read()[-2000:] if first.stderr else "no lease taken"
    began = time.monotonic()
    second = run_ingest_cli(docs, env, timeout=300)
    assert first.poll() is None, "the first run ended before the second was tried: make its corpus larger"
    assert second.returncode == 2 and "INGEST_RUNNING" in second.stderr, second.stderr[-2000:]
    assert time.monotonic() - began < 60, "refused at once, not after waiting"
    assert first.wait(900) == 0
    registered = registry_chunks(client, f"{alias}-files")
    assert len(registered) == 120 and chunks_per_document(client, alias) == registered  # nothing doubled
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
    ended = subprocess.Popen(["true"])  # a process of this host that has ended (and been reaped)
    ended.wait()
    dead_here = f"{socket.gethostname()}:{ended.pid}:x"
    client.index(index=meta, id=lease_id("all"), refresh=True, body=lease_body("all", dead_here, ttl_s=600))
    assert run_ingest_cli(docs, env).returncode == 0, "a holder of this host whose process is gone is not waited for"
    client.index(index=meta, id=lease_id("all"), refresh=True, body=lease_body("all", "alive:2:live", ttl_s=600))
    refused = run_ingest_cli(docs, env)
    assert refused.returncode == 2 and "alive:2:live" in refused.stderr
    client.delete(index=meta, id=lease_id("all"), refresh=True)
    assert client.search(index=meta, body={"query": {"term": {"kind": KIND}}})["hits"]["total"]["value"] == 0


class KillsTheNode:
    """The real embedder; on its ``at``-th batch the engine is killed (``kill -9``), as a node dies mid-backfill."""

    def __init__(self, real: NavecEmbedder, engine: EngineProcess, at: int | None = None) -> None:
        self.real, self.engine, self.at, self.identity = real, engine, at, real.identity
        self.texts: list[str] = []
        self.batches = 0

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        self.batches += 1
        if self.batches == self.at and (pid := running_pid(self.engine.paths)):
            os.kill(pid, signal.SIGKILL)
            wait_until(lambda: running_pid(self.engine.paths) is None, timeout=30)
        vectors: np.ndarray = self.real.embed_documents(texts)
        return vectors

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_backfill_cut_by_a_node_restart_resumes_without_embedding_anything_twice(
        tmp_path: Path, own_engine: EngineProcess, navec_embedder: NavecEmbedder) -> None:
    settings = product_settings(own_engine.url)
    settings.embedder.unit_vectors = "auto"  # navec's units too (off by default): each must be embedded once
    client = build_client(settings)
    docs = write_corpus(tmp_path / "docs", 12, paragraphs=10)
    run_ingest(IngestOptions([docs], vectors_later=True), settings, client, navec_embedder, quiet=True)
    total = read_coverage(client, settings.index.alias).chunks
    killer = KillsTheNode(navec_embedder, own_engine, at=3)
    with pytest.raises(StroidokError):
        run_backfill(settings, client, cast(Embedder, killer), BackfillOptions(batch_size=4, refresh_s=0), quiet=True)
    own_engine.up()
    pending = read_coverage(client, settings.index.alias).pending
    assert 0 < pending < total, (pending, total)
    waiting = [h["_source"]["text"] for h in client.search(index=settings.index.alias, body={
        "size": total, "_source": ["text"], "query": {"term": {"vector_pending": True}}})["hits"]["hits"]]
    resumed = KillsTheNode(navec_embedder, own_engine)
    run_backfill(settings, client, cast(Embedder, resumed), BackfillOptions(batch_size=4), quiet=True)
    after = read_coverage(client, settings.index.alias)
    assert after.pending == 0 and after.chunks == total
    # only what had no vector stored, each chunk and its passage units once: nothing embedded twice
    assert len(resumed.texts) == pending + sum(len(unit_spans(text)) for text in waiting)


def test_index_migrate_under_a_query_load_loses_no_search(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, alias: str, navec_embedder: NavecEmbedder) -> None:
    settings = product_settings(opensearch_url, alias)
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "100000/minute"
    docs = write_corpus(tmp_path / "docs", 20, paragraphs=10)
    run_ingest(IngestOptions([docs]), settings, client, navec_embedder, quiet=True)
    service = SearchService(settings, client, navec_embedder)
    with search_load(lambda: service.search({"query": "контроль прочности бетона"}, ANYONE)) as load:
        time.sleep(1)
        old, new, count = migrate(client, settings.index)
        time.sleep(1)
    assert new != old and count == read_coverage(client, alias).chunks
    assert not load.failures and len(load.latencies) > 10, (load.failures[:3], len(load.latencies))


def test_a_lease_is_renewed_while_its_run_lasts_and_released_at_its_end(
        client: OpenSearch, index_settings: IndexSettings) -> None:
    apply_all(client, index_settings)
    with acquire(client, index_settings, None, ttl_s=1.5) as lease:
        time.sleep(3.5)  # over twice the time to live: only renewals keep it
        held = client.get(index=index_settings.meta_index, id=lease_id("all"))["_source"]
        assert held["holder"] == lease.holder and expires_at(held) > time.time()
        with pytest.raises(IngestRunning):
            acquire(client, index_settings, None)
    assert not client.exists(index=index_settings.meta_index, id=lease_id("all"))
