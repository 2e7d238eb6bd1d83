"""No search may hang the engine: the whole request space of ``search_documents`` on a fixture of every file
kind (its chunks with their nested unit vectors, in several segments), with the engine's cardinality pruning
ON (its default on a cluster the product does not manage), each call bounded; afterwards no search task is
left running. Then the bound itself: a search the engine cannot finish in time answers ENGINE_TIMEOUT and
leaves no task behind."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.engine.gateway import GRACE_S, PRUNING_SETTING, bounded_search, cancel_searches, long_searches
from service.errors import EngineTimeout
from service.search.service import SearchService
from service.settings import Settings
from tests.support.documents import require_shared
from tests.support.engine import drop_index_resources, product_settings
from tests.support.sweep import (
    QUERIES,
    QUERY_CACHE_MIN_SEGMENT,
    filters_of_each_kind,
    ingest_every_kind,
    run_sweep,
    running_searches,
    searches_left,
    sweep_arguments,
)


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
               navec_embedder: NavecEmbedder) -> Iterator[tuple[Settings, Path]]:
    require_shared()  # its documents are rendered from the shared corpus
    root = tmp_path_factory.mktemp("every-kind")
    settings = product_settings(opensearch_url)
    ingest_every_kind(root, settings, client, navec_embedder)
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


def slow_fetch(hits: int = 10_000) -> dict[str, Any]:
    """A request the engine spends many seconds on after its query phase, in small steps: every hit fetched with
    one script field building a string by 20,000 concatenations (~13 ms here; the fixture's ~1,250 chunks
    take ~16 s). The engine checks for cancellation
    between hits, so a cancelled search stops within one hit's work however slow or busy the machine is (32
    fields of 40,000 concatenations a hit kept a cancelled search running 8-10 s on a busy machine)."""
    script = {"script": {"source": "String s = ''; for (int i = 0; i < 20000; i++) { s += 'x'; } return s.length();"}}
    return {"size": hits, "_source": False, "query": {"match_all": {}}, "script_fields": {"s": script}}


def slow_query() -> dict[str, Any]:
    """A request the engine spends about a second on in its query phase (a script per document, ~0.5 ms each over
    ~1,250 chunks), where its own timeout is checked between intervals of documents."""
    script = {"source": "String s = ''; for (int i = 0; i < 4000; i++) { s += 'x'; } return s.length();"}
    return {"size": 1, "query": {"script_score": {"query": {"match_all": {}}, "script": script}}}


#: how long a cancelled task may take to reach its next check on a slow, busy machine (one step of the requests
#: above is milliseconds; what is asserted promptly is that the engine took the cancel)
SETTLE_S = 60


def cancelled_or_gone(client: OpenSearch) -> bool:
    """Every search still running has been told to stop (the product's part; the engine stops it at its next
    check)."""
    return all(task.cancelled for task in running_searches(client))


def test_a_search_the_client_stops_waiting_for_is_cancelled_in_the_engine(
        every_kind: tuple[Settings, Path], client: OpenSearch) -> None:
    settings, _ = every_kind
    began = time.monotonic()
    with pytest.raises(EngineTimeout) as raised:
        bounded_search(client, settings.index.alias, slow_fetch(), {}, 0.5)
    assert raised.value.code == "ENGINE_TIMEOUT" and raised.value.details == {"timeout_s": 0.5}
    assert time.monotonic() - began < 0.5 + GRACE_S + 4  # the client's own bound, then the cancel
    assert cancelled_or_gone(client)
    assert searches_left(client, within_s=SETTLE_S) == []


def test_a_slow_query_phase_answers_engine_timeout_within_its_bound_and_leaves_nothing_running(
        every_kind: tuple[Settings, Path], client: OpenSearch) -> None:
    # the engine checks its own timeout between intervals of documents (sooner or later with the machine's load);
    # either way the caller hears ENGINE_TIMEOUT within the bound and the client's grace, and nothing runs on
    settings, _ = every_kind
    began = time.monotonic()
    with pytest.raises(EngineTimeout) as raised:
        bounded_search(client, settings.index.alias, slow_query(), {"allow_partial_search_results": "false"}, 0.2)
    assert raised.value.details == {"timeout_s": 0.2}
    assert time.monotonic() - began < 0.2 + GRACE_S + 4
    assert cancelled_or_gone(client)
    assert searches_left(client, within_s=SETTLE_S) == []


def test_a_search_running_past_the_bound_is_listed_with_its_opaque_id_until_cancelled(
        every_kind: tuple[Settings, Path], client: OpenSearch) -> None:
    settings, _ = every_kind
    assert searches_left(client, within_s=SETTLE_S) == []  # nothing of an earlier test listed as this one
    outcome: list[str] = []

    def wait_for_it() -> None:
        try:
            bounded_search(client, settings.index.alias, slow_fetch(), {}, 3.0)
        except EngineTimeout as exc:
            outcome.append(exc.code)

    waiting = threading.Thread(target=wait_for_it)
    waiting.start()
    deadline = time.monotonic() + 10
    while not (listed := long_searches(client, 1.0)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(listed) == 1 and (listed[0].opaque_id or "").startswith("stroidok-search-")
    assert listed[0].cancellable and listed[0].running_s > 1.0 and not listed[0].cancelled
    assert cancel_searches(client, listed[0].opaque_id or "") == 1
    assert cancelled_or_gone(client)  # the engine took the cancel at once
    waiting.join(SETTLE_S)
    assert outcome == ["ENGINE_TIMEOUT"]  # cancelled in the engine: its caller told so, not a crash
    assert searches_left(client, within_s=SETTLE_S) == []
