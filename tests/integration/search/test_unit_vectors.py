"""Clause-level vectors on a real node: each chunk's passage units embedded at ingest (a nested ``knn_vector``),
scored by the engine's dense leg, whose inner hits name the units the passage is chosen by."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from opensearchpy import OpenSearch

from ingest.backfill import chunk_text, run_backfill
from ingest.index import unit_spans
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.dsl.build import build_knn_leg
from service.search.service import SearchService
from service.settings import Settings
from tests.support.engine import drop_index_resources, product_settings

pytestmark = pytest.mark.integration

FILLER = ("Ширина коридоров и проходов принимается по расчёту эвакуации с учётом числа людей на этаже, "
          "но не менее значений, указанных в разделе 6. ")
NORM = ("СП 998.1325800.2099 Здания общественные опытные. Правила проектирования\n"
        "4 Помещения здания\n4.1 " + FILLER * 5 + "\n"
        "4.2 В уборных устанавливают не менее одного унитаза и одного умывальника на 50 посетителей.\n"
        "4.3 Отделка стен вестибюля выполняется из негорючих материалов. " + FILLER * 2 + "\n")
PARAPHRASE = "сколько раковин в туалете"  # no word of it is in the document: only meaning leads to 4.2
PUBLIC = Principal.of("t", [])


def ingest(root: Path, settings: Settings, client: OpenSearch, embedder: NavecEmbedder,
           vectors_later: bool = False) -> SearchService:
    report = run_ingest(IngestOptions([root], vectors_later=vectors_later), settings, client, embedder, quiet=True)
    assert not report.failed
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "10000/minute"
    return SearchService(settings, client, embedder)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("units")
    (root / "СП 998.txt").write_text(NORM, encoding="utf-8")
    for i in range(8):  # other documents, none of which names the query's words either
        (root / f"бетон-{i}.txt").write_text(f"Бетонные работы, захватка {i}. Прочность бетона контролируют "
                                             "по ГОСТ 18105. " * 4, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def service(corpus: Path, opensearch_url: str, client: OpenSearch, navec_embedder: NavecEmbedder,
            ) -> Iterator[SearchService]:
    settings = product_settings(opensearch_url)
    settings.embedder.unit_vectors = "auto"  # kept for navec (off by default)
    yield ingest(corpus, settings, client, navec_embedder)
    drop_index_resources(client, settings.index)


def stored_chunks(client: OpenSearch, alias: str) -> list[dict[str, object]]:
    """Every chunk's whole source (asked for in part, the engine leaves a nested vector as a placeholder: 3.6.0)."""
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 100, "query": {"match_all": {}}})
    return [h["_source"] for h in hits["hits"]["hits"]]


def test_every_chunk_is_written_with_a_vector_per_passage_unit(service: SearchService, client: OpenSearch) -> None:
    chunks = stored_chunks(client, service.settings.index.alias)
    assert chunks
    for chunk in chunks:
        units = chunk.get("units")
        assert isinstance(units, list) and units, chunk["text"]
        assert [u["o"] for u in units] == [a for a, _ in unit_spans(str(chunk["text"]))]
        assert all(len(u["embedding"]) == 300 for u in units)


def test_the_dense_leg_names_the_nearest_unit_and_the_passage_is_that_clause(service: SearchService,
                                                                             client: OpenSearch,
                                                                             navec_embedder: NavecEmbedder) -> None:
    vector = [float(v) for v in navec_embedder.embed_query(PARAPHRASE)]
    raw = client.search(index=service.settings.index.alias, body={
        "size": 1, "_source": ["text"], "query": build_knn_leg(vector, 10, units="units")})
    hit = raw["hits"]["hits"][0]
    nearest = hit["inner_hits"]["units"]["hits"]["hits"][0]["_source"]["o"]
    assert hit["_source"]["text"][nearest:].startswith("4.2 В уборных")

    answer = service.search({"query": PARAPHRASE}, PUBLIC)
    first = answer.results[0]
    assert first.designation == "СП 998.1325800.2099"
    passage = first.context_chunks[0]
    assert passage.text.startswith("4.2 В уборных") and passage.clause == "4.2", passage.text[:80]


def test_without_the_engines_unit_scores_the_passage_misses_the_clause(service: SearchService) -> None:
    """The same question with the dense leg on chunk vectors alone: nothing names 4.2, the passage is the chunk's
    opening (what the unit vectors add, shown by taking them away)."""
    service.settings.search.knn_units = "off"
    try:
        passage = service.search({"query": PARAPHRASE}, PUBLIC).results[0].context_chunks[0]
    finally:
        service.settings.search.knn_units = "max"
    assert "4.2 В уборных" not in passage.text


def test_a_backfill_writes_the_units_too(corpus: Path, opensearch_url: str, client: OpenSearch,
                                         navec_embedder: NavecEmbedder) -> None:
    settings = product_settings(opensearch_url)
    settings.embedder.unit_vectors = "auto"
    try:
        later = ingest(corpus, settings, client, navec_embedder, vectors_later=True)
        assert not any(c.get("units") for c in stored_chunks(client, settings.index.alias))
        report = run_backfill(settings, client, navec_embedder, quiet=True)
        assert report.failed == 0
        chunks = stored_chunks(client, settings.index.alias)
        assert all(c.get("units") for c in chunks)
        passage = later.search({"query": PARAPHRASE}, PUBLIC).results[0].context_chunks[0]
        assert passage.text.startswith("4.2 В уборных")
    finally:
        drop_index_resources(client, settings.index)


def test_an_index_without_unit_vectors_is_still_searched_by_its_chunk_vectors(corpus: Path, opensearch_url: str,
                                                                              client: OpenSearch,
                                                                              navec_embedder: NavecEmbedder) -> None:
    settings = product_settings(opensearch_url)
    settings.embedder.unit_vectors = "off"
    try:
        old = ingest(corpus, settings, client, navec_embedder)
        assert not any(c.get("units") for c in stored_chunks(client, settings.index.alias))
        answer = old.search({"query": PARAPHRASE, "search_mode": "semantic"}, PUBLIC)
        assert answer.meta.route_used == "knn"
        assert answer.results and answer.results[0].designation == "СП 998.1325800.2099"
    finally:
        drop_index_resources(client, settings.index)


def test_unit_vectors_switched_on_later_are_added_by_the_backfill_keeping_each_chunks_vector(
        corpus: Path, opensearch_url: str, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    settings = product_settings(opensearch_url)
    settings.embedder.unit_vectors = "off"
    try:
        ingest(corpus, settings, client, navec_embedder)
        before = stored_chunks(client, settings.index.alias)
        settings.embedder.unit_vectors = "on"
        embedded: list[str] = []
        real = navec_embedder.embed_documents

        def recording(texts: list[str]) -> object:
            embedded.extend(texts)
            return real(texts)

        with mock.patch.object(navec_embedder, "embed_documents", side_effect=recording):
            report = run_backfill(settings, client, navec_embedder, quiet=True)
        assert report.failed == 0 and report.embedded == len(before)
        assert embedded and not set(embedded) & {chunk_text(c) for c in before}, "a chunk's own vector was re-made"
        chunks = stored_chunks(client, settings.index.alias)
        assert all(c.get("units") for c in chunks)
        again = run_backfill(settings, client, navec_embedder, quiet=True)
        assert again.embedded == 0, "a second run found chunks without units"
        service = SearchService(settings, client, navec_embedder)
        assert service.search({"query": PARAPHRASE},
                              PUBLIC).results[0].context_chunks[0].text.startswith("4.2 В уборных")
    finally:
        drop_index_resources(client, settings.index)


def test_an_index_built_before_unit_vectors_answers_the_dense_leg_by_chunk_vectors(client: OpenSearch) -> None:
    index = "test-before-units"
    client.indices.create(index=index, body={"settings": {"index": {"knn": True}}, "mappings": {"properties": {
        "embedding": {"type": "knn_vector", "dimension": 3, "method": {"name": "hnsw", "engine": "lucene",
                                                                          "space_type": "cosinesimil"}}}}})
    try:
        client.index(index=index, id="1", body={"embedding": [1.0, 0.0, 0.0]}, refresh=True)
        leg = build_knn_leg([1.0, 0.1, 0.0], 5, units="max")  # no ``units`` mapping here: the nested part is empty
        hits = client.search(index=index, body={"query": leg})["hits"]["hits"]
        assert [h["_id"] for h in hits] == ["1"]
    finally:
        client.indices.delete(index=index)


def test_units_are_off_by_default_and_migrate_drops_them_from_an_index_that_has_them(
        corpus: Path, opensearch_url: str, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    from service.engine.index_admin.maintenance import migrate
    from service.settings import EmbedderSettings

    assert EmbedderSettings().unit_vectors == "off"
    settings = product_settings(opensearch_url)
    settings.embedder.unit_vectors = "on"
    try:
        ingest(corpus, settings, client, navec_embedder)
        assert all(c.get("units") for c in stored_chunks(client, settings.index.alias))
        settings.embedder.unit_vectors = "off"
        _, _, count = migrate(client, settings.index, drop_units=True)
        chunks = stored_chunks(client, settings.index.alias)
        assert count == len(chunks) and not any(c.get("units") for c in chunks)
        assert all(c.get("embedding") for c in chunks), "the chunk vectors stay"
        service = SearchService(settings, client, navec_embedder)
        answer = service.search({"query": PARAPHRASE}, PUBLIC)
        assert answer.meta.route_used == "hybrid" and answer.results[0].designation == "СП 998.1325800.2099"
    finally:
        drop_index_resources(client, settings.index)
