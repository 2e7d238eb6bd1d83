"""A real three-node cluster (``engine up --nodes 3``) loses a node: queries keep answering, chunks stay,
an ingest cut by the loss resumes without indexing anything twice."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from ingest.discover import document_id
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.engine.gateway import build_client
from service.engine.index_admin.apply import drop_all
from service.engine.launcher.process import EngineCluster, EngineProcess, port_is_free, running_pid
from service.errors import StroidokError
from service.search.service import SearchService
from service.settings import EmbedderSettings, EngineSettings
from tests.support.crash import REPO, chunks_per_document, ingest_env, registry_chunks, registry_count, wait_until
from tests.support.engine import product_settings

pytestmark = pytest.mark.integration

NODES = 3
TOPICS = ["бетон", "арматура", "сварка", "кровля", "фундамент", "вентиляция", "отопление", "пожарная безопасность",
          "эвакуационные выходы", "гидроизоляция", "кирпичная кладка", "металлоконструкции"]
QUESTIONS = ["прочность бетона на сжатие", "сварка арматуры", "ширина эвакуационных выходов", "гидроизоляция кровли",
             "требования к фундаментам", "вентиляция и отопление", "кирпичная кладка зимой"]


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free loopback ports."""
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(20000, 60000 - count)
        if all(port_is_free(base + i) for i in range(count)):
            return base
    raise AssertionError("no run of free ports")


def write_archive(root: Path, count: int, start: int = 0) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(start, start + count):
        topic, other = TOPICS[i % len(TOPICS)], TOPICS[(i * 7 + 3) % len(TOPICS)]
        body = "".join(f"Пункт {i}.{n}. Требования: {topic} и {other}, документ {i}, раздел {n}. Контроль качества "
                       f"работ, приемка, допуски и испытания по разделу {n}.\n\n" for n in range(40))
        (root / f"doc{i:03d}.txt").write_text(body, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def cluster() -> Iterator[EngineCluster]:
    http = free_ports(NODES)
    transport = free_ports(NODES)
    engine = EngineSettings(http_port=http, transport_port=transport, heap="512m", nodes=NODES)
    made = EngineCluster(engine)
    try:
        made.up()
        yield made
    finally:
        made.down()
        shutil.rmtree(engine.cluster_dir, ignore_errors=True)


def manager_member(cluster: EngineCluster, client: OpenSearch) -> EngineProcess:
    name = next(n["name"] for n in client.cat.nodes(format="json", h="name,cluster_manager")
                if n["cluster_manager"] == "*")
    return next(m for m in cluster.members if f"stroidok-{m.settings.http_port}" == name)


def kill_node(member: EngineProcess) -> None:
    pid = running_pid(member.paths)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: running_pid(member.paths) is None, 30)


def green(client: OpenSearch, nodes: int, timeout_s: int = 300) -> None:
    """Every shard copy assigned on ``nodes`` nodes (a lost node's replicas are rebuilt elsewhere). On two
    crowded cores a replica's allocation can exhaust its 5 retries on a shard lock the dying copy still holds;
    the engine's own remedy (reroute retry_failed) is applied first, as an operator would."""
    client.cluster.reroute(params={"retry_failed": "true"})
    health = client.cluster.health(wait_for_status="green", wait_for_nodes=str(nodes), timeout=f"{timeout_s}s",
                                   params={"request_timeout": timeout_s + 10, "ignore": 408})
    if health["status"] != "green":
        unassigned = [s for s in client.cat.shards(format="json") if s["state"] != "STARTED"]
        explain = client.cluster.allocation_explain(params={"ignore": 400}) if unassigned else {}
        raise AssertionError(f"not green: {health}; {unassigned}; {explain}")
    assert health["number_of_nodes"] == nodes, health


def test_queries_survive_a_node_kill_and_no_chunk_is_lost(cluster: EngineCluster, tmp_path: Path) -> None:
    settings = product_settings(",".join(cluster.urls), "test-cluster")
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "1000000/minute"
    client = build_client(settings)
    embedder = NavecEmbedder(EmbedderSettings())
    report = run_ingest(IngestOptions([write_archive(tmp_path / "archive", 40)]), settings, client, embedder,
                        quiet=True)
    assert report.counts == {"indexed": 40}
    green(client, NODES)
    shards = client.cat.shards(index=f"{settings.index.alias}*", format="json")
    assert {s["prirep"] for s in shards} == {"p", "r"} and all(s["state"] == "STARTED" for s in shards)
    before = chunks_per_document(client, settings.index.alias)

    service = SearchService(settings, client, embedder)
    latencies: list[float] = []
    failures: list[str] = []
    stop = threading.Event()

    def load() -> None:
        i = 0
        while not stop.is_set():
            began = time.perf_counter()
            try:
                response = service.search({"query": QUESTIONS[i % len(QUESTIONS)]}, Principal.of("load", []))
                assert response.results, "a query that always finds something found nothing"
                latencies.append((time.perf_counter() - began) * 1000)
            except (StroidokError, AssertionError) as exc:
                failures.append(repr(exc))
            i += 1

    workers = [threading.Thread(target=load) for _ in range(4)]
    for worker in workers:
        worker.start()
    time.sleep(3)
    answered_before_kill = len(latencies)
    kill_node(manager_member(cluster, client))  # the elected cluster manager: election and promotion at once
    time.sleep(20)
    stop.set()
    for worker in workers:
        worker.join(60)

    assert failures == [], failures[:5]
    assert len(latencies) > answered_before_kill + 20, "queries kept being answered after the kill"
    ordered = sorted(latencies)
    print(f"\n{len(latencies)} queries, 0 failed, p50 {ordered[len(ordered) // 2]:.0f} ms, "
          f"p95 {ordered[int(len(ordered) * 0.95)]:.0f} ms, max {ordered[-1]:.0f} ms across the node kill")
    try:
        green(client, NODES - 1)
        assert chunks_per_document(client, settings.index.alias) == before  # every acknowledged chunk is there
    finally:
        drop_all(client, settings.index)


def test_an_ingest_cut_by_a_node_loss_resumes_without_indexing_twice(cluster: EngineCluster, tmp_path: Path) -> None:
    for member in cluster.members:  # the previous test killed one: bring the cluster back to three
        if running_pid(member.paths) is None:
            member.up()
    urls = ",".join(cluster.urls)
    settings = product_settings(urls, "test-cluster-ingest")
    client = build_client(settings)
    green(client, NODES)
    archive = write_archive(tmp_path / "archive", 60)
    env = ingest_env(urls, settings.index.alias, STROIDOK_INGEST_BATCH_SIZE="20")
    try:
        first = subprocess.Popen([sys.executable, "-m", "service.cli", "ingest", str(archive), "--json"], cwd=REPO,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert wait_until(lambda: registry_count(client, settings.index.alias) >= 10, 300), "ingest did not start"
        victim = next(m for m in cluster.members if m.url != cluster.urls[0])
        kill_node(victim)
        first.communicate(timeout=600)
        # the cluster's health asked of the members still up: a call that met the killed node first failed once
        survivors = ",".join(m.url for m in cluster.members if m is not victim)
        green(build_client(product_settings(survivors, "test-cluster-ingest")), NODES - 1)
        acknowledged = set(registry_chunks(client, settings.index.files_index))
        assert acknowledged, "files written before the kill are registered"

        again = run_ingest(IngestOptions([archive]), settings, client, NavecEmbedder(EmbedderSettings()), quiet=True)
        assert again.counts.get("failed", 0) == 0, again.outcomes
        reindexed = {o.path for o in again.outcomes if o.status == "indexed"}
        assert not {document_id(Path(p)) for p in reindexed} & acknowledged, "a file acknowledged before was redone"
        registry = registry_chunks(client, settings.index.files_index)
        assert len(registry) == 60
        assert chunks_per_document(client, settings.index.alias) == registry  # nothing twice, nothing missing
    finally:
        drop_all(client, settings.index)
