"""The side index that records which embedder built an index's vectors, with its fitted statistics."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy import exceptions as os_exc

from service.embedders.base import Embedder
from service.errors import ConfigError
from service.opensearch import engine_errors
from service.settings import IndexSettings

EMBEDDER_DOC = "embedder"


def read_embedder_meta(client: OpenSearch, settings: IndexSettings) -> dict[str, Any] | None:
    with engine_errors():
        try:
            meta: dict[str, Any] = client.get(index=settings.meta_index, id=EMBEDDER_DOC)["_source"]
            return meta
        except os_exc.NotFoundError:
            return None


def check_identity(meta: dict[str, Any] | None, embedder: Embedder, settings: IndexSettings) -> None:
    """Refuse an embedder other than the one the index was built with, or a dimension it cannot hold."""
    identity = embedder.identity
    if identity.dimension != settings.embedding_dim:
        raise ConfigError(
            f"embedder {identity.provider}:{identity.model} gives {identity.dimension}-dimensional vectors, the "
            f"index holds {settings.embedding_dim}: set STROIDOK_INDEX_EMBEDDING_DIM={identity.dimension} and use "
            "a new STROIDOK_INDEX_ALIAS",
        )
    if meta and (meta.get("provider"), meta.get("model")) != (identity.provider, identity.model):
        raise ConfigError(
            f"index {settings.alias} was built with {meta.get('provider')}:{meta.get('model')}, the configured "
            f"embedder is {identity.provider}:{identity.model}; configure the original embedder or ingest into a "
            "new STROIDOK_INDEX_ALIAS",
        )


def load_embedder_state(client: OpenSearch, embedder: Embedder, settings: IndexSettings) -> bool:
    """Check identity and adopt stored statistics; False when the index has none yet."""
    meta = read_embedder_meta(client, settings)
    check_identity(meta, embedder, settings)
    if meta and meta.get("stats") is not None:
        embedder.load_stats(meta["stats"])
        return True
    return bool(meta)


def claim_embedder_meta(client: OpenSearch, embedder: Embedder, settings: IndexSettings,
                        stats: dict[str, Any] | None) -> dict[str, Any] | None:
    """Store the embedder's identity and fitted statistics unless another writer (a parallel
    ``ingest --shard``) stored theirs first; returns the statistics in force, which the caller adopts,
    so one index never holds vectors made with two sets of statistics."""
    body = {"kind": EMBEDDER_DOC, **embedder.identity.to_dict(), "stats": stats,
            "updated_at": datetime.now(UTC).isoformat()}
    with engine_errors():
        try:
            client.index(index=settings.meta_index, id=EMBEDDER_DOC, body=body, refresh=True, op_type="create")
            return stats
        except os_exc.ConflictError:
            meta = read_embedder_meta(client, settings)
    check_identity(meta, embedder, settings)
    return meta.get("stats") if meta else stats


GENERATION_DOC = "generation"


def bump_generation(client: OpenSearch, settings: IndexSettings) -> None:
    """Record that searchable content or access rights changed (a cache made before is stale)."""
    body = {"kind": GENERATION_DOC, "updated_at": datetime.now(UTC).isoformat()}
    with engine_errors():
        client.index(index=settings.meta_index, id=GENERATION_DOC, body=body)


def read_generation(client: OpenSearch, settings: IndexSettings) -> int:
    """The content generation (a real-time GET: no refresh needed); 0 before the first change."""
    with engine_errors():
        try:
            return int(client.get(index=settings.meta_index, id=GENERATION_DOC, _source=False)["_version"])
        except os_exc.NotFoundError:
            return 0
