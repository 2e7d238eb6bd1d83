"""The search tier: the shared corpus (tests/support/corpus.py), a fresh service per test, two principals."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from service.settings import Settings
from tests.support.corpus import FILES, INSULATION_DOCS, corpus_settings, search_corpus  # noqa: F401


@pytest.fixture
def service(corpus_settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> SearchService:  # noqa: F811 — the imported fixture
    """A fresh service per test (own cache and rate limiter), on the shared corpus."""
    settings = corpus_settings.model_copy(deep=True)
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "10000/minute"
    return SearchService(settings, client, navec_embedder)


@pytest.fixture
def public() -> Principal:
    return Principal.of("tester", [])


@pytest.fixture
def legal() -> Principal:
    return Principal.of("lawyer", ["legal"])
