"""Each embedder's row names its class: every provider the settings accept is built through the registry."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import get_args

import pytest

from service.embedders.factory import build_embedder
from service.errors import ConfigError
from service.settings import EmbedderSettings
from service.settings.capabilities import CAPABILITIES


def test_every_provider_the_settings_accept_has_a_row_naming_its_class() -> None:
    providers = get_args(EmbedderSettings.model_fields["provider"].annotation)
    assert set(providers) == set(CAPABILITIES)
    for provider, row in CAPABILITIES.items():
        module, _, name = row.builder.partition(":")
        spec = importlib.util.find_spec(module)
        assert spec is not None and spec.origin, provider
        classes = {n.name for n in ast.walk(ast.parse(Path(spec.origin).read_text(encoding="utf-8")))
                   if isinstance(n, ast.ClassDef)}
        assert name in classes, provider


def test_navec_is_built_through_its_row_and_an_unknown_name_is_refused() -> None:
    embedder = build_embedder(EmbedderSettings(provider="navec"))
    assert embedder.identity.provider == "navec"
    with pytest.raises(ConfigError):
        build_embedder(EmbedderSettings.model_construct(provider="word2vec"))
