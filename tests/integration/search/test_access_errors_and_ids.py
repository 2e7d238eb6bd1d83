"""Access control inside the engine, every error code, BM25 fallback, retrieval by id, cache and query log."""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

import numpy as np
import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.base import Embedder
from service.embedders.navec import NavecEmbedder
from service.errors import IndexUnavailable, InvalidQuery, NotFound, RateLimited, RequestRejected, SearchError
from service.search.service import SearchService
from service.settings import Settings
from tests.support.engine import engine_client

pytestmark = pytest.mark.integration

SECRET_QUERY = {"query": "гидрофобизатор кремнийорганический", "search_mode": "fulltext"}


def test_a_document_outside_your_groups_never_appears(service: SearchService, public: Principal,
                                                      legal: Principal) -> None:
    assert service.search(SECRET_QUERY, public).meta.total_results == 0
    assert [r.title for r in service.search(SECRET_QUERY, legal).results] != []


def test_facets_do_not_count_documents_you_may_not_read(service: SearchService, public: Principal,
                                                        legal: Principal) -> None:
    args = {"query": "пожарная безопасность", "search_mode": "fulltext", "limit": 50}
    seen_public = service.search(args, public).meta
    seen_legal = service.search(args, legal).meta
    assert seen_legal.total_results == seen_public.total_results + 1
    assert sum(seen_legal.facets.document_types.values()) == sum(seen_public.facets.document_types.values()) + 1
    assert seen_public.facets.date_distribution.get("2024-03", 0) + 1 == seen_legal.facets.date_distribution["2024-03"]


def test_suggestions_come_only_from_readable_documents(service: SearchService, public: Principal,
                                                       legal: Principal) -> None:
    misspelt = {"query": "гидрофабизатор", "search_mode": "fulltext"}
    assert service.search(misspelt, legal).meta.suggestions.corrected_query == "гидрофобизатор"
    assert service.search(misspelt, public).meta.suggestions.corrected_query is None


def test_get_document_hides_unreadable_documents_as_not_found(service: SearchService, public: Principal,
                                                              legal: Principal) -> None:
    secret = service.search(SECRET_QUERY, legal).results[0]
    assert service.get_document(secret.id, legal).document.id == secret.id
    with pytest.raises(NotFound) as caught:
        service.get_document(secret.id, public)
    assert caught.value.code == "NOT_FOUND"


def test_list_sources_counts_only_readable_documents(service: SearchService, public: Principal,
                                                     legal: Principal) -> None:
    mine, theirs = service.list_sources(public), service.list_sources(legal)
    assert theirs.total_documents == mine.total_documents + 1 == 29
    assert mine.document_types == {"txt": 25, "docx": 1, "xlsx": 1, "pdf": 1}
    assert mine.earliest.startswith("2024-01") and mine.latest.startswith("2025-02")


def test_get_document_by_chunk_id_returns_the_chunk_and_its_neighbours(service: SearchService,
                                                                       public: Principal) -> None:
    service.settings.search.response_budget_chars = 500_000  # every result with its chunks, uncut
    service.settings.search.answer_chars = 500_000
    doc = service.search({"query": "теплоизоляция", "limit": 50, "max_chunks": 10}, public).results

    def index_of(chunk_id: str) -> int:
        return int(chunk_id.rsplit(":", 1)[1])

    longest = max(doc, key=lambda r: max(index_of(c.chunk_id) for c in r.context_chunks))
    middle = longest.context_chunks[0]
    found = service.get_document(middle.chunk_id, public)
    assert found.chunk.chunk_id == middle.chunk_id and found.chunk.chunk_index == index_of(middle.chunk_id)
    assert found.document.id == longest.id and found.document.file_size and found.document.updated_at
    assert {n.chunk_index for n in found.neighbours} <= {index_of(middle.chunk_id) - 1, index_of(middle.chunk_id) + 1}
    by_doc = service.get_document(longest.id, public)
    assert by_doc.chunk.chunk_index == 0


def test_unknown_and_malformed_ids(service: SearchService, public: Principal) -> None:
    with pytest.raises(NotFound):
        service.get_document("0" * 20, public)
    with pytest.raises(NotFound):
        service.get_document("0" * 20 + ":5", public)
    with pytest.raises(InvalidQuery):
        service.get_document("../../etc/passwd", public)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": "   "}, "query"),
        ({"query": "x" * 501}, "query"),
        ({"query": "бетон", "limit": 51}, "limit"),
        ({"query": "бетон", "max_chunks": 0}, "max_chunks"),
        ({"query": "бетон", "queries": ["a"] * 6}, "queries"),
        ({"query": "бетон", "search_mode": "magic"}, "search_mode"),
        ({"query": "бетон", "operator": "XOR"}, "operator"),
        ({"query": "бетон", "threshold": 1.5}, "threshold"),
        ({"query": "бетон", "date_range": {"from": "2025-01-02", "to": "2025-01-01"}}, "date_range"),
        ({"query": "бетон", "page": 30, "limit": 50}, "request"),
        ({"query": "бетон", "unknown": 1}, "unknown"),
    ],
)
def test_bad_input_is_invalid_query_naming_the_field(service: SearchService, public: Principal,
                                                     arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidQuery) as caught:
        service.search(arguments, public)
    assert caught.value.code == "INVALID_QUERY"
    assert any(p["field"].startswith(field) for p in caught.value.details["problems"]), caught.value.details


def test_rate_limit(service: SearchService, public: Principal) -> None:
    service.limiter = type(service.limiter)("3/minute")
    for _ in range(3):
        service.search({"query": "бетон"}, public)
    with pytest.raises(RateLimited) as caught:
        service.search({"query": "бетон"}, public)
    assert caught.value.code == "RATE_LIMIT"
    assert caught.value.details["limit"]


def test_engine_not_listening_is_index_unavailable(corpus_settings: Settings, navec_embedder: NavecEmbedder,
                                                   public: Principal) -> None:
    dead = engine_client("http://127.0.0.1:9", 2)
    with pytest.raises(IndexUnavailable, match="not reachable"):
        SearchService(corpus_settings, dead, None).search({"query": "бетон", "search_mode": "fulltext"}, public)


def test_a_request_the_engine_rejects_is_database_error(corpus_settings: Settings, client: OpenSearch,
                                                        navec_embedder: NavecEmbedder, public: Principal) -> None:
    """An alias over an index not built from the template (file_type is text): aggregations are refused."""
    settings = corpus_settings.model_copy(deep=True)
    settings.index = settings.index.model_copy(update={"alias": f"{corpus_settings.index.alias}-0broken"})
    client.indices.create(index=f"{settings.index.alias}-x", body={
        "mappings": {"properties": {"file_type": {"type": "text"}, "text": {"type": "text"}}},
        "aliases": {settings.index.alias: {}}})
    try:
        apply_all_pipelines(client, settings)
        with pytest.raises(SearchError) as caught:
            SearchService(settings, client, navec_embedder).search({"query": "бетон", "search_mode": "fulltext"},
                                                                   public)
    finally:
        client.indices.delete(index=f"{settings.index.alias}-x")
    assert isinstance(caught.value, RequestRejected) and caught.value.code == "DATABASE_ERROR"
    assert caught.value.details["status"] == 400


def apply_all_pipelines(client: OpenSearch, settings: Settings) -> None:
    from service.engine.index_admin.templates import wanted_pipelines

    for pipeline_id, body in wanted_pipelines(settings.index).items():
        client.search_pipeline.put(id=pipeline_id, body=body)


def test_an_uninitialised_index_is_index_unavailable(corpus_settings: Settings, client: OpenSearch,
                                                     navec_embedder: NavecEmbedder, public: Principal) -> None:
    settings = corpus_settings.model_copy(deep=True)
    settings.index = settings.index.model_copy(update={"alias": "never-initialised"})
    with pytest.raises(IndexUnavailable, match="index init"):
        SearchService(settings, client, navec_embedder).search({"query": "бетон"}, public)


class ZeroEmbedder:
    def __init__(self, real: Any) -> None:
        self.identity = real.identity

    def embed_query(self, text: str) -> np.ndarray:
        return np.zeros(300, dtype=np.float32)

    def load_stats(self, stats: Any) -> None:
        return None


class BrokenEmbedder(ZeroEmbedder):
    def embed_query(self, text: str) -> np.ndarray:
        raise RuntimeError("model server down")


def test_embedder_failure_falls_back_to_bm25_and_says_so(corpus_settings: Settings, client: OpenSearch,
                                                         navec_embedder: NavecEmbedder, public: Principal) -> None:
    service = SearchService(corpus_settings, client, cast(Embedder, BrokenEmbedder(navec_embedder)))
    response = service.search({"query": "контроль прочности бетона"}, public)
    assert response.meta.route_used == "bm25"
    assert "model server down" in response.meta.fallback_reason
    assert "бетон.docx" in [r.file_path.rsplit("/", 1)[-1] for r in response.results]


class ShortVectorEmbedder(ZeroEmbedder):
    """Vectors of the wrong dimension: the engine rejects the k-NN leg."""

    def embed_query(self, text: str) -> np.ndarray:
        return np.ones(299, dtype=np.float32)


def test_hybrid_request_failure_falls_back_to_bm25(corpus_settings: Settings, client: OpenSearch,
                                                   navec_embedder: NavecEmbedder, public: Principal) -> None:
    service = SearchService(corpus_settings, client, cast(Embedder, ShortVectorEmbedder(navec_embedder)))
    response = service.search({"query": "контроль прочности бетона"}, public)
    assert response.meta.route_used == "bm25"
    assert "hybrid request failed" in response.meta.fallback_reason
    assert "бетон.docx" in [r.file_path.rsplit("/", 1)[-1] for r in response.results]


def test_a_query_without_known_words_uses_bm25(corpus_settings: Settings, client: OpenSearch,
                                               navec_embedder: NavecEmbedder, public: Principal) -> None:
    service = SearchService(corpus_settings, client, cast(Embedder, ZeroEmbedder(navec_embedder)))
    response = service.search({"query": "10180-2012"}, public)
    assert response.meta.route_used == "bm25"
    assert [r.file_path.rsplit("/", 1)[-1] for r in response.results] == ["бетон.docx"]


def test_repeated_query_is_served_from_the_cache(corpus_settings: Settings, client: OpenSearch,
                                                 navec_embedder: NavecEmbedder, public: Principal,
                                                 legal: Principal) -> None:
    settings = corpus_settings.model_copy(deep=True)
    settings.search.cache_ttl_s = 300
    service = SearchService(settings, client, navec_embedder)
    first = service.search({"query": "бетон"}, public)
    again = service.search({"query": "бетон"}, public)
    other_groups = service.search({"query": "бетон"}, legal)
    assert not first.meta.cached and again.meta.cached and not other_groups.meta.cached
    assert [r.id for r in again.results] == [r.id for r in first.results]


def test_every_query_is_logged_to_the_query_index(corpus_settings: Settings, client: OpenSearch,
                                                  navec_embedder: NavecEmbedder, public: Principal) -> None:
    service = SearchService(corpus_settings, client, navec_embedder)
    service.search({"query": "журнал запросов бетон"}, public)
    with pytest.raises(InvalidQuery):
        service.search({"query": ""}, public)
    assert service.log.flush()
    index = corpus_settings.index.queries_index
    client.indices.refresh(index=index)
    logged = client.search(index=index, body={"query": {"terms": {"query": ["журнал запросов бетон", ""]}},
                                              "size": 10})["hits"]["hits"]
    by_status = {h["_source"]["status"]: h["_source"] for h in logged}
    assert by_status["ok"]["route_used"] == "hybrid" and by_status["ok"]["principal"] == "tester"
    assert by_status["ok"]["total_ms"] > 0
    assert by_status["error"]["error_code"] == "INVALID_QUERY"


def test_every_tool_call_is_logged_with_its_arguments_refused_ones_included(corpus_settings: Settings,
                                                                            client: OpenSearch,
                                                                            navec_embedder: NavecEmbedder,
                                                                            public: Principal) -> None:
    settings = corpus_settings.model_copy(deep=True)
    settings.search.rate_limit = "1/minute"
    service = SearchService(settings, client, navec_embedder)
    marker = f"журнал-{uuid.uuid4().hex[:8]}"
    found = service.search({"query": "бетон", "folder": marker, "document_types": ["pdf"], "limit": 3}, public,
                           marker)
    service.list_sources(public, marker)
    with pytest.raises(NotFound):
        service.get_document("0" * 20, public, marker)
    with pytest.raises(RateLimited):
        service.search({"query": "бетон"}, public, marker)
    assert service.log.flush()
    index = settings.index.queries_index
    client.indices.refresh(index=index)
    hits = client.search(index=index, body={"query": {"term": {"client": marker}}, "size": 10,
                                            "sort": [{"timestamp": "asc"}]})["hits"]["hits"]
    entries = [h["_source"] for h in hits]
    assert [(e["tool"], e["status"], e["error_code"]) for e in entries] == [
        ("search_documents", "ok", None), ("list_sources", "ok", None), ("get_document", "error", "NOT_FOUND"),
        ("search_documents", "error", "RATE_LIMIT")]
    first = entries[0]
    assert json.loads(first["arguments"]["folder"]) == marker and json.loads(first["arguments"]["limit"]) == 3
    assert first["document_types"] == ["pdf"] and first["total_results"] == found.meta.total_results == 0
    assert entries[2]["arguments"] == {"id": json.dumps("0" * 20)}
