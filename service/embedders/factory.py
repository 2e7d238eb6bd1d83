"""Build the configured embedder."""

from __future__ import annotations

from service.embedders.base import Embedder
from service.settings import EmbedderSettings


def build_embedder(settings: EmbedderSettings) -> Embedder:
    if settings.provider == "navec":
        from service.embedders.navec import NavecEmbedder

        return NavecEmbedder(settings)
    if settings.provider == "e5":
        from service.embedders.e5 import E5Embedder

        return E5Embedder(settings)
    if settings.provider == "http":
        from service.embedders.http import HttpEmbedder

        return HttpEmbedder(settings)
    from service.embedders.sentence_transformers import SentenceTransformersEmbedder

    return SentenceTransformersEmbedder(settings)
