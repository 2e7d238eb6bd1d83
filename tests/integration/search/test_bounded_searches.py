"""No search may hang the engine: the whole request space of ``search_documents`` on a fixture of every file
kind (its chunks with their nested unit vectors, in several segments), with the engine's cardinality pruning
ON (its default on a cluster the product does not manage), each call bounded; afterwards no search task is
left running. Then the bound itself: a search the engine cannot finish in time answers ENGINE_TIMEOUT and
leaves no task behind."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from ingest.sample import load_standard, render_pdf, render_xlsx
from service.embedders.navec import NavecEmbedder
from service.errors import EngineTimeout
from service.opensearch import PRUNING_SETTING, bounded_search
from service.search import SearchService
from service.security import Principal
from service.settings import Settings
from tests.support.corpus import set_date, write_file
from tests.support.documents import CONSTRUCTION, SHARED
from tests.support.engine import drop_index_resources, product_settings
from tests.support.sweep import run_sweep, running_searches, sweep_arguments

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


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
               navec_embedder: NavecEmbedder) -> Iterator[tuple[Settings, Path]]:
    root = tmp_path_factory.mktemp("every-kind")
    write_every_kind(root)
    settings = product_settings(opensearch_url)
    report = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    assert not report.failed, [o.line() for o in report.outcomes if o.status == "failed"]
    # an archive's segments grow by merging: one large segment, as any index of some size has
    client.indices.forcemerge(index=settings.index.alias, max_num_segments=1)
    client.indices.refresh(index=settings.index.alias)
    # a later ingest adds a small segment of its own: pruning works segment by segment
    (root / "нормы" / "ГОСТ 26633-2015.txt").write_text("\f".join(pages("ГОСТ 26633-2015")), encoding="utf-8")
    report = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    assert [o.status for o in report.outcomes].count("indexed") == 1
    yield settings, root
    drop_index_resources(client, settings.index)


@pytest.fixture
def pruning_on(client: OpenSearch) -> Iterator[None]:
    """The engine's cardinality pruning at its default (as on a cluster the product does not manage)."""
    client.cluster.put_settings(body={"transient": {PRUNING_SETTING: 100}})
    yield
    client.cluster.put_settings(body={"transient": {PRUNING_SETTING: None}})


def service_for(settings: Settings, client: OpenSearch, embedder: NavecEmbedder) -> SearchService:
    settings = settings.model_copy(deep=True)
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "100000/minute"
    settings.search.log_queries = False
    return SearchService(settings, client, embedder)


def filters_of_each_kind(root: Path) -> dict[str, dict[str, Any]]:
    return {"document_types": {"document_types": ["txt", "docx"]},
            "path": {"path": [str(root / "нормы" / "ГОСТ 10180-2012.txt")]},
            "folder": {"folder": "сметы"}, "source_filter": {"source_filter": "сварка"},
            "date_range": {"date_range": {"from": "2024-01-01", "to": "2024-12-31"}},
            "cites": {"cites": "ГОСТ 10180"}, "current_only": {"current_only": True}}


@pytest.mark.usefixtures("pruning_on")
def test_no_call_of_the_whole_request_space_hangs_fails_or_leaves_a_search_running(
        every_kind: tuple[Settings, Path], client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    settings, root = every_kind
    segments = client.cat.segments(index=settings.index.alias, format="json", h="docs.count")
    assert max(int(s["docs.count"]) for s in segments) > QUERY_CACHE_MIN_SEGMENT  # the shape that hung
    assert len(segments) > 1  # and a small segment of the later ingest
    service = service_for(settings, client, navec_embedder)
    principal = Principal.of("tester", [])
    arguments = list(sweep_arguments(QUERIES, filters_of_each_kind(root)))
    report = run_sweep(lambda given: service.search(given, principal, "sweep"), arguments, workers=2)
    assert report.hung == [], f"searches still running after 10 s: {report.hung[:3]}"
    assert report.failed == []
    assert report.calls == len(arguments)
    assert report.unstable_totals == {}  # every page of a walk counts the same documents
    assert running_searches(client) == []


def slow_fetch(hits: int = 20) -> dict[str, Any]:
    """A request the engine spends half a minute on after its query phase: each hit fetched with script fields,
    each building a string by 40,000 concatenations (~50 ms), whatever the index's size."""
    script = {"script": {"source": "String s = ''; for (int i = 0; i < 40000; i++) { s += 'x'; } return s.length();"}}
    return {"size": hits, "_source": False, "query": {"match_all": {}},
            "script_fields": {f"s{i}": script for i in range(32)}}


def slow_query() -> dict[str, Any]:
    """A request the engine spends seconds on in its query phase, where its own timeout is checked."""
    script = {"source": "String s = ''; for (int i = 0; i < 20000; i++) { s += 'x'; } return s.length();"}
    return {"size": 1, "query": {"script_score": {"query": {"match_all": {}}, "script": script}}}


def test_a_search_the_client_stops_waiting_for_is_cancelled_in_the_engine(
        every_kind: tuple[Settings, Path], client: OpenSearch) -> None:
    settings, _ = every_kind
    began = time.monotonic()
    with pytest.raises(EngineTimeout) as raised:
        bounded_search(client, settings.index.alias, slow_fetch(), {}, 0.5)
    assert raised.value.code == "ENGINE_TIMEOUT" and raised.value.details == {"timeout_s": 0.5}
    assert time.monotonic() - began < 10
    deadline = time.monotonic() + 5
    while running_searches(client) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert running_searches(client) == []


def test_a_search_past_its_engine_side_bound_answers_engine_timeout_at_once(
        every_kind: tuple[Settings, Path], client: OpenSearch) -> None:
    settings, _ = every_kind
    began = time.monotonic()
    with pytest.raises(EngineTimeout):
        bounded_search(client, settings.index.alias, slow_query(), {"allow_partial_search_results": "false"}, 0.2)
    assert time.monotonic() - began < 5  # the engine's own timeout, not the client's grace
    assert running_searches(client) == []
