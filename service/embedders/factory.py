"""Build the configured embedder: the class its provider's row names (``capabilities.CAPABILITIES``)."""

from __future__ import annotations

import importlib

from service.embedders.base import Embedder
from service.errors import ConfigError
from service.settings import EmbedderSettings
from service.settings.capabilities import capabilities_of


def build_embedder(settings: EmbedderSettings) -> Embedder:
    builder = capabilities_of(settings.provider).builder
    if not builder:
        raise ConfigError(f"no embedder is known by the name {settings.provider!r}")
    module, _, name = builder.partition(":")
    embedder: Embedder = getattr(importlib.import_module(module), name)(settings)
    return embedder
