"""``stroidok eval`` counts a call the engine failed as a miss and reports how many failed, instead of losing
the run to one ENGINE_TIMEOUT; a run whose every call failed is an error, not a table of zeros."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from evaluation.answers import Judged
from evaluation.evaluate import EvalSet, run_mode
from service.errors import EngineTimeout, SearchError
from service.search.answer.models import (
    Facets,
    Pagination,
    SearchMeta,
    SearchResponse,
    Suggestions,
    Timings,
)


def empty_answer(query: str) -> SearchResponse:
    return SearchResponse(results=[], meta=SearchMeta(
        query=query, total_results=0, route_used="hybrid", timings=Timings(), facets=Facets(),
        suggestions=Suggestions(), pagination=Pagination(page=1, limit=10, total_pages=0, has_more=False)))


class Service:
    """A search service whose engine fails the calls for the queries in ``failing``."""

    def __init__(self, failing: set[str]) -> None:
        self.failing = failing
        stats = {"nodes": {"n": {"process": {"cpu": {"total_in_millis": 0}}}}}
        self.client = SimpleNamespace(nodes=SimpleNamespace(stats=lambda **_: stats))

    def search(self, request: dict[str, Any], principal: object) -> SearchResponse:
        if request["query"] in self.failing:
            raise EngineTimeout("the engine did not answer in time")
        return empty_answer(request["query"])


EVALSET = EvalSet(documents=[], queries={"q1": "ширина выходов", "q2": "высота ограждений"},
                  qrels={"q1": {"d1": 1}, "q2": {"d2": 1}},
                  answers={"q1": Judged(("не менее 0,8 м",)), "q2": Judged(("не менее 1,2 м",))})


def test_a_failed_call_is_a_counted_miss() -> None:
    result = run_mode(Service({"высота ограждений"}), EVALSET, {}, "hybrid")  # type: ignore[arg-type]
    assert result.answer_metrics["failed_calls"] == 1
    assert result.answer_metrics["answer@5"] == 0.0  # two questions asked, neither answered, none lost


def test_a_run_whose_every_call_failed_is_an_error() -> None:
    with pytest.raises(SearchError, match="every call"):
        run_mode(Service({"ширина выходов", "высота ограждений"}), EVALSET, {}, "hybrid")  # type: ignore[arg-type]
