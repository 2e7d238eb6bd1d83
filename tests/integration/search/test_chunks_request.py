"""A page's passages from one chunks request on a real node: the engine's work a call does not grow with the
page, and the passages are those the collapse's inner hits (one further search per document) would give."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.search.answer.models import SearchResponse
from service.search.request.contract import validate_request
from service.search.service import SearchService

pytestmark = pytest.mark.integration

QUESTIONS = ["контроль прочности бетона", "теплоизоляция наружных стен толщина утеплителя",
             "контроль сварных швов"]


def query_phases(client: OpenSearch, index: str) -> int:
    """The shard query phases the engine has run on ``index`` so far."""
    stats = client.indices.stats(index=index, metric="search")
    return int(stats["_all"]["primaries"]["search"]["query_total"])


def shards(client: OpenSearch, index: str) -> int:
    settings = client.indices.get_settings(index=index)
    return sum(int(s["settings"]["index"]["number_of_shards"]) for s in settings.values())


@pytest.mark.parametrize("limit", [1, 3, 10, 30])
def test_a_search_runs_three_requests_whatever_its_page(service: SearchService, client: OpenSearch,
                                                        public: Principal, limit: int) -> None:
    """The search, its first document's chunks (read whole) and the other documents' chunks: three query phases
    per shard, for a page of 2 documents as of 30, two for a page of one (the collapse's inner hits ran one more
    per document and shard)."""
    index = service.settings.index.alias
    service.search({"query": "бетон"}, public)  # what a service reads once (vector coverage) is read
    before = query_phases(client, index)
    response = service.search({"query": "теплоизоляция наружных стен", "limit": limit}, public)
    assert len(response.results) == min(limit, response.meta.total_results) and response.results
    assert all(r.context_chunks for r in response.results)  # every document shows its passages
    requests = 2 if len(response.results) == 1 else 3
    assert query_phases(client, index) - before == requests * shards(client, index)


def _shown(response: SearchResponse) -> list[tuple[str, list[tuple[str | None, str, int | None]]]]:
    return [(r.id, [(c.clause, c.text, c.page_number) for c in r.context_chunks]) for r in response.results]


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("arguments", [{"search_mode": "fulltext"}, {"search_mode": "fulltext", "operator": "AND"},
                                       {"search_mode": "fulltext", "max_chunks": 5, "limit": 4}],
                         ids=["auto", "and", "five-chunks"])
def test_the_chunks_request_shows_the_passages_the_inner_hits_show(service: SearchService, public: Principal,
                                                                   question: str, arguments: dict[str, Any]) -> None:
    request = validate_request({"query": question, **arguments})
    planned = service.searcher.plan(request, public)
    coverage = service.coverage.get(public.groups)
    shown = []
    for plan in (planned.plan, dataclasses.replace(planned.plan, unit_hits=True)):  # unit_hits: inner hits
        found = service.searcher.execute(plan)
        shown.append(_shown(service.searcher.map(request, planned.parsed[0], plan, found, coverage)))
    assert shown[0] and shown[0] == shown[1]
