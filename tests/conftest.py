"""Test session plumbing: a real OpenSearch node for the integration tier.

Where the node comes from, in order: ``OPENSEARCH_URL`` if set; else a testcontainers OpenSearch when
a Docker daemon answers; else the product's own managed engine on free loopback ports. Integration
tests never skip: with none of the three available the session fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from service.engine.process import EngineProcess
from service.index_admin.apply import drop_all as drop_index_resources
from service.settings import OPENSEARCH_VERSION, EngineSettings, IndexSettings

os.environ.setdefault("DO_NOT_TRACK", "1")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def docker_available() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def managed_engine_settings(heap: str = "1g") -> EngineSettings:
    """Engine settings for a throwaway node on free ports, sharing the cached install."""
    return EngineSettings(http_port=free_port(), transport_port=free_port(), heap=heap)


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
    return OpenSearch(hosts=[opensearch_url], timeout=60)


@pytest.fixture
def index_settings(client: OpenSearch) -> Iterator[IndexSettings]:
    """A unique alias per test; its indexes, template and pipelines are removed afterwards."""
    settings = IndexSettings(alias=f"test-{uuid.uuid4().hex[:10]}", embedding_dim=4)
    yield settings
    drop_index_resources(client, settings)


@pytest.fixture(scope="session")
def navec_embedder():
    from service.embedders.navec import NavecEmbedder
    from service.settings import EmbedderSettings

    return NavecEmbedder(EmbedderSettings())


def product_settings(opensearch_url: str, alias: str, **ingest: object):
    """Full product settings against the test node, with a unique alias and small per-file caps."""
    from service.settings import IngestSettings, OpenSearchSettings, Settings

    return Settings(
        opensearch=OpenSearchSettings(url=opensearch_url),
        index=IndexSettings(alias=alias, embedding_dim=300),
        ingest=IngestSettings(**{"workers": 2, "file_timeout_s": 120, **ingest}),
    )


@pytest.fixture
def settings(opensearch_url: str, client: OpenSearch):
    made = product_settings(opensearch_url, f"test-{uuid.uuid4().hex[:10]}")
    yield made
    drop_index_resources(client, made.index)
