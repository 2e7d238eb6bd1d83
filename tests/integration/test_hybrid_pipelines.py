"""Native hybrid retrieval through the product's search pipelines, checked against the fusion formulas.

Every fixture document contains the query word (so it is in the BM25 leg) and k covers every document
(so it is in the k-NN leg); each document's combined score is then fully determined by its two leg
scores, which the test reads from single-leg searches and fuses by hand.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from opensearchpy import OpenSearch

from service.engine.index_admin.apply import apply_all
from service.search.dsl.build import build_hybrid_body, build_knn_leg, build_search_body
from service.search.dsl.operators import build_bm25_leg
from service.settings import IndexSettings

pytestmark = pytest.mark.integration

QUERY_TEXT = "бетон"
QUERY_VECTOR = [1.0, 0.0, 0.0, 0.0]
DOCS = {
    # text relevance falls from a to e; vector similarity rises from a to e
    "a": ("бетон бетон бетон бетон прочность бетона", [0.0, 1.0, 0.0, 0.0]),
    "b": ("бетон бетон марка цемента", [0.3, 1.0, 0.2, 0.0]),
    "c": ("бетон бетон и арматура в каркасе здания", [0.6, 0.6, 0.0, 0.1]),
    "d": ("бетон и кирпич, отделка фасада, кровля и окна здания", [0.9, 0.3, 0.1, 0.0]),
    "e": ("бетон упоминается здесь однажды среди многих других слов о стройке и проекте", [1.0, 0.05, 0.0, 0.0]),
}


@pytest.fixture
def fixture_index(client: OpenSearch, index_settings: IndexSettings) -> IndexSettings:
    # one shard: the expected scores are computed from each leg's own scores, which with two shards would
    # carry per-shard BM25 statistics (four documents split unevenly); the pipeline's math is what is tested
    index_settings = index_settings.model_copy(update={"shards": 1})
    apply_all(client, index_settings)
    for doc_id, (text, vector) in DOCS.items():
        client.index(index=index_settings.alias, id=doc_id, body={"text": text, "embedding": vector})
    client.indices.refresh(index=index_settings.alias)
    return index_settings


def leg_scores(client: OpenSearch, index: str, leg: dict[str, Any]) -> dict[str, float]:
    hits = client.search(index=index, body=build_search_body(leg, 10))["hits"]["hits"]
    return {h["_id"]: h["_score"] for h in hits}


def min_max(scores: dict[str, float]) -> dict[str, float]:
    low, high = min(scores.values()), max(scores.values())
    return {k: max((v - low) / (high - low), 0.001) for k, v in scores.items()}


def hybrid(client: OpenSearch, index: str, pipeline: str) -> list[tuple[str, float]]:
    body = build_hybrid_body([build_bm25_leg(QUERY_TEXT), build_knn_leg(QUERY_VECTOR, k=10)], size=10)
    hits = client.search(index=index, body=body, params={"search_pipeline": pipeline})["hits"]["hits"]
    assert all("embedding" not in h["_source"] for h in hits)
    return [(h["_id"], h["_score"]) for h in hits]


def legs(client: OpenSearch, index: str) -> tuple[dict[str, float], dict[str, float]]:
    bm25 = leg_scores(client, index, build_bm25_leg(QUERY_TEXT))
    knn = leg_scores(client, index, build_knn_leg(QUERY_VECTOR, k=10))
    assert set(bm25) == set(knn) == set(DOCS)
    return bm25, knn


def test_legs_disagree_on_the_fixture(client: OpenSearch, fixture_index: IndexSettings) -> None:
    bm25, knn = legs(client, fixture_index.alias)
    assert max(bm25, key=lambda d: bm25[d]) == "a"
    assert max(knn, key=lambda d: knn[d]) == "e"


@pytest.mark.parametrize("bm25_weight", [0.8, 0.2])
def test_min_max_pipeline_combines_legs_by_weighted_mean(
    client: OpenSearch, index_settings: IndexSettings, fixture_index: IndexSettings, bm25_weight: float
) -> None:
    settings = fixture_index.model_copy(update={"bm25_weight": bm25_weight})
    apply_all(client, settings)
    bm25, knn = (min_max(s) for s in legs(client, settings.alias))
    expected = {d: bm25_weight * bm25[d] + (1 - bm25_weight) * knn[d] for d in DOCS}

    got = hybrid(client, settings.alias, settings.hybrid_pipeline)

    assert [d for d, _ in got] == sorted(expected, key=lambda d: expected[d], reverse=True)
    for doc_id, score in got:
        assert math.isclose(score, expected[doc_id], abs_tol=2e-3), (doc_id, score, expected[doc_id])
    assert got[0][0] == ("a" if bm25_weight > 0.5 else "e")


def floored(scores: dict[str, float], floor: float) -> dict[str, float]:
    high = max(scores.values())
    return {k: (v - floor) / (high - floor) for k, v in scores.items()}


def test_min_max_floors_scale_each_leg_from_its_floor(client: OpenSearch, fixture_index: IndexSettings) -> None:
    # the e5 shape (BM25 from 0, dense from a fixed floor) with a dense floor under every fixture score
    settings = fixture_index.model_copy(update={"bm25_weight": 0.3, "bm25_lower_bound": 0.0,
                                                "dense_lower_bound": 0.4})
    apply_all(client, settings)
    bm25, knn = legs(client, settings.alias)
    assert min(knn.values()) > 0.4
    expected = {d: 0.3 * floored(bm25, 0.0)[d] + 0.7 * floored(knn, 0.4)[d] for d in DOCS}
    plain = {d: 0.3 * min_max(bm25)[d] + 0.7 * min_max(knn)[d] for d in DOCS}
    assert not all(math.isclose(expected[d], plain[d], abs_tol=2e-3) for d in DOCS)  # the floors matter here

    got = hybrid(client, settings.alias, settings.hybrid_pipeline)

    assert [d for d, _ in got] == sorted(expected, key=lambda d: expected[d], reverse=True)
    for doc_id, score in got:
        assert math.isclose(score, expected[doc_id], abs_tol=2e-3), (doc_id, score, expected[doc_id])


def test_rrf_pipeline_fuses_ranks(client: OpenSearch, fixture_index: IndexSettings) -> None:
    bm25, knn = legs(client, fixture_index.alias)
    rank = {name: {d: i + 1 for i, d in enumerate(sorted(s, key=lambda d: s[d], reverse=True))}
            for name, s in (("bm25", bm25), ("knn", knn))}
    k = fixture_index.rrf_rank_constant
    expected = {d: 1 / (k + rank["bm25"][d]) + 1 / (k + rank["knn"][d]) for d in DOCS}

    got = hybrid(client, fixture_index.alias, fixture_index.rrf_pipeline)

    for doc_id, score in got:
        assert math.isclose(score, expected[doc_id], rel_tol=1e-3), (doc_id, score, expected[doc_id])
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True)


def test_hybrid_filter_applies_to_both_legs(client: OpenSearch, fixture_index: IndexSettings) -> None:
    body = build_hybrid_body(
        [build_bm25_leg(QUERY_TEXT), build_knn_leg(QUERY_VECTOR, k=10)], size=10,
        filter_={"ids": {"values": ["b", "d"]}},
    )
    hits = client.search(index=fixture_index.alias, body=body,
                         params={"search_pipeline": fixture_index.hybrid_pipeline})["hits"]["hits"]
    assert {h["_id"] for h in hits} == {"b", "d"}
