"""The sentence-transformers adapter against a stand-in module (torch, which the real library needs, is kept
out of the default install: these machines only get PyPI's multi-GB CUDA wheels). This proves our adapter's
calls and identity; running a real model is documented in docs/relevance.md."""

from __future__ import annotations

import sys
import types
from typing import Any, ClassVar

import numpy as np
import pytest

from service.embedders.factory import build_embedder
from service.errors import ConfigError
from service.settings import EmbedderSettings


class StandInModel:
    calls: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, name: str, device: str) -> None:
        self.name, self.device = name, device

    def get_sentence_embedding_dimension(self) -> int:
        return 4

    def encode(self, texts: list[str], batch_size: int, normalize_embeddings: bool, convert_to_numpy: bool,
               ) -> np.ndarray:
        StandInModel.calls.append({"n": len(texts), "batch_size": batch_size, "normalize": normalize_embeddings})
        return np.tile(np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float64), (len(texts), 1))


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("sentence_transformers")
    setattr(module, "SentenceTransformer", StandInModel)  # noqa: B010 — a module built at run time
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    StandInModel.calls = []
    return module


def test_adapter_loads_the_named_model_on_cpu_and_normalizes(stand_in: types.ModuleType) -> None:
    embedder = build_embedder(EmbedderSettings(provider="sentence-transformers", model="/models/e5", batch_size=500))
    assert embedder.identity.to_dict() == {"provider": "sentence-transformers", "model": "/models/e5", "dimension": 4}
    assert getattr(embedder, "model").device == "cpu"  # noqa: B009 — the adapter's own attribute
    vectors = embedder.embed_documents(["а", "б", "в"])
    assert vectors.shape == (3, 4) and vectors.dtype == np.float32
    assert embedder.embed_query("г").shape == (4,)
    assert StandInModel.calls[0] == {"n": 3, "batch_size": 64, "normalize": True}
    assert embedder.fit(["x"]) is None


def test_adapter_needs_a_model_name(stand_in: types.ModuleType) -> None:
    with pytest.raises(ConfigError, match="STROIDOK_EMBEDDER_MODEL"):
        build_embedder(EmbedderSettings(provider="sentence-transformers"))


def test_missing_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ConfigError, match=r"stroidok\[sentence-transformers\]"):
        build_embedder(EmbedderSettings(provider="sentence-transformers", model="m"))
