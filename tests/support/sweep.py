"""The request space of ``search_documents`` swept call by call, each call bounded, and the engine's search
tasks read afterwards: shared by the real-node guard (tests/integration/search/test_bounded_searches.py) and
the chaos run's concurrent step (benchmarks/chaos.py)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch

from service.errors import StroidokError

MODES = ("hybrid", "semantic", "fulltext")
OPERATORS = ("AUTO", "AND", "OR", "PHRASE")
PAGES = (1, 2, 3, 4, 5)
LIMITS = (1, 3, 10)
MAX_CHUNKS = (1, 3, 10)
#: the most any one call may take before the sweep counts it as hung
CALL_BOUND_S = 10.0


def sweep_arguments(queries: tuple[str, ...], filters: dict[str, dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every mode × operator × page × limit × max_chunks of each query unfiltered, then every mode × operator
    × page with each kind of filter (limit 3)."""
    for query, mode, operator, page, limit, chunks in itertools.product(queries, MODES, OPERATORS, PAGES, LIMITS,
                                                                       MAX_CHUNKS):
        yield {"query": query, "search_mode": mode, "operator": operator, "page": page, "limit": limit,
               "max_chunks": chunks}
    for given, query, mode, operator, page in itertools.product(filters.values(), queries, MODES, OPERATORS,
                                                               PAGES):
        yield {"query": query, "search_mode": mode, "operator": operator, "page": page, "limit": 3, **given}


@dataclass
class SweepReport:
    calls: int = 0
    hung: list[dict[str, Any]] = field(default_factory=list)
    failed: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    totals: dict[tuple[str, ...], set[int]] = field(default_factory=dict)

    def record_total(self, arguments: dict[str, Any], total: int) -> None:
        """The document count a walk reports: the same on every page of it."""
        key = tuple(str(v) for k, v in sorted(arguments.items()) if k != "page")
        self.totals.setdefault(key, set()).add(total)

    @property
    def unstable_totals(self) -> dict[tuple[str, ...], set[int]]:
        return {key: totals for key, totals in self.totals.items() if len(totals) > 1}


def run_sweep(search: Callable[[dict[str, Any]], Any], arguments: list[dict[str, Any]], workers: int = 1,
              bound_s: float = CALL_BOUND_S) -> SweepReport:
    """Call ``search`` with each argument set, ``workers`` at a time, each waited for ``bound_s`` at most; a
    product error is recorded, a call still running past its bound is counted hung (its thread is left)."""
    report = SweepReport()
    pool = ThreadPoolExecutor(workers)
    try:
        for start in range(0, len(arguments), workers):
            batch = arguments[start:start + workers]
            futures: list[Future[Any]] = [pool.submit(search, dict(a)) for a in batch]
            for given, future in zip(batch, futures, strict=True):
                report.calls += 1
                try:
                    response = future.result(timeout=bound_s)
                except FutureTimeout:
                    report.hung.append(given)
                except StroidokError as exc:
                    report.failed.append((given, exc.code))
                else:
                    report.record_total(given, response.meta.total_results)
            if report.hung:
                break  # a hung search holds an engine core: the rest would only queue behind it
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return report


def running_searches(client: OpenSearch) -> list[dict[str, Any]]:
    """The engine's search tasks now running (the parents: what clients asked)."""
    listed = client.tasks.list(actions="indices:data/read/search*", detailed=True)
    return [task for node in listed.get("nodes", {}).values() for task in node.get("tasks", {}).values()
            if not task.get("parent_task_id")]
