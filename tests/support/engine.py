"""Engines for tests and benchmarks, and throwaway aliases on them."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Sequence
from pathlib import Path

from opensearchpy import OpenSearch

from service.embedders.base import Embedder
from service.engine.index_admin.apply import drop_all as drop_index_resources
from service.settings import EngineSettings, IndexSettings, IngestSettings, OpenSearchSettings, Settings
from tests.support.net import free_port

__all__ = ["docker_available", "drop_index_resources", "ingest_norms", "managed_engine_settings", "new_alias",
           "product_settings"]


def docker_available() -> bool:
    """Whether a Docker daemon answers (testcontainers can start an engine)."""
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def managed_engine_settings(heap: str = "1g") -> EngineSettings:
    """Engine settings for a throwaway node on free ports, sharing the cached install."""
    return EngineSettings(http_port=free_port(), transport_port=free_port(), heap=heap)


def new_alias(prefix: str = "test") -> str:
    """A unique alias (its indexes are ``<alias>-*``)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def product_settings(opensearch_url: str, alias: str | None = None, **ingest: object) -> Settings:
    """Full product settings against the test node, with a unique alias and small per-file caps."""
    return Settings(
        opensearch=OpenSearchSettings(url=opensearch_url),
        index=IndexSettings(alias=alias or new_alias(), embedding_dim=300),
        ingest=IngestSettings.model_validate({"workers": 2, "file_timeout_s": 120, **ingest}),
    )


def ingest_norms(shared: Path, names: Sequence[str], root: Path, settings: Settings, client: OpenSearch,
                 embedder: Embedder) -> None:
    """The shared corpus's norms ``names`` written as TXT files under ``root`` and ingested as ``stroidok ingest``
    does (``run_ingest``), every one indexed."""
    from evaluation.sample import write_txt_corpus
    from ingest.pipeline import run_ingest
    from ingest.plan import IngestOptions

    write_txt_corpus(shared, root, names=names)
    report = run_ingest(IngestOptions([root]), settings, client, embedder, quiet=True)
    assert report.counts["indexed"] == len(names), [o.line() for o in report.outcomes]


def engine_client(url: str, timeout_s: float = 60.0) -> OpenSearch:
    """The product's own client to ``url`` (its error boundary included), as a command would build it."""
    from service.engine.gateway import build_client

    return build_client(Settings(opensearch=OpenSearchSettings(url=url, timeout_s=timeout_s)))
