"""search_documents against the real node, over documents ingested by the product's own ingest path."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from service.caller.principal import Principal
from service.errors import InvalidQuery
from service.search.answer.budget import dumped
from service.search.answer.models import SearchResponse
from service.search.service import SearchService
from service.settings import Settings

pytestmark = pytest.mark.integration


def names(response: SearchResponse) -> list[str]:
    return [r.file_path.rsplit("/", 1)[-1] for r in response.results]


@pytest.mark.parametrize(("mode", "route"), [("hybrid", "hybrid"), ("semantic", "knn"), ("fulltext", "bm25")])
def test_each_search_mode_runs_its_route(service: SearchService, public: Principal, mode: str, route: str) -> None:
    response = service.search({"query": "контроль прочности бетона", "search_mode": mode}, public)
    assert response.status == "ok"
    assert response.meta.route_used == route
    assert response.meta.fallback_reason is None
    assert "бетон.docx" in names(response)[:3]
    assert all(0 <= r.relevance_score <= 1 for r in response.results)
    scores = [r.relevance_score for r in response.results]
    assert scores == sorted(scores, reverse=True)


def test_and_requires_every_term_or_accepts_any(service: SearchService, public: Principal) -> None:
    args = {"query": "гидрофобизатор эвакуационных", "search_mode": "fulltext"}
    assert service.search({**args, "operator": "AND"}, public).meta.total_results == 0
    either = service.search({**args, "operator": "OR"}, public)
    assert names(either) == ["пожарная-безопасность.txt"]


def test_quoted_query_is_a_phrase_search(service: SearchService, public: Principal) -> None:
    phrase = service.search({"query": '"монтажный стык"', "search_mode": "fulltext"}, public)
    assert names(phrase) == ["сварка.pdf"]
    reversed_words = service.search({"query": '"стык монтажный"', "search_mode": "fulltext"}, public)
    assert reversed_words.meta.total_results == 0


def test_a_quoted_part_inside_a_longer_query_is_a_phrase(service: SearchService, public: Principal) -> None:
    hit = service.search({"query": 'контроль "сварных швов"', "search_mode": "fulltext"}, public)
    assert names(hit) == ["сварка.pdf"]
    miss = service.search({"query": 'контроль "швов сварных"', "search_mode": "fulltext"}, public)
    assert miss.meta.total_results == 0


def test_document_type_filter(service: SearchService, public: Principal) -> None:
    response = service.search({"query": "бетон", "document_types": ["xlsx", "PDF"], "search_mode": "fulltext"}, public)
    assert {r.file_type for r in response.results} == {"xlsx"}
    assert response.meta.facets.document_types == {"xlsx": 1}
    hybrid = service.search({"query": "бетон", "document_types": ["xlsx", "pdf"], "limit": 50}, public)
    assert {r.file_type for r in hybrid.results} <= {"xlsx", "pdf"}
    assert "смета.xlsx" in names(hybrid)


def test_date_range_filter_is_inclusive(service: SearchService, public: Principal) -> None:
    response = service.search({"query": "бетон", "date_range": {"from": "2024-05-10", "to": "2024-05-10"},
                               "search_mode": "fulltext"}, public)
    assert names(response) == ["бетон.docx"]


def test_source_filter_by_folder_name_and_by_absolute_prefix(service: SearchService, public: Principal,
                                                             search_corpus: tuple[Path, Settings]) -> None:
    root, _ = search_corpus
    by_name = service.search({"query": "бетон", "source_filter": "сметы", "search_mode": "fulltext"}, public)
    assert names(by_name) == ["смета.xlsx"]
    by_prefix = service.search({"query": "бетон", "source_filter": str(root / "нормы"), "search_mode": "fulltext"},
                               public)
    assert names(by_prefix) == ["бетон.docx"]


def updated(service: SearchService, doc_id: str, principal: Principal) -> str:
    """A result's modification date: search answers leave it out, get_document has it."""
    return service.get_document(doc_id, principal).document.updated_at or ""


def test_filters_combine_with_and(service: SearchService, public: Principal) -> None:
    response = service.search({"query": "теплоизоляция стен", "document_types": ["txt"], "source_filter": "утеплители",
                               "search_mode": "fulltext",
                               "date_range": {"from": "2024-03-01", "to": "2024-03-31"}, "limit": 50}, public)
    assert response.meta.total_results == 2
    assert all(updated(service, r.id, public).startswith("2024-03") for r in response.results)


def test_pagination_has_no_duplicates_and_no_gaps(service: SearchService, public: Principal) -> None:
    args = {"query": "теплоизоляция наружных стен", "limit": 7, "search_mode": "fulltext"}
    first = service.search(args, public)
    total = first.meta.total_results
    assert total == 24
    seen, page, response = [], 1, first
    while True:
        seen += [r.id for r in response.results]
        if not response.meta.pagination.has_more:
            break
        page += 1
        response = service.search({**args, "page": page}, public)
    assert len(seen) == len(set(seen)) == total
    everything = service.search({**args, "limit": 50}, public)
    assert [r.id for r in everything.results] == seen


def test_cursor_continues_the_same_query(service: SearchService, public: Principal) -> None:
    args = {"query": "теплоизоляция наружных стен", "limit": 5, "search_mode": "fulltext"}
    first = service.search(args, public)
    second = service.search({**args, "cursor": first.meta.pagination.next_cursor}, public)
    assert second.meta.pagination.page == 2
    assert not {r.id for r in first.results} & {r.id for r in second.results}
    with pytest.raises(InvalidQuery, match="another query"):
        service.search({**args, "query": "бетон", "cursor": first.meta.pagination.next_cursor}, public)


def test_results_are_documents_with_at_most_max_chunks(service: SearchService, public: Principal) -> None:
    service.settings.search.response_budget_chars = 500_000  # every result with its chunks, uncut
    response = service.search({"query": "теплоизоляция толщина утеплителя", "max_chunks": 1, "limit": 30}, public)
    assert len({r.id for r in response.results}) == len(response.results)
    assert all(len(r.context_chunks) == 1 for r in response.results)
    two = service.search({"query": "пожарная безопасность", "max_chunks": 2}, public)
    assert all(1 <= len(r.context_chunks) <= 2 for r in two.results)


def test_context_chunks_carry_text_page_and_ids(service: SearchService, public: Principal) -> None:
    response = service.search({"query": "монтажный стык сварка"}, public)
    chunk = response.results[0].context_chunks[0]
    assert chunk.page_number == 1
    assert chunk.chunk_id.startswith(f"{response.results[0].id}:") and chunk.chunk_index is None
    assert "Монтажный стык" in chunk.text and len(chunk.text) <= service.settings.search.passage_chars
    assert response.results[0].highlights is None  # the passage is the text: nothing repeated
    without = service.search({"query": "монтажный стык сварка", "include_context": False}, public)
    assert without.results[0].context_chunks == []
    assert without.results[0].highlights


def test_highlights_mark_the_matched_words(service: SearchService, public: Principal) -> None:
    response = service.search({"query": "ультразвуком", "search_mode": "fulltext", "include_context": False}, public)
    highlights = response.results[0].highlights or []
    assert any("**ультразвуком**" in h for h in highlights) and all(len(h) <= 120 for h in highlights)


def test_facets_equal_counts_of_the_filtered_result_set(service: SearchService, public: Principal) -> None:
    args = {"query": "бетон OR теплоизоляция", "operator": "OR", "search_mode": "fulltext", "limit": 50}
    response = service.search(args, public)
    counted = Counter(r.file_type for r in response.results)
    assert response.meta.total_results == len(response.results)
    assert response.meta.facets.document_types == dict(counted)
    months = Counter(updated(service, r.id, public)[:7] for r in response.results)
    assert response.meta.facets.date_distribution == dict(months)


def test_misspelled_query_gets_a_correction(service: SearchService, public: Principal) -> None:
    response = service.search({"query": "пожарнай безопастности"}, public)
    assert response.meta.suggestions.corrected_query == "пожарная безопасность"  # the form this corpus holds
    assert response.meta.suggestions.corrected_query in response.meta.suggestions.related_queries


def test_a_correct_query_gets_no_correction(service: SearchService, public: Principal) -> None:
    assert service.search({"query": "пожарная безопасность"}, public).meta.suggestions.corrected_query is None


def test_threshold_drops_chunks_below_the_similarity_inside_the_engine(service: SearchService,
                                                                       public: Principal) -> None:
    args = {"query": "теплоизоляция толщина утеплителя плотность", "limit": 50, "operator": "OR", "max_chunks": 10}
    loose = service.search(args, public)
    cut = sorted(r.similarity or 0.0 for r in loose.results)[len(loose.results) // 2]
    strict = service.search({**args, "threshold": cut}, public)
    assert strict.results and len(strict.results) < len(loose.results)
    assert all(c.similarity >= cut - 1e-4 for r in strict.results for c in r.context_chunks)
    assert strict.meta.total_results == len(strict.results)
    assert sum(strict.meta.facets.document_types.values()) == strict.meta.total_results


def test_several_phrasings_are_merged_without_duplicates_in_one_search_request(
        service: SearchService, public: Principal, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[dict[str, Any]] = []
    send = service.reads.send

    def counted(body: dict[str, Any], route: str | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        sent.append(body)
        return send(body, route, timeout_s)

    monkeypatch.setattr(service.reads, "send", counted)
    response = service.search({"query": "сварка стальных конструкций", "queries": ["контроль прочности бетона",
                                                                                 "сварка стальных конструкций"]},
                              public)
    found = names(response)
    assert "сварка.pdf" in found and "бетон.docx" in found
    assert len(found) == len(set(found))
    # every phrasing in the one hybrid request; then the first document's chunks, the others' in one request too
    assert len(sent) == 3 and "hybrid" in sent[0]["query"] and set(sent[2]["aggs"]) == {"chunks"}
    assert "aggs" not in sent[1] and sent[1]["size"] == service.settings.search.first_document_chunks
    concrete = next(r for r in response.results if r.file_path.endswith("бетон.docx"))
    assert any("прочност" in c.text.lower() for c in concrete.context_chunks)  # its passage answers the phrasing


def test_timings_and_pagination_meta_are_filled(service: SearchService, public: Principal) -> None:
    meta = service.search({"query": "бетон", "limit": 1}, public).meta
    assert meta.timings.total_ms >= meta.timings.search_ms > 0
    assert meta.timings.embedding_ms > 0
    assert meta.pagination.page == 1 and meta.pagination.limit == 1
    assert meta.pagination.total_pages == meta.total_results


def test_response_is_cut_to_the_budget(service: SearchService, public: Principal) -> None:
    service.settings.search.response_budget_chars = 6000
    response = service.search({"query": "теплоизоляция", "limit": 50, "max_chunks": 10}, public)
    assert response.meta.truncated and response.meta.pagination.next_cursor
    assert len(dumped(response)) <= 6000


def test_an_empty_result_is_success(service: SearchService, public: Principal) -> None:
    response = service.search({"query": "квантовая хромодинамика", "search_mode": "fulltext"}, public)
    assert response.status == "ok"
    assert response.results == [] and response.meta.total_results == 0


BINDING_CASES = [
    ("контроль прочности бетона", "AND"), ("теплоизоляция утеплителя", "AND"), ("монтажный стык", "PHRASE"),
    ("прочности бетона", "PHRASE"), ('утеплитель "минераловатными плитами"', "AUTO"), ('"сварных швов"', "AUTO"),
]


@pytest.mark.parametrize(("query", "operator"), BINDING_CASES)
def test_and_phrase_and_straight_quotes_bind_every_mode(service: SearchService, public: Principal, query: str,
                                                        operator: str) -> None:
    """The dense leg may not add a document the operator excludes: hybrid and semantic results are a
    subset of the fulltext matches of the same operator."""
    args = {"query": query, "operator": operator, "limit": 50}
    allowed = {r.id for r in service.search({**args, "search_mode": "fulltext"}, public).results}
    assert allowed, "the case must match something in fulltext"
    for mode in ("hybrid", "semantic"):
        response = service.search({**args, "search_mode": mode}, public)
        assert {r.id for r in response.results} <= allowed, mode
        assert response.meta.total_results <= len(allowed)
        assert response.meta.operator_used == operator


def test_default_operator_is_auto_and_matches_questions_with_extra_words(service: SearchService,
                                                                         public: Principal) -> None:
    response = service.search({"query": "какой контроль прочности бетона нужен", "search_mode": "fulltext"}, public)
    assert response.meta.operator_used == "AUTO"
    assert "бетон.docx" in names(response)[:3]


def test_an_archive_without_copies_answers_a_search_with_three_engine_requests(service: SearchService,
                                                                                public: Principal) -> None:
    """The search, the first document's chunks that hold a query term (read whole), and the other documents'
    best chunks; copies are looked up only where the caller may read a content kept at two paths (none here)."""
    sent: list[dict[str, Any]] = []
    send = service.reads.send

    def counting(body: dict[str, Any], route: str | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        sent.append(body)
        return send(body, route, timeout_s)

    service.reads.send = counting  # type: ignore[method-assign]
    response = service.search({"query": "теплоизоляция наружных стен"}, public)
    assert len(response.results) > 1 and len(sent) == 3 and all(r.copies is None for r in response.results)
    first = response.results[0].id
    assert "collapse" in sent[0]
    assert sent[1]["query"]["bool"]["filter"][-1] == {"term": {"doc_id": first}} and "aggs" not in sent[1]
    assert set(sent[2]["aggs"]) == {"chunks"} and first not in sent[2]["query"]["bool"]["filter"][-1]["terms"]["doc_id"]
