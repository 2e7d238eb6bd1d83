from __future__ import annotations

import pytest

from service.errors import InvalidQuery
from service.query.build import CHUNK_FIELDS, DOCUMENT_FIELDS
from service.query.map import cut_at_word, map_chunk, map_correction, map_hit, snippet
from service.query.models import DocumentResult, Facets, Pagination, SearchMeta, SearchResponse, Suggestions, Timings
from service.query.parse import parse_query
from service.search import encode_cursor, fit_budget, paginate, related_queries, request_offset, validate_request


def test_cut_at_word_never_splits_a_word_and_marks_the_cut():
    text = "слово " * 200
    cut = cut_at_word(text, 500)
    assert len(cut) <= 500 and cut.endswith("…") and cut[:-1].endswith("слово")
    assert cut_at_word("коротко", 500) == "коротко"


def test_snippet_starts_near_the_first_marked_word():
    passage = "начало " * 60 + "**ширина** эвакуационного **выхода** не менее 1,2 м " + "конец " * 60
    out = snippet(passage, 240)
    assert out is not None and out.startswith("…") and len(out) <= 240
    assert "**ширина** эвакуационного **выхода**" in out and out.index("**") <= 240 // 5 + len("начало ")


def test_snippet_of_a_passage_without_marks_is_none_and_a_cut_span_is_closed():
    assert snippet("начало главы без совпадений", 240) is None
    out = snippet("**" + "длинная фраза " * 40 + "конец**", 120)
    assert out is not None and out.count("**") == 2 and out.endswith("**…") and len(out) <= 123


def test_a_searched_chunk_shows_the_engines_passage_without_marks():
    hit = {"_source": {"chunk_id": "d1:2", "chunk_index": 2},
           "highlight": {"text": ["Стык   **монтажный**\nсварной " + "шов " * 200]}}
    text = map_chunk(hit, 0.5, 500).text
    assert text.startswith("Стык монтажный сварной") and "**" not in text
    assert len(text) <= 500 and text.endswith("…")
    looked_up = {"_source": {"chunk_id": "d1:2", "chunk_index": 2, "text": "Полный   текст чанка"}}
    assert map_chunk(looked_up, 1.0, 2000).text == "Полный текст чанка"


def test_a_mark_around_nothing_leaves_no_double_space_in_a_chunk():
    hit = {"_source": {"chunk_id": "d1:3", "chunk_index": 3},
           "highlight": {"text": ["Нагрузки и воздействия». ** На территории **Российской** Федерации"]}}
    assert map_chunk(hit, 0.5, 500).text == "Нагрузки и воздействия». На территории Российской Федерации"
    collapsed = {"_source": {"chunk_id": "d1", "doc_id": "d1", "file_name": "a.pdf", "file_path": "/a.pdf",
                             "file_type": "pdf"}, "inner_hits": {"chunks": {"hits": {"hits": [hit]}}}}
    assert map_hit(collapsed, True, 500).context_chunks[0].text == map_chunk(hit, 0.5, 500).text


def test_correction_is_dropped_when_it_equals_the_query():
    suggest = {"corrected": [{"options": [{"text": "пожарная безопасность"}]}]}
    assert map_correction(suggest, "Пожарная  безопасность") is None
    assert map_correction(suggest, "пожарнай безопастность") == "пожарная безопасность"


def test_related_queries_broaden_the_query():
    related = related_queries(parse_query('"монтажный стык" сварка электродами'), "исправленный")
    assert related[0] == "исправленный"
    assert "монтажный стык сварка электродами" in related
    assert "электродами" in related and "сварка" in related


def test_cursor_round_trip_and_foreign_cursor():
    request = validate_request({"query": "бетон", "limit": 5})
    assert request_offset(request) == 0
    assert request_offset(validate_request({"query": "бетон", "limit": 5, "page": 3})) == 10
    assert request_offset(validate_request({"query": "бетон", "limit": 5, "cursor": encode_cursor(request, 13)})) == 13
    for foreign in ({"query": "сталь", "limit": 5, "cursor": encode_cursor(request, 3)},
                    {"query": "бетон", "limit": 5, "document_types": ["pdf"], "cursor": encode_cursor(request, 3)},
                    {"query": "бетон", "cursor": "garbage!!"},
                    {"query": "бетон", "limit": 5, "cursor": encode_cursor(request, 5000)}):
        with pytest.raises(InvalidQuery) as caught:
            request_offset(validate_request(foreign))
        assert caught.value.details["field"] == "cursor"


def test_paginate_continues_after_the_last_result_returned():
    request = validate_request({"query": "бетон", "limit": 10})
    full = paginate(request, 0, 10, 25, cut=False)
    assert (full.has_more, full.total_pages, request_offset(request.model_copy(
        update={"cursor": full.next_cursor}))) == (True, 3, 10)
    cut = paginate(request, 10, 4, 25, cut=True)  # the budget kept 4 of 10
    assert cut.page == 2 and request_offset(request.model_copy(update={"cursor": cut.next_cursor})) == 14
    last = paginate(request, 20, 5, 25, cut=False)
    assert not last.has_more and last.next_cursor is None
    past = paginate(request, 40, 0, 25, cut=False)
    assert not past.has_more and past.page == 5


def _response(results: int, chunks: int) -> SearchResponse:
    from service.query.models import ChunkResult

    docs = [DocumentResult(id=f"{i:020d}", title="t", file_path="/p", file_type="pdf", file_size=1, created_at=None,
                           updated_at=None, relevance_score=0.5, highlights=["h" * 200] * 3,
                           context_chunks=[ChunkResult(chunk_id=f"{i}:{j}", chunk_index=j, text="т" * 500,
                                                       page_number=1, relevance_score=0.5) for j in range(chunks)])
            for i in range(results)]
    meta = SearchMeta(query="q", total_results=results, route_used="bm25", timings=Timings(), facets=Facets(),
                      suggestions=Suggestions(), pagination=Pagination(page=1, limit=50, total_pages=1,
                                                                       has_more=False))
    return SearchResponse(results=docs, meta=meta)


@pytest.mark.parametrize("budget", [10_000_000, 20_000, 5_000, 2_000])
def test_fit_budget_cuts_from_the_tail_until_it_fits(budget):
    response = fit_budget(_response(50, 10), budget)
    assert len(response.model_dump_json()) <= budget
    if budget < 10_000_000:  # and nothing more was cut than needed: the last cut was needed to fit
        assert len(response.model_dump_json()) > budget - 2_000
    assert response.meta.truncated == (budget < 10_000_000)
    assert response.results, "the first result is never dropped"
    if budget < 10_000_000:
        assert len(response.results[0].context_chunks) >= len(response.results[-1].context_chunks)


def test_fit_budget_counts_the_response_to_the_character():
    size = len(_response(5, 3).model_dump_json())
    for budget in (size + 1, size):
        assert not fit_budget(_response(5, 3), budget).meta.truncated
    for budget in range(size - 1, size - 3000, -1):
        fitted = fit_budget(_response(5, 3), budget)
        assert fitted.meta.truncated
        assert len(fitted.model_dump_json()) <= budget


def test_validation_names_every_bad_field():
    with pytest.raises(InvalidQuery) as caught:
        validate_request({"query": "", "limit": 0, "search_mode": "x"})
    assert {p["field"] for p in caught.value.details["problems"]} == {"query", "limit", "search_mode"}


def _stored_chunk(index: int) -> dict[str, object]:
    """Every field a chunk is stored with (as ingest writes it), the vector aside."""
    return {"doc_id": "d1", "chunk_id": f"d1:{index}", "chunk_index": index, "text": f"Пункт {index}. " + "бетон " * 300,
            "title": "СП 63.13330.2018 Бетонные конструкции", "file_name": "sp63.pdf", "designation": "СП 63.13330.2018",
            "file_path": "/a/sp63.pdf", "folder": "/a", "file_type": "pdf", "file_size": 1234,
            "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-02-01T00:00:00Z", "indexed_at": "2024-03-01",
            "page_count": 90, "page_number": 3 + index, "page_label": "iii", "page_end": 5 + index,
            "section_title": "5 Материалы", "clause": f"5.{index}", "clauses": [f"5.{index}"],
            "access_groups": ["public"], "doc_hash": "h", "content_hash": "c"}


def _only(source: dict[str, object], fields: list[str]) -> dict[str, object]:
    return {k: v for k, v in source.items() if k in fields}


def test_a_hit_fetched_with_the_request_fields_maps_like_one_with_everything_stored():
    def hit(narrow: bool) -> dict[str, object]:
        inner = [{"_score": 2.0 - i, "_source": _only(_stored_chunk(i), CHUNK_FIELDS) if narrow else _stored_chunk(i),
                  "highlight": {"text": [f"**бетон** {i}"]}, "fields": {"similarity": [0.5]}} for i in range(3)]
        top = _stored_chunk(0)
        return {"_score": 0.9, "_source": _only(top, DOCUMENT_FIELDS) if narrow else top,
                "fields": {"similarity": [0.7]}, "inner_hits": {"chunks": {"hits": {"hits": inner}}}}

    assert map_hit(hit(True), True, 500) == map_hit(hit(False), True, 500)
    assert len(map_hit(hit(True), True, 500).context_chunks) == 3
