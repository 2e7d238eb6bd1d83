"""The http embedder against a local OpenAI-compatible endpoint; navec tokenization and SIF statistics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from service.embedders.http import HttpEmbedder
from service.embedders.navec import NavecEmbedder, fit_stats, tokenize
from service.errors import ConfigError, EmbeddingError
from service.settings import EmbedderSettings
from tests.support.embedding_endpoint import embeddings_endpoint

RECEIVED: list[dict[str, Any]] = []


def fake_embeddings(body: dict[str, Any], headers: Any) -> tuple[int, dict[str, Any] | None]:
    """[len(text), 1, 0] per input, in reverse order (the client must sort by index); keeps bodies."""
    RECEIVED.append(body)
    if headers.get("Authorization") != "Bearer k":
        return 401, None
    data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])]
    return 200, {"data": data[::-1], "model": body["model"]}


@pytest.fixture
def endpoint() -> Iterator[str]:
    with embeddings_endpoint(fake_embeddings) as url:
        yield url


def settings(url: str, **extra: Any) -> EmbedderSettings:
    return EmbedderSettings(provider="http", url=url, model="m", dimension=3, api_key="k", batch_size=2, **extra)


def test_http_embedder_batches_orders_and_normalizes(endpoint: str) -> None:
    vectors = HttpEmbedder(settings(endpoint)).embed_documents(["a", "bbb", "cc"])
    assert vectors.shape == (3, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[1][0] > vectors[2][0] > vectors[0][0]


def test_http_embedder_marks_queries_and_passages_for_asymmetric_models(endpoint: str) -> None:
    RECEIVED.clear()
    embedder = HttpEmbedder(settings(endpoint, query_prefix="query: ", passage_prefix="passage: ", input_type=True))
    embedder.embed_documents(["бетон"])
    embedder.embed_query("прочность")
    assert [(b["input"], b["input_type"]) for b in RECEIVED] == [(["passage: бетон"], "passage"),
                                                                  (["query: прочность"], "query")]


def test_http_embedder_sends_text_unchanged_by_default(endpoint: str) -> None:
    RECEIVED.clear()
    HttpEmbedder(settings(endpoint)).embed_query("прочность")
    assert RECEIVED == [{"model": "m", "input": ["прочность"]}]


def test_http_embedder_reports_a_failing_endpoint(endpoint: str) -> None:
    embedder = HttpEmbedder(settings(endpoint).model_copy(update={"api_key": "wrong"}))
    with pytest.raises(EmbeddingError, match="401"):
        embedder.embed_query("бетон")


def test_http_embedder_refuses_a_dimension_mismatch(endpoint: str) -> None:
    with pytest.raises(ConfigError, match="dimension 3"):
        HttpEmbedder(settings(endpoint).model_copy(update={"dimension": 4})).embed_documents(["x"])


def test_http_embedder_needs_url_model_and_dimension() -> None:
    with pytest.raises(ConfigError):
        HttpEmbedder(EmbedderSettings(provider="http"))


def test_tokenize_folds_case_yo_and_stress() -> None:
    assert tokenize("Ёмкость УДАРЕ\u0301НИЕ, 48.13330 и тепло-изоляция") == ["емкость", "ударение", "и",
                                                                             "тепло-изоляция"]


def test_fit_stats_counts_and_drops_rare_words() -> None:
    stats = fit_stats([["бетон", "бетон", "сталь"], ["бетон"]], min_count=2)
    assert stats == {"total": 4, "counts": {"бетон": 3}}


@pytest.fixture(scope="module")
def navec() -> NavecEmbedder:
    return NavecEmbedder(EmbedderSettings())


def test_navec_vectors_are_unit_length_and_similar_for_related_texts(navec: NavecEmbedder) -> None:
    navec.fit(["пожарная безопасность зданий", "прочность бетона", "футбольный матч"] * 5)
    docs = navec.embed_documents(["требования пожарной безопасности", "испытание бетона на прочность"])
    query = navec.embed_query("прочность бетона на сжатие")
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert query @ docs[1] > query @ docs[0]


def test_navec_gives_a_zero_vector_for_unknown_words(navec: NavecEmbedder) -> None:
    assert not navec.embed_documents(["48.13330 10180-2012"]).any()


def test_navec_can_leave_question_and_stop_words_out_of_the_average() -> None:
    embedder = NavecEmbedder(EmbedderSettings(stop_words=True))
    stats = embedder.fit(["прочность бетона на сжатие", "пожарная безопасность зданий"] * 3)
    assert stats["stop_words"] is True and "на" not in stats["counts"]
    plain, asked = embedder.embed_documents(["прочность бетона", "какая прочность у бетона"])
    assert np.allclose(plain, asked, atol=1e-5)


def test_an_index_fitted_without_stop_words_keeps_embedding_them() -> None:
    embedder = NavecEmbedder(EmbedderSettings(stop_words=True))
    embedder.load_stats({"total": 0, "counts": {}, "pc": None})
    plain, asked = embedder.embed_documents(["прочность бетона", "в каком году прочность бетона"])
    assert not np.allclose(plain, asked, atol=1e-3)


def test_navec_statistics_loaded_later_replace_the_word_weights_already_used(navec: NavecEmbedder) -> None:
    """A word's weighted vector is cached; loading an index's statistics must drop those weights."""
    text = "бетон арматура"
    navec.load_stats({"total": 0, "counts": {}, "pc": None})
    before = navec.embed_documents([text])[0]
    stats = {"total": 1000, "counts": {"бетон": 999}, "pc": None}
    navec.load_stats(stats)
    fresh = NavecEmbedder(EmbedderSettings())
    fresh.load_stats(stats)
    after = navec.embed_documents([text])[0]
    assert np.allclose(after, fresh.embed_documents([text])[0]) and not np.allclose(after, before)


def test_navec_sums_a_batch_bit_for_bit_as_word_by_word(navec: NavecEmbedder) -> None:
    navec.fit(["пожарная безопасность зданий", "прочность бетона", "футбольный матч"] * 5)
    texts = ["требования пожарной безопасности к зданиям", "", "48.13330", "и в на",
             "испытание бетона на прочность при сжатии бетона", "пожарная безопасность"]
    by_word = np.vstack([navec._raw(text) for text in texts])  # the word-by-word sums the table replaces
    assert by_word[0].any() and not by_word[1].any()
    assert (navec._means(texts).view(np.uint32) == by_word.view(np.uint32)).all()


def test_navec_past_its_word_table_bound_embeds_word_by_word(navec: NavecEmbedder,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    navec.fit(["пожарная безопасность зданий", "прочность бетона"] * 5)
    texts = ["требования пожарной безопасности к зданиям", "испытание бетона на прочность"]
    expected = navec.embed_documents(texts)
    monkeypatch.setattr("service.embedders.navec.TABLE_WORDS", 2)
    navec.load_stats({"total": navec._total, "counts": navec._counts, "pc": None if navec._pc is None
                      else navec._pc.tolist(), "stop_words": bool(navec._stop)})
    assert len(navec._table.weights) == 0
    assert (navec.embed_documents(texts).view(np.uint32) == expected.view(np.uint32)).all()
    assert len(navec._table.weights) == 2  # the table stopped at its bound
