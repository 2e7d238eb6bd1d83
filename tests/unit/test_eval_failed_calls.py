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
    ChunkResult,
    DocumentResult,
    Facets,
    Pagination,
    SearchMeta,
    SearchResponse,
    Suggestions,
    Timings,
)


def answer(query: str) -> SearchResponse:
    """One document whose passage states the width the first question's judged quote holds."""
    passage = ChunkResult(chunk_id="d1:1", chunk_index=1, text="Ширина выходов должна быть не менее 0,8 м.",
                          relevance_score=1.0, clause="4.2.19", page_number=10)
    result = DocumentResult(id="d1", title="СП 1.13130.2020", file_path="/a.txt", file_type="txt",
                            relevance_score=1.0, context_chunks=[passage])
    return SearchResponse(results=[result], meta=SearchMeta(
        query=query, total_results=1, route_used="hybrid", timings=Timings(), facets=Facets(),
        suggestions=Suggestions(), pagination=Pagination(page=1, limit=10, total_pages=1, has_more=False)))


class Service:
    """A search service whose engine fails the calls for the queries in ``failing``."""

    def __init__(self, failing: set[str]) -> None:
        self.failing = failing
        stats = {"nodes": {"n": {"process": {"cpu": {"total_in_millis": 0}}}}}
        self.client = SimpleNamespace(nodes=SimpleNamespace(stats=lambda **_: stats))

    def search(self, request: dict[str, Any], principal: object) -> SearchResponse:
        if request["query"] in self.failing:
            raise EngineTimeout("the engine did not answer in time")
        return answer(request["query"])


EVALSET = EvalSet(documents=[], queries={"q1": "ширина выходов", "q2": "высота ограждений", "q3": "уклон кровли"},
                  qrels={"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}},
                  answers={"q1": Judged(("не менее 0,8 м",)), "q2": Judged(("не менее 1,2 м",)),
                           "q3": Judged(("не менее 1,5 %",))})
IDS = {"d1": "d1"}


def test_a_failed_call_is_a_counted_miss() -> None:
    result = run_mode(Service({"высота ограждений", "уклон кровли"}), EVALSET, IDS, "hybrid")  # type: ignore[arg-type]
    assert result.answer_metrics["failed_calls"] == 2
    # three questions asked, the first answered, the failed ones misses: none lost from the count
    assert result.answer_metrics["answer@5"] == result.answer_metrics["answer@1"] == round(1 / 3, 4)
    assert result.answer_metrics["answer_chars_p50"] > 0  # the failed call adds no answer of size 0


def test_a_run_whose_every_call_failed_is_an_error() -> None:
    with pytest.raises(SearchError, match="every call"):
        run_mode(Service({"ширина выходов", "высота ограждений", "уклон кровли"}), EVALSET, IDS, "hybrid")  # type: ignore[arg-type]
