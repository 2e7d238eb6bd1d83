"""Any sentence-transformers model by name or local path (optional extra: torch is not installed by default)."""

from __future__ import annotations

import numpy as np

from service.embedders.base import EmbedderIdentity, Kind, StatelessEmbedder, with_prefix
from service.errors import ConfigError
from service.settings import EmbedderSettings


class SentenceTransformersEmbedder(StatelessEmbedder):
    def __init__(self, settings: EmbedderSettings) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError("install the extra: pip install 'stroidok[sentence-transformers]'") from exc
        if not settings.model:
            raise ConfigError("set STROIDOK_EMBEDDER_MODEL to a model name or local path")
        self.settings = settings
        self.model = SentenceTransformer(settings.model, device="cpu")
        dimension = self.model.get_sentence_embedding_dimension()
        self.identity = EmbedderIdentity("sentence-transformers", settings.model, int(dimension))

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        texts = with_prefix(texts, self.settings.query_prefix if kind == "query" else self.settings.passage_prefix)
        matrix: np.ndarray = self.model.encode(texts, batch_size=min(64, self.settings.batch_size),
                                               normalize_embeddings=True, convert_to_numpy=True).astype(np.float32)
        return matrix
