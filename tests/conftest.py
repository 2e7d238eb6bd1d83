"""Test session plumbing: a real OpenSearch node for the integration tier.

Where the node comes from, in order: ``OPENSEARCH_URL`` if set; else a testcontainers OpenSearch when
a Docker daemon answers; else the product's own managed engine on free loopback ports. Integration
tests never skip: with none of the three available the session fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from service.embedders.navec import NavecEmbedder
from service.engine.index_admin.apply import drop_all as drop_index_resources
from service.engine.launcher.process import EngineProcess
from service.settings import OPENSEARCH_VERSION, IndexSettings, Settings
from tests.support.engine import docker_available, managed_engine_settings, new_alias, product_settings

os.environ.setdefault("DO_NOT_TRACK", "1")


@pytest.fixture(scope="session")
def opensearch_url() -> Iterator[str]:
    if url := os.environ.get("OPENSEARCH_URL"):
        yield url
        return
    if docker_available():
        from testcontainers.community.opensearch import OpenSearchContainer

        with OpenSearchContainer(f"opensearchproject/opensearch:{OPENSEARCH_VERSION}") as container:
            config = container.get_config()
            yield f"http://{config['host']}:{config['port']}"
        return
    engine = EngineProcess(managed_engine_settings())
    result = engine.up()
    try:
        yield result.url
    finally:
        engine.down()
        shutil.rmtree(engine.paths.root, ignore_errors=True)


@pytest.fixture(scope="session")
def client(opensearch_url: str) -> OpenSearch:
    """The product's own client, as every command builds it: its failures arrive as the product's errors."""
    from service.engine.gateway import build_client
    from service.settings import OpenSearchSettings, Settings

    return build_client(Settings(opensearch=OpenSearchSettings(url=opensearch_url, timeout_s=60)))


@pytest.fixture
def index_settings(client: OpenSearch) -> Iterator[IndexSettings]:
    """A unique alias per test; its indexes, template and pipelines are removed afterwards."""
    settings = IndexSettings(alias=new_alias(), embedding_dim=4)
    yield settings
    drop_index_resources(client, settings)


@pytest.fixture(scope="session")
def navec_embedder() -> NavecEmbedder:
    from service.embedders.navec import NavecEmbedder
    from service.settings import EmbedderSettings

    return NavecEmbedder(EmbedderSettings())


@pytest.fixture
def settings(opensearch_url: str, client: OpenSearch) -> Iterator[Settings]:
    made = product_settings(opensearch_url)
    yield made
    drop_index_resources(client, made.index)


@pytest.fixture
def alias(client: OpenSearch) -> Iterator[str]:
    """A unique alias for a test that ingests through the CLI; its indexes are removed afterwards."""
    name = new_alias()
    yield name
    drop_index_resources(client, IndexSettings(alias=name, embedding_dim=300))


@pytest.fixture
def own_engine() -> Iterator[EngineProcess]:
    """A node of the test's own, for a test that kills or restarts it (the session's node stays untouched)."""
    engine = EngineProcess(managed_engine_settings())
    engine.up()
    yield engine
    engine.down()
    shutil.rmtree(engine.paths.root, ignore_errors=True)
