from __future__ import annotations

import pytest

from service.engine.fields import CHUNK_FIELDS, DOCUMENT_FIELDS
from service.errors import InvalidQuery
from service.search.answer.budget import dumped, fit_budget
from service.search.answer.hits import (
    chunks_by_document,
    document_chunks,
    engine_cosines,
    map_correction,
    related_queries,
)
from service.search.answer.map import map_hits
from service.search.answer.models import (
    DocumentResult,
    Facets,
    Pagination,
    SearchMeta,
    SearchResponse,
    Suggestions,
    Timings,
)
from service.search.answer.passages import POST, PRE
from service.search.answer.text import cut_at_word, snippet
from service.search.request.contract import validate_request
from service.search.request.paging import encode_cursor, paginate, request_offset
from service.search.request.parse import parse_query


def test_cut_at_word_never_splits_a_word_and_marks_the_cut() -> None:
    text = "слово " * 200
    cut = cut_at_word(text, 500)
    assert len(cut) <= 500 and cut.endswith("…") and cut[:-1].endswith("слово")
    assert cut_at_word("коротко", 500) == "коротко"


def test_snippet_starts_near_the_first_marked_word() -> None:
    passage = "начало " * 60 + "**ширина** эвакуационного **выхода** не менее 1,2 м " + "конец " * 60
    out = snippet(passage, 240)
    assert out is not None and out.startswith("…") and len(out) <= 240
    assert "**ширина** эвакуационного **выхода**" in out and out.index("**") <= 240 // 5 + len("начало ")


def test_snippet_of_a_passage_without_marks_is_none_and_a_cut_span_is_closed() -> None:
    assert snippet("начало главы без совпадений", 240) is None
    out = snippet("**" + "длинная фраза " * 40 + "конец**", 120)
    assert out is not None and out.count("**") == 2 and out.endswith("**…") and len(out) <= 123


def _collapsed(doc: str, inner: list[dict[str, object]], score: float = 0.9) -> dict[str, object]:
    return {"_score": score, "_source": {"doc_id": doc, "file_name": "a.pdf", "file_path": f"/{doc}.pdf",
                                         "file_type": "pdf", "title": "СП 54.13330.2016"},
            "inner_hits": {"chunks": {"hits": {"hits": inner}}}}


def _marked(text: str, *words: str) -> str:
    for word in words:
        text = text.replace(word, f"{PRE}{word}{POST}")
    return text


CHUNK = ("5.7 Площадь спальни в мансардном этаже допускается не менее 7 м2.\n"
         "5.8 Высота жилых комнат в подрайонах IA, IB должна быть не менее 2,7 м.\n"
         "Высота коридоров должна составлять не менее 2,1 м.\n"
         "5.9 Вентиляция " + "общие слова " * 80)
SPANS = [{"o": 0, "p": 13, "c": "5.7"}, {"o": CHUNK.index("5.8"), "p": 14, "c": "5.8"},
         {"o": CHUNK.index("5.9"), "p": 14, "c": "5.9"}]


def test_a_searched_chunk_shows_the_answering_clause_unmarked_with_its_own_clause_and_page() -> None:
    inner = [{"_score": 3.0, "_source": {"chunk_id": "d1:2", "chunk_index": 2, "page_number": 13, "clause": "5.7",
                                         "spans": SPANS},
              "highlight": {"text": [_marked(CHUNK, "Высота", "жилых", "комнат")]}}]
    chunk = map_hits([_collapsed("d1", inner)], True, 3, 600, 0.9)[0].context_chunks[0]
    assert chunk.text.startswith("5.8 Высота жилых комнат") and "2,1 м." in chunk.text
    assert PRE not in chunk.text and "**" not in chunk.text and "5.7" not in chunk.text
    assert (chunk.clause, chunk.page_number, chunk.clause_end, chunk.page_end) == ("5.8", 14, None, None)


def test_a_chunks_requests_buckets_give_each_document_its_own_chunks() -> None:
    inner = [{"_score": 3.0, "_source": {"chunk_id": "d1:2", "chunk_index": 2, "page_number": 13, "clause": "5.7",
                                         "spans": SPANS},
              "highlight": {"text": [_marked(CHUNK, "Высота", "жилых", "комнат")]}}]
    raw = {"aggregations": {"chunks": {"buckets": [{"key": "d1", "doc_count": 1,
                                                    "chunks": {"hits": {"hits": inner}}}]}}}
    hits = [{**_collapsed("d1", []), "inner_hits": {}}, {**_collapsed("d2", []), "inner_hits": {}}]
    found = chunks_by_document(raw)
    assert document_chunks(hits, found) == [inner, []] and document_chunks(hits, None) == [[], []]
    with_chunks, without = map_hits(hits, True, 3, 600, 0.9, chunks=found)
    assert with_chunks.context_chunks[0].clause == "5.8" and without.context_chunks == []


def test_a_chunk_of_an_older_index_without_spans_is_labelled_by_its_start() -> None:
    inner = [{"_score": 3.0, "_source": {"chunk_id": "d1:2", "chunk_index": 2, "page_number": 13, "clause": "5.7"},
              "highlight": {"text": [_marked(CHUNK, "Высота")]}}]
    chunk = map_hits([_collapsed("d1", inner)], True, 3, 600, 0.9)[0].context_chunks[0]
    assert (chunk.clause, chunk.page_number) == ("5.7", 13) and "Высота" in chunk.text


def test_a_documents_chunks_are_ranked_by_fused_relevance_not_by_one_leg() -> None:
    def inner(index: int, score: float, similarity: float) -> dict[str, object]:
        return {"_score": score, "_source": {"chunk_id": f"d1:{index}", "chunk_index": index, "page_number": index},
                "highlight": {"text": [f"Пункт {index} {PRE}бетон{POST} класса B{index}"]},
                "fields": {"similarity": [similarity]}}

    hits = [_collapsed("d1", [inner(0, 10.0, 0.0), inner(1, 9.9, 0.9)])]
    chunks = map_hits(hits, True, 2, 600, 0.5)[0].context_chunks
    assert [c.chunk_id for c in chunks] == ["d1:1", "d1:0"]  # BM25 alone would put d1:0 first
    assert chunks[0].relevance_score == 0.9 and chunks[1].relevance_score < chunks[0].relevance_score
    assert [c.chunk_id for c in map_hits(hits, True, 2, 600, 1.0)[0].context_chunks] == ["d1:0", "d1:1"]


def test_highlights_are_short_lines_only_when_no_passage_is_shown() -> None:
    inner = [{"_score": 3.0, "_source": {"chunk_id": "d1:2", "chunk_index": 2, "spans": SPANS},
              "highlight": {"text": [_marked(CHUNK, "Высота", "жилых")]}}]
    with_context = map_hits([_collapsed("d1", inner)], True, 3, 600, 0.9)[0]
    assert with_context.highlights is None and with_context.context_chunks
    without = map_hits([_collapsed("d1", inner)], False, 3, 600, 0.9)[0]
    assert not without.context_chunks and without.highlights
    assert all(len(h) <= 120 and "**Высота**" in h for h in without.highlights)


def test_overlapping_chunks_of_one_document_never_show_the_same_text_twice() -> None:
    shared = "4.2 Ширина эвакуационного выхода должна быть не менее 1,2 м."
    inner = [{"_score": 2.0 - i, "_source": {"chunk_id": f"d1:{i}", "chunk_index": i},
              "highlight": {"text": [_marked(shared, "Ширина", "выхода")]}} for i in range(2)]
    chunks = map_hits([_collapsed("d1", inner)], True, 3, 600, 0.9)[0].context_chunks
    assert len(chunks) == 1


def test_correction_is_dropped_when_it_equals_the_query() -> None:
    suggest = {"corrected": [{"options": [{"text": "пожарная безопасность"}]}]}
    assert map_correction(suggest, "Пожарная  безопасность") is None
    assert map_correction(suggest, "пожарнай безопастность") == "пожарная безопасность"


def test_related_queries_broaden_the_query() -> None:
    related = related_queries(parse_query('"монтажный стык" сварка электродами'), "исправленный")
    assert related[0] == "исправленный"
    assert "монтажный стык сварка электродами" in related
    assert "электродами" in related and "сварка" in related


def test_cursor_round_trip_and_foreign_cursor() -> None:
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


def test_paginate_continues_after_the_last_result_returned() -> None:
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
    assert last.reachable is None and full.reachable is None  # the ranking reached the count


def test_a_walk_whose_ranking_ends_before_the_count_says_how_far_it_reaches() -> None:
    request = validate_request({"query": "бетон", "limit": 10})
    ended = paginate(request, 20, 8, 30, cut=False, exhausted=True)  # 28 of 30 counted are ranked
    assert (ended.has_more, ended.reachable, ended.total_pages, ended.page) == (False, 28, 3, 3)
    assert paginate(request, 20, 10, 30, cut=False).reachable is None


def test_a_walk_whose_ranking_ends_on_a_page_boundary_says_so_on_the_empty_page_after_it() -> None:
    request = validate_request({"query": "бетон", "limit": 10})
    full = paginate(request, 10, 10, 30, cut=False, exhausted=False)  # the engine filled the page: more may come
    assert full.has_more and full.reachable is None
    after = request.model_copy(update={"cursor": full.next_cursor})
    empty = paginate(after, 20, 0, 30, cut=False, exhausted=True)
    assert (empty.has_more, empty.next_cursor, empty.reachable, empty.total_pages, empty.page) == (False, None, 20, 2,
                                                                                                   3)
    jumped = paginate(request, 20, 0, 30, cut=False, exhausted=True)  # page 3 asked by number: the reach is unknown
    assert jumped.reachable is None and not jumped.has_more


def _response(results: int, chunks: int, text: int = 500) -> SearchResponse:
    from service.search.answer.models import ChunkResult

    docs = [DocumentResult(id=f"{i:020d}", title="t", file_path="/p", file_type="pdf", relevance_score=0.5,
                           context_chunks=[ChunkResult(chunk_id=f"{i}:{j}", text="т" * text, page_number=1,
                                                       relevance_score=round(0.9 - 0.01 * i - 0.1 * j, 4))
                                           for j in range(chunks)])
            for i in range(results)]
    meta = SearchMeta(query="q", total_results=results, route_used="bm25", timings=Timings(), facets=Facets(),
                      suggestions=Suggestions(), pagination=Pagination(page=1, limit=50, total_pages=1,
                                                                       has_more=False))
    return SearchResponse(results=docs, meta=meta)


def test_every_document_keeps_its_best_passage_and_further_ones_go_best_first_across_the_answer() -> None:
    fitted = fit_budget(_response(10, 3), 10_000_000, 8_000)
    assert not fitted.meta.truncated and len(dumped(fitted)) <= 8_000
    kept = [len(r.context_chunks) for r in fitted.results]
    assert min(kept) == 1 and kept[0] >= 2
    assert kept == sorted(kept, reverse=True)  # further passages went to the best documents first
    shown = [c.relevance_score for r in fitted.results for c in r.context_chunks[1:]]
    left = [0.9 - 0.01 * i - 0.1 * j for i, n in enumerate(kept) for j in range(n, 3)]
    assert min(shown) >= max(left) - 1e-9


@pytest.mark.parametrize("budget", [20_000, 5_000, 2_000])
def test_results_past_the_budget_are_left_to_the_next_page_never_the_first(budget: int) -> None:
    response = fit_budget(_response(50, 3), budget, 10_000_000)
    assert len(dumped(response)) <= budget and response.meta.truncated
    assert response.results, "the first result is never dropped"
    assert len(dumped(response)) > budget - 2_000  # nothing more was dropped than needed


def _widest(response: SearchResponse) -> SearchResponse:
    from service.search.answer.budget import WIDEST_TIMINGS

    response.meta.timings = WIDEST_TIMINGS.model_copy()
    return response


def test_fit_budget_counts_the_response_to_the_character() -> None:
    size = len(dumped(_widest(_response(5, 1))))  # its timings at their widest, as the budget counts them
    for budget in (size + 1, size):
        assert not fit_budget(_widest(_response(5, 1)), budget).meta.truncated
    for budget in range(size - 1, size - 2000, -1):
        fitted = fit_budget(_widest(_response(5, 1)), budget)
        assert fitted.meta.truncated
        assert len(dumped(fitted)) <= budget
        assert len(dumped(fit_budget(_response(5, 1), budget))) <= budget


def test_the_same_passages_fit_whatever_the_calls_times() -> None:
    def shown(timings: Timings) -> list[list[str]]:
        response = _response(10, 3)
        response.meta.timings = timings
        fitted = fit_budget(response, 10_000_000, answer_chars)
        return [[c.chunk_id for c in r.context_chunks] for r in fitted.results]

    quick, slow = Timings(embedding_ms=0.4, search_ms=8.5, total_ms=9.1), Timings(
        embedding_ms=1234.56, search_ms=9876.54, total_ms=11111.11)
    for answer_chars in range(7_000, 9_000, 7):  # every edge a passage can fall on
        assert shown(quick) == shown(slow), answer_chars


def test_validation_names_every_bad_field() -> None:
    with pytest.raises(InvalidQuery) as caught:
        validate_request({"query": "", "limit": 0, "search_mode": "x"})
    assert {p["field"] for p in caught.value.details["problems"]} == {"query", "limit", "search_mode"}


def _stored_chunk(index: int) -> dict[str, object]:
    """Every field a chunk is stored with (as ingest writes it), the vector aside."""
    return {"doc_id": "d1", "chunk_id": f"d1:{index}", "chunk_index": index,
            "text": f"Пункт {index}. " + "бетон " * 300,
            "title": "СП 63.13330.2018 Бетонные конструкции", "file_name": "sp63.pdf",
            "designation": "СП 63.13330.2018",
            "file_path": "/a/sp63.pdf", "folder": "/a", "file_type": "pdf", "file_size": 1234,
            "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-02-01T00:00:00Z", "indexed_at": "2024-03-01",
            "page_count": 90, "page_number": 3 + index, "page_label": "iii", "page_end": 5 + index,
            "section_title": "5 Материалы", "clause": f"5.{index}", "clauses": [f"5.{index}"],
            "access_groups": ["public"], "doc_hash": "h", "content_hash": "c"}


def _only(source: dict[str, object], fields: list[str]) -> dict[str, object]:
    return {k: v for k, v in source.items() if k in fields}


def test_a_hit_fetched_with_the_request_fields_maps_like_one_with_everything_stored() -> None:
    def hit(narrow: bool) -> dict[str, object]:
        inner = [{"_score": 2.0 - i, "_source": _only(_stored_chunk(i), CHUNK_FIELDS) if narrow else _stored_chunk(i),
                  "highlight": {"text": [f"{PRE}бетон{POST} {i}"]}, "fields": {"similarity": [0.5]}} for i in range(3)]
        top = _stored_chunk(0)
        return {"_score": 0.9, "_source": _only(top, DOCUMENT_FIELDS) if narrow else top,
                "fields": {"similarity": [0.7]}, "inner_hits": {"chunks": {"hits": {"hits": inner}}}}

    narrow, wide = map_hits([hit(True)], True, 3, 500, 0.9), map_hits([hit(False)], True, 3, 500, 0.9)
    assert dumped(narrow[0]) == dumped(wide[0].model_copy(update={
        "file_size": None, "created_at": None, "updated_at": None, "page_count": None}))
    assert len(narrow[0].context_chunks) == 3


def test_a_documents_passages_do_not_depend_on_the_other_documents_of_the_answer() -> None:
    """Term weights, the fused scale and the units embedded are the document's own: an agent that asks again
    with another limit, or pages, sees the same passages of the same document."""
    first = ("3.1 Марка бетона по прочности принимается по расчёту.\n" + "общие слова " * 30 + "\n"
             "3.2 Класс арматуры назначают по таблице 2.\n" + "другие слова " * 30)

    def chunk(doc: str, index: int, score: float, text: str, similarity: float) -> dict[str, object]:
        return {"_score": score, "_source": {"chunk_id": f"{doc}:{index}", "chunk_index": index, "page_number": index},
                "highlight": {"text": [_marked(text, "бетона", "арматуры")]}, "fields": {"similarity": [similarity]}}

    document = _collapsed("d1", [chunk("d1", 0, 4.0, first, 0.2), chunk("d1", 1, 3.0, "3.3 Арматуры и бетона "
                                                                              "сечение", 0.8)])
    crowd = [_collapsed(f"d{n}", [chunk(f"d{n}", 0, 40.0, "Прочность бетона. " * 20, 0.1)]) for n in range(2, 6)]

    def similarity(texts: list[str]) -> list[float]:
        return [0.5 for _ in texts]

    def shown(hits: list[dict[str, object]]) -> list[tuple[str, str]]:
        doc = next(d for d in map_hits(hits, True, 2, 120, 0.5, similarity) if d.id == "d1")
        return [(c.chunk_id, c.text) for c in doc.context_chunks]

    alone = shown([document])
    assert alone == shown([*crowd, document]) == shown([document, *crowd[:1]])


def _unit_hits(*scores: float) -> dict[str, object]:
    return {"inner_hits": {"units": {"hits": {"hits": [{"_score": s, "_source": {"o": 10 * i}}
                                                      for i, s in enumerate(scores)]}}}}


def test_engine_unit_scores_are_cosines_or_measured_from_the_dense_floor() -> None:
    hit = _unit_hits(0.94, 0.93, 0.86)  # e5-like: every cosine between 0.72 and 0.88
    assert engine_cosines(hit) == pytest.approx({0: 0.88, 10: 0.86, 20: 0.72})
    scaled = engine_cosines(hit, floor=0.875)  # the fusion's e5 floor: the units now stand apart
    assert scaled == pytest.approx({0: 0.52, 10: 0.44, 20: 0.0})
