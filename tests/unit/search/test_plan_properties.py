"""Property-based tests of the pure planner: any valid request, any groups, with or without a vector."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from service.search.dsl.build import (
    EXTRA_CANDIDATES,
    ONE_DOCUMENT_CANDIDATES,
    SearchPlan,
    SearchSettingsView,
    build_chunks_request,
    build_request,
    plan_search,
)
from service.search.dsl.filters import build_access_filter
from service.search.request.contract import FILE_TYPES, SearchRequest
from service.search.request.parse import parse_query
from service.settings import SearchSettings

text = st.lists(st.sampled_from(["бетон", "сварка", "СП", "63.13330", "\"", "«", "»", "*", "?", ":", "(", ")",
                                 "\\", "/", "AND", "OR", "~", "^", "[", "]", "{", "}", " ", "10180-2012", "title:*"]),
               min_size=1, max_size=12).map(" ".join).filter(lambda t: re.search(r"\w", t))
requests: st.SearchStrategy[dict[str, Any]] = st.builds(
    dict,
    query=text,
    queries=st.lists(text, max_size=3),
    limit=st.integers(1, 50),
    page=st.integers(1, 20),
    document_types=st.lists(st.sampled_from(FILE_TYPES), max_size=3),
    path=st.lists(st.text(min_size=1, max_size=30).filter(str.strip), max_size=3),
    folder=st.one_of(st.none(), st.text(min_size=1, max_size=30).filter(str.strip)),
    date_range=st.one_of(st.none(), st.just({"from": "2024-01-01"}), st.just({"to": "2024-12-31"})),
    max_chunks=st.integers(1, 10),
    search_mode=st.sampled_from(["hybrid", "semantic", "fulltext"]),
    operator=st.sampled_from(["AUTO", "AND", "OR", "PHRASE"]),
    threshold=st.one_of(st.none(), st.floats(0, 1)),
    include_context=st.booleans(),
)
groups = st.lists(st.sampled_from(["public", "legal", "hr", "admin"]), min_size=1, max_size=3).map(
    lambda g: tuple(sorted(set(g))))
vectors = st.one_of(st.none(), st.just([0.6, 0.8]))


def planned(arguments: dict[str, Any], principal_groups: tuple[str, ...], vector: list[float] | None,
            ) -> tuple[SearchRequest, SearchPlan | None]:
    request = SearchRequest.model_validate({k: v for k, v in arguments.items() if v is not None})
    parsed = [parse_query(q) for q in request.all_queries]
    if request.threshold is not None and vector is None:
        return request, None
    offset = (request.page - 1) * request.limit
    return request, plan_search(request, parsed, principal_groups, vector, offset,
                                SearchSettingsView.of(SearchSettings()))


@settings(max_examples=300, deadline=None)
@given(requests, groups, vectors)
def test_every_plan_is_access_filtered_bounded_and_free_of_query_syntax(arguments: dict[str, Any],
                                                                        principal_groups: tuple[str, ...],
                                                                        vector: list[float] | None) -> None:
    if arguments["page"] * arguments["limit"] > 1000:
        arguments["page"] = 1
    request, plan = planned(arguments, principal_groups, vector)
    if plan is None:
        return  # threshold without a vector is refused (tested by example)
    body = build_request(plan)
    clauses = body["query"]["hybrid"]["filter"]["bool"]["filter"]
    assert clauses[0] == build_access_filter(list(principal_groups))
    assert body["from"] == (request.page - 1) * request.limit and body["size"] == request.limit
    chunks = build_chunks_request(plan, ["d1"])
    top = (body["collapse"]["inner_hits"][0] if plan.unit_hits
           else chunks["aggs"]["chunks"]["aggs"]["chunks"]["top_hits"])
    one_file = len(request.path) == 1  # a call inside one file scores more of its chunks, and never more than that
    assert top["size"] == (max(ONE_DOCUMENT_CANDIDATES, request.max_chunks + EXTRA_CANDIDATES) if one_file
                           else request.max_chunks + EXTRA_CANDIDATES)
    # the chunks of a page are looked up under the search's own filters, access first
    assert chunks["query"]["bool"]["filter"][0]["bool"]["filter"][0] == build_access_filter(list(principal_groups))
    serialized = json.dumps([body, chunks], ensure_ascii=False)
    assert "query_string" not in serialized
    if request.document_types:
        assert {"terms": {"file_type": request.document_types}} in clauses
    if request.path:
        assert {"terms": {"file_path": request.path}} in clauses
    expected_route = "bm25" if request.search_mode == "fulltext" or vector is None else (
        "knn" if request.search_mode == "semantic" else "hybrid")
    assert plan.route == expected_route
    assert len(body["query"]["hybrid"]["queries"]) == (2 if expected_route == "hybrid" else 1)
    radial = [c for c in clauses if "knn" in c]
    assert bool(radial) == (request.threshold is not None)
    if radial:
        assert radial[0]["knn"]["embedding"]["min_score"] == (1 + request.threshold) / 2
    assert ("script_fields" in body) == (vector is not None)


@settings(max_examples=200, deadline=None)
@given(requests, vectors)
def test_and_phrase_and_required_phrases_bind_the_dense_leg(arguments: dict[str, Any],
                                                            vector: list[float] | None) -> None:
    arguments["page"] = 1
    request, plan = planned(arguments, ("public",), vector)
    if plan is None or plan.route == "bm25":
        return
    parsed = [parse_query(q) for q in request.all_queries]
    binds = request.operator in ("AND", "PHRASE") or (
        request.operator == "AUTO" and all(p.exact for p in parsed))
    clauses = plan.filters["bool"]["filter"]
    text_bindings = [c for c in clauses if "multi_match" in keys_of(c)]  # a key: a folder may be named so
    assert bool(text_bindings) == binds


def keys_of(clause: Any) -> set[str]:
    """Every key of a request clause, at any depth."""
    if isinstance(clause, dict):
        return set(clause).union(*(keys_of(v) for v in clause.values()))
    if isinstance(clause, list):
        return set().union(*(keys_of(v) for v in clause))
    return set()


@pytest.mark.parametrize("query", ['"', '" "', "«»", "* ? :", "—"])
def test_a_query_without_words_is_refused(query: str) -> None:
    """AND over no words would match every chunk; the request is refused instead."""
    with pytest.raises(ValidationError, match="no words"):
        SearchRequest.model_validate({"query": query, "operator": "AND"})
    with pytest.raises(ValidationError, match="needs words"):
        SearchRequest.model_validate({"query": "бетон", "queries": ["?"]})
