"""Invariants of the search contract on a real node: paging, similarity, threshold, filters, facets."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from service.caller.principal import Principal
from service.search.answer.models import SearchResponse
from service.search.service import SearchService
from service.settings import Settings

pytestmark = pytest.mark.integration

MODES = ("hybrid", "semantic", "fulltext")
OPERATORS = ("AUTO", "AND", "OR", "PHRASE")
QUERIES = ("теплоизоляция утеплителя", "бетон", "пожарная безопасность эвакуация", '"сварных швов" контроль',
           "плотность утеплителя кг/м3")


def walk(service: SearchService, principal: Principal, arguments: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """Every page of a query, following next_cursor; returns the document ids in order and each meta."""
    ids, metas = [], []
    response = service.search(arguments, principal)
    while True:
        ids += [r.id for r in response.results]
        metas.append(response.meta)
        if not response.meta.pagination.has_more:
            return ids, metas
        assert response.meta.pagination.next_cursor
        response = service.search({**arguments, "cursor": response.meta.pagination.next_cursor}, principal)
        assert len(metas) < 100, "paging does not end"


@pytest.mark.parametrize("mode", ["hybrid", "fulltext"])
def test_a_walk_that_ends_before_the_count_says_how_many_documents_it_reaches(
        service: SearchService, public: Principal, mode: str) -> None:
    shallow = SearchService(service.settings.model_copy(deep=True), service.client, service.embedder)
    shallow.settings.search.pagination_depth = 10  # each leg ranks 10 chunks: fewer documents than match
    ids, metas = walk(shallow, public, {"query": "толщина утеплителя плотность", "operator": "OR", "search_mode": mode,
                                        "limit": 3, "max_chunks": 1})
    last = metas[-1]
    assert len(ids) < last.total_results, "the corpus must match more documents than 10 chunks a leg reach"
    # the last page holds the end of the ranking, or (when that end fell on a page boundary) comes back empty
    pages_with_results = len(metas) - (len(ids) == (len(metas) - 1) * 3)
    assert last.pagination.reachable == len(ids) and last.pagination.total_pages == pages_with_results
    assert all(m.pagination.reachable is None for m in metas[:-1])
    # a page exactly as long as the reach: the engine fills it, so the cursor page after it ends the walk
    whole, (full, empty) = walk(shallow, public, {"query": "толщина утеплителя плотность", "operator": "OR",
                                                  "search_mode": mode, "limit": len(ids), "max_chunks": 1})
    assert whole == ids and full.pagination.has_more
    assert (empty.pagination.reachable, empty.pagination.total_pages, empty.pagination.has_more) == (len(ids), 1, False)


@pytest.mark.parametrize(("mode", "operator", "query"), list(itertools.product(MODES, OPERATORS, QUERIES)))
def test_walking_every_page_yields_each_document_once_and_exactly_the_total(service: SearchService, public: Principal,
                                                                            mode: str, operator: str,
                                                                            query: str) -> None:
    ids, metas = walk(service, public, {"query": query, "search_mode": mode, "operator": operator, "limit": 3,
                                        "max_chunks": 1})
    assert len(ids) == len(set(ids)), "a document came back on two pages"
    assert len(ids) == metas[-1].total_results
    first = metas[0]
    assert sum(first.facets.document_types.values()) == first.total_results, "facets count another set"
    if len(metas) > 1:
        assert all(m.total_results == first.total_results for m in metas)


@pytest.mark.parametrize("mode", MODES)
def test_a_page_past_the_end_is_an_empty_success_with_the_totals(service: SearchService, public: Principal,
                                                                 mode: str) -> None:
    args = {"query": "бетон", "search_mode": mode, "limit": 2}
    first = service.search(args, public)
    past = service.search({**args, "page": 50}, public)
    assert past.status == "ok" and past.results == []
    assert past.meta.pagination.has_more is False and past.meta.pagination.next_cursor is None
    assert past.meta.total_results == first.meta.total_results


def test_a_response_cut_by_the_budget_continues_with_its_cursor(service: SearchService, public: Principal) -> None:
    args = {"query": "теплоизоляция", "limit": 20, "max_chunks": 5, "search_mode": "fulltext"}
    whole, _ = walk(service, public, args)
    service.settings.search.response_budget_chars = 5000
    first = service.search(args, public)
    assert first.meta.truncated and len(first.results) < 20 and first.meta.pagination.has_more
    cut, _ = walk(service, public, args)
    assert cut == whole, "the cursor after a cut must continue right after the last result returned"


def chunk_similarities(response: SearchResponse) -> dict[str, float]:
    return {c.chunk_id: c.similarity or 0.0 for r in response.results for c in r.context_chunks}


def test_similarity_of_a_chunk_is_the_same_whatever_the_filters_page_limit_or_mode(service: SearchService,
                                                                                   public: Principal) -> None:
    base = {"query": "теплоизоляция наружных стен", "max_chunks": 3, "operator": "OR"}
    seen: dict[str, float] = {}
    variants: list[dict[str, Any]] = [{}, {"limit": 3}, {"limit": 3, "page": 2}, {"document_types": ["txt"]},
                {"search_mode": "fulltext"}, {"search_mode": "semantic"}, {"folder": "утеплители"},
                {"date_range": {"from": "2024-03-01"}}]
    for variant in variants:
        response = service.search({**base, **variant}, public)
        assert response.results
        for result in response.results:
            assert result.similarity is not None and 0 <= result.similarity <= 1
            assert result.similarity == result.context_chunks[0].similarity  # the document's best chunk
        for chunk_id, similarity in chunk_similarities(response).items():
            assert similarity == pytest.approx(seen.setdefault(chunk_id, similarity), abs=1e-4)
    assert len(seen) > 10


@pytest.mark.parametrize("mode", MODES)
def test_threshold_is_a_minimum_similarity_applied_before_totals_facets_and_pages(service: SearchService,
                                                                                  public: Principal, mode: str) -> None:
    args = {"query": "теплоизоляция утеплителя", "search_mode": mode, "operator": "OR", "max_chunks": 10,
            "limit": 50}
    loose = service.search(args, public)
    threshold = sorted(r.similarity or 0.0 for r in loose.results)[len(loose.results) // 2]
    strict = service.search({**args, "threshold": threshold}, public)
    assert 0 < strict.meta.total_results < loose.meta.total_results
    assert all(c.similarity >= threshold - 1e-4 for r in strict.results for c in r.context_chunks)
    assert sum(strict.meta.facets.document_types.values()) == strict.meta.total_results
    ids, metas = walk(service, public, {**args, "threshold": threshold, "limit": 4, "max_chunks": 1})
    assert len(ids) == len(set(ids)) == metas[0].total_results == strict.meta.total_results


def test_path_filter_keeps_exactly_the_named_files(service: SearchService, public: Principal,
                                                   search_corpus: tuple[Path, Settings]) -> None:
    root, _ = search_corpus
    wanted = [str(root / "нормы" / "бетон.docx"), str(root / "сметы" / "смета.xlsx")]
    response = service.search({"query": "бетон", "path": wanted, "operator": "OR"}, public)
    assert sorted(r.file_path for r in response.results) == sorted(wanted)
    assert response.meta.total_results == 2


def test_folder_filter_matches_whole_path_segments(service: SearchService, public: Principal,
                                                   search_corpus: tuple[Path, Settings]) -> None:
    root, _ = search_corpus
    below = service.search({"query": "бетон пожарная сварка", "operator": "OR", "folder": str(root / "нормы")},
                           public)
    assert below.results and all(r.file_path.startswith(str(root / "нормы") + "/") for r in below.results)
    partial = service.search({"query": "бетон пожарная сварка", "operator": "OR", "folder": str(root / "нор")},
                             public)
    assert partial.results == [] and partial.meta.total_results == 0
    relative = service.search({"query": "бетон пожарная сварка", "operator": "OR", "folder": "нормы"}, public)
    assert {r.id for r in relative.results} == {r.id for r in below.results}


def test_filters_combine_with_and_and_bind_facets(service: SearchService, public: Principal,
                                                  search_corpus: tuple[Path, Settings]) -> None:
    root, _ = search_corpus
    response = service.search({"query": "бетон пожарная сварка", "operator": "OR", "folder": str(root / "нормы"),
                               "document_types": ["pdf", "txt"], "date_range": {"from": "2025-01-01"}}, public)
    assert [r.file_path.rsplit("/", 1)[-1] for r in response.results] == ["сварка.pdf"]
    assert response.meta.facets.document_types == {"pdf": 1}


def test_filters_never_widen_access(service: SearchService, public: Principal, legal: Principal,
                                    search_corpus: tuple[Path, Settings]) -> None:
    root, _ = search_corpus
    secret = str(root / "секретно" / "договор.txt")
    for arguments in ({"path": [secret]}, {"folder": str(root / "секретно")}, {"folder": "секретно"}):
        hidden = service.search({"query": "договор подряда", "operator": "OR", **arguments}, public)
        assert hidden.results == [] and hidden.meta.total_results == 0
        shown = service.search({"query": "договор подряда", "operator": "OR", **arguments}, legal)
        assert [r.file_path for r in shown.results] == [secret]
