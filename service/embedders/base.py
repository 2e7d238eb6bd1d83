"""The embedder interface and its identity, which the index records and checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


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


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


class StatelessEmbedder:
    """Shared behaviour of embedders that need no corpus statistics (models, remote endpoints)."""

    def embed_documents(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector

    def fit(self, texts: list[str]) -> dict[str, Any] | None:
        return None

    def load_stats(self, stats: dict[str, Any]) -> None:
        return None
