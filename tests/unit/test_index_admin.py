from __future__ import annotations

from typing import Any

import pytest

from service.engine.index_admin.templates import (
    HASH_KEY,
    build_hybrid_pipeline,
    build_index_template,
    build_rrf_pipeline,
    load_json,
    wanted_pipelines,
)
from service.settings import IndexSettings


def test_template_follows_settings() -> None:
    settings = IndexSettings(alias="docs", embedding_dim=768, replicas=1)
    body = build_index_template(load_json("chunks.json"), settings)
    assert body["index_patterns"] == ["docs-0*"]
    assert body["template"]["mappings"]["properties"]["embedding"]["dimension"] == 768
    assert body["template"]["settings"]["index"]["number_of_replicas"] == 1
    assert "_comment" not in body


def template_hash(body: dict[str, Any]) -> str:
    return str(body["template"]["mappings"]["_meta"][HASH_KEY])


def test_template_hash_changes_with_content_only() -> None:
    raw = load_json("chunks.json")
    a = build_index_template(raw, IndexSettings(embedding_dim=300))
    b = build_index_template(raw, IndexSettings(embedding_dim=300))
    c = build_index_template(raw, IndexSettings(embedding_dim=384))
    assert template_hash(a) == template_hash(b)
    assert template_hash(a) != template_hash(c)


def test_hybrid_pipeline_carries_weights_and_technique() -> None:
    body = build_hybrid_pipeline(load_json("pipelines/hybrid.json"),
                                 IndexSettings(bm25_weight=0.7, normalization="l2", combination="harmonic_mean"))
    processor = body["phase_results_processors"][0]["normalization-processor"]
    assert processor["combination"]["parameters"]["weights"] == [0.7, 0.3]
    assert processor["normalization"]["technique"] == "l2"
    assert processor["combination"]["technique"] == "harmonic_mean"


def test_hybrid_pipeline_carries_min_max_floors_per_leg() -> None:
    raw = load_json("pipelines/hybrid.json")
    body = build_hybrid_pipeline(raw, IndexSettings(dense_lower_bound=0.875))
    normalization = body["phase_results_processors"][0]["normalization-processor"]["normalization"]
    assert normalization["parameters"]["lower_bounds"] == [{"mode": "ignore"}, {"mode": "apply", "min_score": 0.875}]
    plain = build_hybrid_pipeline(raw, IndexSettings())
    assert "parameters" not in plain["phase_results_processors"][0]["normalization-processor"]["normalization"]
    z_score = build_hybrid_pipeline(raw, IndexSettings(bm25_lower_bound=0, normalization="z_score"))
    assert "parameters" not in z_score["phase_results_processors"][0]["normalization-processor"]["normalization"]


def test_index_floors_read_none_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STROIDOK_INDEX_DENSE_LOWER_BOUND", "none")
    monkeypatch.setenv("STROIDOK_INDEX_BM25_LOWER_BOUND", "0")
    assert (IndexSettings().bm25_lower_bound, IndexSettings().dense_lower_bound) == (0.0, None)


def test_rrf_pipeline_carries_rank_constant() -> None:
    body = build_rrf_pipeline(load_json("pipelines/rrf.json"), IndexSettings(rrf_rank_constant=20))
    assert body["phase_results_processors"][0]["score-ranker-processor"]["combination"]["rank_constant"] == 20


def test_default_weights_are_the_measured_best() -> None:
    pipelines = wanted_pipelines(IndexSettings())
    hybrid = pipelines["stroidok-chunks-hybrid"]["phase_results_processors"][0]["normalization-processor"]
    assert hybrid["combination"]["parameters"]["weights"] == [0.9, 0.1]
    assert set(pipelines) == {"stroidok-chunks-hybrid", "stroidok-chunks-rrf", "stroidok-chunks-single"}


def test_replicas_expand_to_a_second_node_unless_fixed() -> None:
    from service.engine.index_admin.templates import replica_settings

    assert replica_settings(IndexSettings()) == {"auto_expand_replicas": "0-1"}
    assert replica_settings(IndexSettings(replicas=2)) == {"number_of_replicas": 2, "auto_expand_replicas": False}


def test_pruning_left_on_is_a_notice_naming_the_setting_and_why() -> None:
    from service.engine.gateway import PRUNING_SETTING
    from service.engine.index_admin.guards import PruningState

    assert PruningState(0).notice is None and PruningState(0, changed=True).notice is None
    notice = PruningState(100, refused=True).notice
    assert notice is not None and PRUNING_SETTING in notice and "may not change" in notice and "22582" in notice
    assert "may not change" not in (PruningState(100).notice or "")
