"""The concurrency benchmark's own logic: merging raw runs, the control line, and the stand-in server it starts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from service.search.answer.models import Facets, Pagination, SearchMeta, SearchResponse, Suggestions, Timings
from tests.support.load import Run, control_line
from tests.support.servers import http_server


def test_merged_runs_keep_every_call_and_their_joint_throughput() -> None:
    first = Run(latencies=[10.0, 20.0], errors=1, wall_s=1.0)
    second = Run(latencies=[30.0], errors=0, wall_s=2.0)
    merged = Run.merged(first, second)
    assert merged.latencies == [10.0, 20.0, 30.0]
    assert merged.errors == 1
    assert merged.throughput == 4 / 3.0  # 3 answered + 1 failed call in 3 s


def test_control_line_checks_each_raw_run_against_the_bound_of_the_other() -> None:
    # 100 clients at 20 calls/s: a bound of 100 / 20 s + 200 ms = 5,200 ms
    steady = Run(latencies=[5000.0] * 20, wall_s=1.0)
    slow = Run(latencies=[5400.0] * 10, wall_s=1.0)  # 10 calls/s: its own bound for the other is 10,200 ms
    line = control_line(100, slow, steady)
    assert "first p95 5400 vs 5200 ms → FAIL" in line
    assert "again p95 5000 vs 10200 ms → PASS" in line


def test_the_standin_server_answers_the_stored_answer_through_the_product_server(tmp_path: Path) -> None:
    meta = SearchMeta(query="стоп", total_results=0, route_used="bm25", timings=Timings(), facets=Facets(),
                      suggestions=Suggestions(), pagination=Pagination(page=1, limit=10, total_pages=0, has_more=False))
    stored = tmp_path / "answer.json"
    stored.write_text(SearchResponse(results=[], meta=meta).model_dump_json(), encoding="utf-8")
    standin = ["--answer", str(stored), "--wait-ms", "1"]
    with http_server(dict(os.environ), standin=standin) as (url, _):  # as `--standin-ms` starts it

        async def call() -> dict[str, Any]:
            async with Client(url) as client:
                result = await client.call_tool("search_documents", {"query": "любой вопрос"})
                assert not result.is_error
                return result.structured_content or {}

        answer = anyio.run(call)
    assert answer["meta"]["query"] == "стоп"  # the stored answer, whatever the question
    assert answer["results"] == []
