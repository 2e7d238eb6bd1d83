"""The request space of ``search_documents`` swept call by call, each call bounded, and the engine's search
tasks read afterwards: shared by the real-node guard (tests/integration/search/test_bounded_searches.py) and
the chaos run's concurrent step (benchmarks/chaos.py)."""

from __future__ import annotations

import itertools
import shutil
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from evaluation.sample import load_standard, render_pdf, render_xlsx
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.embedders.base import Embedder
from service.engine.gateway import RunningSearch, search_tasks
from service.errors import StroidokError
from service.settings import Settings
from tests.support.corpus import set_date, write_file
from tests.support.documents import CONSTRUCTION, SHARED

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


def searches_left(client: OpenSearch, within_s: float) -> list[RunningSearch]:
    """The search tasks still running after waiting up to ``within_s`` for them to end (a cancelled task
    stops at its next check)."""
    deadline = time.monotonic() + within_s
    while (running := running_searches(client)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return running


def running_searches(client: OpenSearch) -> list[RunningSearch]:
    """The engine's search tasks now running (the parents: what clients asked)."""
    return search_tasks(client)


QUERIES = ("требования к конструкциям", "требования")
DOCX = CONSTRUCTION / "shasha_rag_task" / "docs"


def pages(name: str, first: int = 0, count: int = 12) -> list[str]:
    return [p["page_content"] for p in load_standard(SHARED, name)["pages"][first:first + count]]


#: whole codes: with their chunks' nested unit documents the first ingest's segment holds > 10,000 documents,
#: the size from which the engine's query cache caches a filter — the shape that hung with pruning on
CODES = {"нормы": ("ГОСТ 10180-2012", "Свод правил 60.13330.2020", "Свод правил 30.13330.2020"),
         "сметы": ("Свод правил 42.13330.2016", "Свод правил 485.1311500.2020", "Свод правил 502.1325800.2021")}
QUERY_CACHE_MIN_SEGMENT = 10_000


def write_every_kind(root: Path) -> None:
    """TXT with form feeds, a Word file and its tables, a spreadsheet, a PDF with a text layer; two folders."""
    for folder, names in CODES.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            (root / folder / f"{name}.txt").write_text("\f".join(pages(name, count=1000)), encoding="utf-8")
    shutil.copyfile(DOCX / sorted(p.name for p in DOCX.glob("Постановление*.docx"))[0], root / "нормы" / "состав.docx")
    write_file(root / "нормы" / "краткая.docx", "Требования к конструкциям фундаментов. Бетон класса В25.")
    render_xlsx(pages("ГОСТ 10060-2012", count=3), root / "сметы" / "ведомость.xlsx")
    render_pdf(pages("ГОСТ 10922-2012", count=8), root / "сметы" / "сварка.pdf", "Сварные соединения")
    for path in root.rglob("*.*"):
        set_date(path, "2024-06-01")


def filters_of_each_kind(root: Path) -> dict[str, dict[str, Any]]:
    return {"document_types": {"document_types": ["txt", "docx"]},
            "path": {"path": [str(root / "нормы" / "ГОСТ 10180-2012.txt")]},
            "folder": {"folder": "сметы"}, "source_filter": {"source_filter": "сварка"},
            "date_range": {"date_range": {"from": "2024-01-01", "to": "2024-12-31"}},
            "cites": {"cites": "ГОСТ 10180"}, "current_only": {"current_only": True}}


def ingest_every_kind(root: Path, settings: Settings, client: OpenSearch, embedder: Embedder) -> None:
    """``write_every_kind`` ingested through the product, merged into one large segment, then one more code
    ingested on its own (a small segment beside it). With unit vectors (``settings`` is set so, for the
    search too): their nested documents make the segment large enough for the engine's query cache."""
    settings.embedder.unit_vectors = "on"
    write_every_kind(root)
    report = run_ingest(IngestOptions([root]), settings, client, embedder, quiet=True)
    assert not report.failed, [o.line() for o in report.outcomes if o.status == "failed"]
    # an archive's segments grow by merging: one large segment, as any index of some size has
    client.indices.forcemerge(index=settings.index.alias, max_num_segments=1)
    client.indices.refresh(index=settings.index.alias)
    # a later ingest adds a small segment of its own: pruning works segment by segment
    (root / "нормы" / "ГОСТ 26633-2015.txt").write_text("\f".join(pages("ГОСТ 26633-2015")), encoding="utf-8")
    report = run_ingest(IngestOptions([root]), settings, client, embedder, quiet=True)
    assert [o.status for o in report.outcomes].count("indexed") == 1
