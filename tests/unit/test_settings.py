from __future__ import annotations

from pathlib import Path

import pytest

from service.settings import EngineSettings, Settings


def test_opensearch_url_defaults_to_the_managed_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENSEARCH_URL", raising=False)
    monkeypatch.delenv("STROIDOK_OPENSEARCH_URL", raising=False)
    monkeypatch.setenv("STROIDOK_ENGINE_HTTP_PORT", "9311")
    assert Settings().opensearch_url == "http://127.0.0.1:9311"


def test_opensearch_url_honours_the_conventional_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENSEARCH_URL", "http://search:9200")
    assert Settings().opensearch_url == "http://search:9200"


def test_java_homes_come_from_their_conventional_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENSEARCH_JAVA_HOME", "/opt/a")
    monkeypatch.setenv("JAVA_HOME", "/opt/b")
    settings = EngineSettings()
    assert settings.opensearch_java_home == Path("/opt/a")
    assert settings.java_home == Path("/opt/b")


def test_state_dir_is_per_port(tmp_path: Path) -> None:
    assert EngineSettings(home=tmp_path, http_port=9201).state_dir == tmp_path / "nodes" / "9201"


def test_bad_heap_is_rejected() -> None:
    with pytest.raises(ValueError):
        EngineSettings(heap="lots")


def test_vector_dimension_and_fusion_weight_follow_the_embedder_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluation.evaluate import eval_settings
    from service.settings import Settings

    monkeypatch.delenv("STROIDOK_INDEX_EMBEDDING_DIM", raising=False)
    monkeypatch.delenv("STROIDOK_INDEX_BM25_WEIGHT", raising=False)
    navec = Settings()
    assert navec.index.embedding_dim == 300
    assert eval_settings(navec, "x", "e5", suffix=True).index.embedding_dim == 384  # a copy re-derives it
    e5 = eval_settings(navec, "x", "e5")
    assert (navec.index.bm25_weight, e5.index.bm25_weight) == (0.9, 0.3)
    assert (navec.index.bm25_lower_bound, navec.index.dense_lower_bound) == (None, None)
    assert (e5.index.bm25_lower_bound, e5.index.dense_lower_bound) == (0.0, 0.875)
    back = eval_settings(e5, "x", "navec")  # a copy re-derives every derived field, the floors included
    assert (back.index.bm25_weight, back.index.dense_lower_bound) == (0.9, None)
    monkeypatch.setenv("STROIDOK_INDEX_EMBEDDING_DIM", "128")
    monkeypatch.setenv("STROIDOK_INDEX_BM25_WEIGHT", "0.5")
    assert eval_settings(Settings(), "x", "e5").index.embedding_dim == 128
    assert eval_settings(Settings(), "x", "e5").index.bm25_weight == 0.5
