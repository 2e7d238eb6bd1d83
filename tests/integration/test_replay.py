"""A captured call replayed (``evaluation.passage_fit.replayed_response``, what the passage ranker is fit and
measured on) shows what the live call showed — the same passages, sized by the call's own meta, the units embedded
with the index's embedder (its recorded statistics) — and scores them as the live call is scored (an ``also``
document's labelled clause answers). Real norms ingested through ``run_ingest`` on a real node; the dev set asked as
the agent asks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch

from evaluation.answers import Shown, answers
from evaluation.capture import Captured, capture
from evaluation.evaluate import open_kept_clause_set, shown_passages
from evaluation.passage_fit import answered, names_of, replayed_response
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.answer.models import SearchResponse
from service.settings import EmbedderSettings
from tests.support.documents import SHARED, requires_shared
from tests.support.engine import drop_index_resources, ingest_norms, product_settings

pytestmark = [pytest.mark.integration, requires_shared]
DEV = SHARED / "construction_ru" / "dev_clause_set"
NORMS = ["Свод правил 12.13130.2009", "Свод правил 122.13330.2012", "Свод правил 300.1325800.2017",
         "Свод правил 241.1311500.2015", "Свод правил 253.1325800.2016", "Свод правил 267.1325800.2016"]
Live = dict[str, list[Shown]]


def key(request: dict[str, Any]) -> str:
    return json.dumps(request, sort_keys=True)


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
             navec_embedder: NavecEmbedder) -> Iterator[tuple[list[Captured], Live]]:
    settings = product_settings(opensearch_url)
    ingest_norms(SHARED, NORMS, tmp_path_factory.mktemp("replay"), settings, client, navec_embedder)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("OPENSEARCH_URL", opensearch_url)
        kept = open_kept_clause_set(settings.index.alias, SHARED / "construction_ru" /
                                    "russian_construction_standards" / "metadata", DEV / "clauses.jsonl",
                                    NavecEmbedder(EmbedderSettings()))
        live: Live = {}
        search = kept.service.search

        def remembered(request: dict[str, Any], principal: Principal, client_id: str | None = None
                       ) -> SearchResponse:
            response = search(request, principal, client_id)
            live[key(request)] = shown_passages(response, kept.ids)
            return response

        kept.service.search = remembered  # type: ignore[method-assign,assignment]
        yield capture(kept, DEV / "phrasings.jsonl"), live
    drop_index_resources(client, settings.index)


def labels(shown: list[Shown]) -> list[tuple[int, str | None, str | None, str]]:
    return [(s.rank, s.document, s.clause, s.text) for s in shown]


def test_a_replay_shows_the_live_calls_passages(captured: tuple[list[Captured], Live]) -> None:
    rows, live = captured
    assert len(rows) >= 50 and all(r.hits for r in rows)
    configured = NavecEmbedder(EmbedderSettings())  # without the statistics the index's ingest recorded
    differ = [r.query_id for r in rows if labels(shown_passages(replayed_response(r, configured, None), names_of(r)))
              != labels(live[key(r.request)])]
    assert not differ, differ


def test_a_replay_scores_the_answers_as_the_live_call(captured: tuple[list[Captured], Live]) -> None:
    rows, live = captured
    first = {r.query_id for r in rows if live[key(r.request)] and answers(live[key(r.request)][0], r.judged)}
    assert "d46" in first  # answered by an ``also`` document's clause (СП 267.1325800 п. 10.1.1.10)
    assert answered(rows, NavecEmbedder(EmbedderSettings()), None)["answer@1"] == len(first) / len(rows)
