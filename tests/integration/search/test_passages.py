"""Passages on a real node: a normative document written as a TXT file (pages split by form feeds, a contents
page with dotted leaders), ingested through ``run_ingest`` and searched through ``SearchService``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.answer.budget import dumped
from service.search.answer.models import ChunkResult, SearchResponse
from service.search.service import SearchService
from tests.support.served import served_folder

FILLER = "Требования настоящего раздела распространяются на здания всех классов функциональной пожарной опасности. "
PAGES = [
    "СП 999.1325800.2099 Здания жилые опытные. Правила проектирования\n",
    "Содержание\n1 Область применения ........................ 1\n5 Требования к квартирам ..................... 3\n"
    "5.8 Высота жилых комнат ........................ 3\n6 Вентиляция жилых комнат .................... 4\n"
    "7 Лестницы и эвакуационные выходы ............. 5\n",
    "1 Область применения\n1.1 Настоящий свод правил распространяется на проектирование жилых зданий. " + FILLER * 6,
    "5 Требования к квартирам\n5.7 Площадь спальни в мансардном этаже допускается не менее 7 м2 при условии, что "
    "общая комната имеет площадь не менее 16 м2.\n" + FILLER * 9 + "\n5.8 Высота (от пола до потолка) жилых комнат "
    "в климатических подрайонах IА, IБ и IГ должна быть не менее 2,7 м, а в других климатических подрайонах — не "
    "менее 2,5 м.\nВысота внутриквартирных коридоров должна составлять не менее 2,1 м.\n",
    "5.9 Вентиляция жилых комнат должна обеспечивать воздухообмен не менее 3 м3/ч на 1 м2 площади. " + FILLER * 5,
    "7 Лестницы и эвакуационные выходы\n7.1 Ширина марша лестницы должна быть не менее 1,05 м. " + FILLER * 5,
]


@pytest.fixture(scope="module")
def norm(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
         navec_embedder: NavecEmbedder,
         ) -> Iterator[SearchService]:
    root = tmp_path_factory.mktemp("passages")
    (root / "СП 999.txt").write_text("\f".join(PAGES), encoding="utf-8")
    with served_folder(root, opensearch_url, client, navec_embedder, 12, FILLER) as service:
        yield service


def _chunks(response: SearchResponse) -> list[ChunkResult]:
    return [c for r in response.results for c in r.context_chunks]


def test_the_answering_clause_is_shown_labelled_with_its_own_clause_and_page(norm: SearchService) -> None:
    response = norm.search({"query": "какая минимальная высота жилых комнат в северных районах"}, Principal.of("t", []))
    first = response.results[0].context_chunks[0]
    assert "не менее 2,7 м" in first.text
    assert first.text.startswith("5.8 Высота")
    assert (first.clause, first.page_number) == ("5.8", 4)


def test_passages_never_start_or_end_inside_a_word(norm: SearchService) -> None:
    principal = Principal.of("t", [])
    for query in ("высота жилых комнат", "площадь спальни", "ширина марша лестницы", "воздухообмен вентиляция",
                  "классов функциональной пожарной опасности", "бетонные работы"):
        for chunk in _chunks(norm.search({"query": query, "max_chunks": 3}, principal)):
            opened = norm.get_document(chunk.chunk_id, principal).chunk
            whole = " ".join(opened.text.split())  # type: ignore[union-attr]
            at = whole.find(chunk.text)
            assert at >= 0, (query, chunk.text[:60])
            end = at + len(chunk.text)
            assert at == 0 or not whole[at - 1].isalnum(), (query, whole[at - 5:at + 20])
            assert end == len(whole) or not whole[end].isalnum(), (query, whole[end - 20:end + 5])


def test_the_clause_label_is_the_clause_in_effect_where_the_passage_starts(norm: SearchService) -> None:
    principal = Principal.of("t", [])
    for query, clause, page in (("ширина марша лестницы", "7.1", 6), ("площадь спальни мансардном", "5.7", 4),
                                ("вентиляция: воздухообмен на 1 м2 площади", "5.9", 5)):
        chunk = norm.search({"query": query}, principal).results[0].context_chunks[0]
        assert chunk.page_number == page, (query, chunk.text[:80])
        starts = re.match(r"(\d+(?:\.\d+)*)\s", chunk.text)
        assert starts is None or starts[1] == chunk.clause, (query, chunk.text[:80])  # its own start's label
        # the answering clause, or its section's heading right before it (the clause then in effect)
        assert chunk.clause == clause or (clause.startswith(f"{chunk.clause}.") and f"{clause} " in chunk.text), \
            (query, chunk.clause, chunk.text[:80])


def test_highlights_never_repeat_the_passages(norm: SearchService) -> None:
    principal = Principal.of("t", [])
    with_context = norm.search({"query": "высота жилых комнат"}, principal)
    assert all(r.highlights is None for r in with_context.results)
    assert "highlights" not in dumped(with_context)
    without = norm.search({"query": "высота жилых комнат", "include_context": False}, principal)
    assert without.results[0].highlights and not _chunks(without)


def test_a_contents_page_is_never_a_passage(norm: SearchService) -> None:
    principal = Principal.of("t", [])
    for query in ("требования к квартирам высота жилых комнат вентиляция", "лестницы и эвакуационные выходы",
                  "содержание область применения"):
        for chunk in _chunks(norm.search({"query": query, "max_chunks": 10}, principal)):
            assert chunk.text.count("…") < 2, (query, chunk.text[:120])


def test_the_contents_page_is_kept_as_such_and_readable_by_id_but_never_searched(norm: SearchService,
                                                                                  client: OpenSearch) -> None:
    doc_id = norm.search({"query": "высота жилых комнат"}, Principal.of("t", [])).results[0].id
    hits = client.search(index=norm.settings.index.alias, body={"query": {"bool": {"filter": [
        {"term": {"doc_id": doc_id}}, {"term": {"role": "contents"}}]}}, "_source": ["chunk_id",
                                                                                     "text"]})["hits"]["hits"]
    assert len(hits) == 1 and hits[0]["_source"]["text"].startswith("Содержание")
    looked_up = norm.get_document(hits[0]["_source"]["chunk_id"], Principal.of("t", []))
    assert looked_up.chunk is not None and "Вентиляция жилых комнат" in looked_up.chunk.text
    found = norm.search({"query": "содержание", "search_mode": "fulltext", "operator": "OR"}, Principal.of("t", []))
    assert all(c.chunk_id != hits[0]["_source"]["chunk_id"] for c in _chunks(found))


def test_a_truncated_answer_continues_by_its_cursor_with_nothing_lost_or_repeated(norm: SearchService) -> None:
    principal = Principal.of("t", [])
    args = {"query": "требования бетонные работы здания", "limit": 10, "operator": "OR"}
    everything = [r.id for r in norm.search(args, principal).results]
    assert len(everything) > 3
    norm.settings.search.response_budget_chars = 2000
    try:
        seen: list[str] = []
        response = norm.search(args, principal)
        assert response.meta.truncated and response.meta.pagination.has_more and response.meta.pagination.next_cursor
        while True:
            assert len(dumped(response)) <= 2000
            seen += [r.id for r in response.results]
            if not response.meta.pagination.next_cursor or len(seen) >= len(everything):
                break
            response = norm.search({**args, "cursor": response.meta.pagination.next_cursor}, principal)
    finally:
        norm.settings.search.response_budget_chars = 24000
    assert seen[: len(everything)] == everything


def test_totals_agree_on_every_page_of_a_walk_even_when_the_ranking_runs_out_first(norm: SearchService) -> None:
    principal = Principal.of("t", [])
    args = {"query": "требования здания бетонные работы", "limit": 2, "operator": "OR", "search_mode": "fulltext"}
    depth = norm.settings.search.pagination_depth
    norm.settings.search.pagination_depth = 4  # each leg ranks 4 chunks a shard: fewer than the matching documents
    try:
        response = norm.search(args, principal)
        totals, seen = [response.meta.total_results], [r.id for r in response.results]
        while response.meta.pagination.next_cursor:
            response = norm.search({**args, "cursor": response.meta.pagination.next_cursor}, principal)
            totals.append(response.meta.total_results)
            seen += [r.id for r in response.results]
    finally:
        norm.settings.search.pagination_depth = depth
    assert len(set(totals)) == 1 and totals[0] == 13  # every document matches OR «требования … работы»
    assert len(seen) == len(set(seen)) and 0 < len(seen) < 13 and not response.meta.pagination.has_more


@pytest.mark.parametrize(("request_", "phrase"), [
    ({"query": '"требования к квартирам" высота жилых комнат'}, "Требования к квартирам"),
    ({"query": "требования к квартирам", "operator": "PHRASE"}, "Требования к квартирам"),
])
def test_a_phrase_result_shows_the_phrase(norm: SearchService, request_: dict[str, Any], phrase: str) -> None:
    """The document also holds clause 5.8, which answers «высота жилых комнат» better than the heading does:
    the passage shown is still the one holding the phrase the query binds."""
    response = norm.search(request_, Principal.of("t", []))
    assert response.results, request_
    first = response.results[0].context_chunks[0]
    assert phrase in first.text, (request_, first.text[:120])
    assert first.clause == "5", first.clause


def test_a_phrase_matched_in_the_heading_alone_shows_the_heading(norm: SearchService) -> None:
    """Under AND the chunk must hold «высота» too: that is the one after the heading, matching the phrase by
    its section heading only. The heading comes with the passage."""
    response = norm.search({"query": "«требования к квартирам» высота", "operator": "AND"}, Principal.of("t", []))
    first = response.results[0].context_chunks[0]
    assert "Требования к квартирам" not in first.text
    assert first.section_title == "5 Требования к квартирам"
    plain = norm.search({"query": "требования к квартирам высота"}, Principal.of("t", []))
    assert plain.results[0].context_chunks[0].section_title is None
