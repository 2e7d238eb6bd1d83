"""The embedder interface and its identity, which the index records and checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from service.settings.capabilities import capabilities_of


@dataclass(frozen=True)
class EmbedderIdentity:
    """What built an index's vectors; a different identity cannot search or extend that index."""

    provider: str
    model: str
    dimension: int

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "dimension": self.dimension}


class Embedder(Protocol):
    identity: EmbedderIdentity

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """One L2-normalized row per text, shape (len(texts), dimension)."""

    def embed_query(self, text: str) -> np.ndarray:
        """One L2-normalized vector for a search query."""

    def fit(self, texts: list[str]) -> dict[str, Any] | None:
        """Corpus statistics to store with the index (None when the embedder needs none)."""

    def load_stats(self, stats: dict[str, Any]) -> None:
        """Adopt statistics fitted earlier on the index's corpus."""


def is_static(embedder: Embedder) -> bool:
    """Whether ``embedder`` is a static one (navec: a text costs microseconds), not a model."""
    return capabilities_of(embedder.identity.provider).static


def keeps_unit_vectors(embedder: Embedder, setting: str) -> bool:
    """Whether an index built with ``embedder`` keeps a vector per passage unit (``EmbedderSettings.unit_vectors``):
    ``auto`` for static embedders only (navec: microseconds a unit; a model would embed every token twice)."""
    return setting == "on" or (setting == "auto" and is_static(embedder))


def keeps_static_unit_vectors(embedder: Embedder, setting: str) -> bool:
    """Whether an index built with ``embedder`` keeps unit vectors of a static embedder: navec's named units
    choose the passage among 1 extra candidate chunk as well as among 5; a model's need 5 (docs/relevance.md)."""
    return keeps_unit_vectors(embedder, setting) and is_static(embedder)


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


Kind = Literal["query", "passage"]


def with_prefix(texts: list[str], prefix: str) -> list[str]:
    """Asymmetric models (e5, bge, …) are told which side a text is on by a prefix such as ``query: ``."""
    return [prefix + t for t in texts] if prefix else texts


class StatelessEmbedder:
    """Shared behaviour of embedders that need no corpus statistics (models, remote endpoints): queries and
    passages go through ``_embed`` with their kind, which adds the configured prefix or input type."""

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, "passage")

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([text], "query")[0]
        return vector

    def fit(self, texts: list[str]) -> dict[str, Any] | None:
        return None

    def load_stats(self, stats: dict[str, Any]) -> None:
        return None
