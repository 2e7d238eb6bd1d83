"""The side index that records which embedder built an index's vectors, with its fitted statistics."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

from opensearchpy import OpenSearch

from service.embedders.base import Embedder
from service.engine.fields import PENDING
from service.engine.gateway import unless_missing
from service.errors import ConfigError, VersionConflict
from service.settings import IndexSettings

EMBEDDER_DOC = "embedder"


def concrete_index(client: OpenSearch, alias: str) -> str | None:
    """The index an alias writes to (the newest one it points at); None when it points nowhere."""
    indices = sorted(unless_missing(lambda: client.indices.get_alias(name=alias), {}))
    return str(indices[-1]) if indices else None


def embedder_doc_id(index: str | None) -> str:
    """Each physical index records its own embedder (a model switch builds a new index beside the old)."""
    return f"{EMBEDDER_DOC}@{index}" if index else EMBEDDER_DOC


def _embedder_record(client: OpenSearch, settings: IndexSettings, index: str | None,
                     params: dict[str, str]) -> dict[str, Any] | None:
    """The engine's GET answer for ``index``'s embedder record, else the alias-wide one (indexes made before
    per-index records existed); None when there is neither."""
    for doc_id in dict.fromkeys((embedder_doc_id(index), EMBEDDER_DOC)):
        found = unless_missing(functools.partial(client.get, index=settings.meta_index, id=doc_id, params=params),
                               None)
        if found is not None:
            return dict(found)
    return None


def read_embedder_meta(client: OpenSearch, settings: IndexSettings, index: str | None = None) -> dict[str, Any] | None:
    """What built ``index``'s vectors (default: the alias's index)."""
    found = _embedder_record(client, settings, index or concrete_index(client, settings.alias), {})
    return None if found is None else dict(found["_source"])


def embedder_meta_version(client: OpenSearch, settings: IndexSettings,
                          index: str | None) -> tuple[str, int, int] | None:
    """Which record ``read_embedder_meta`` would return and its version (id, seq_no, primary term), read
    without its source: the statistics make a navec record megabytes that the engine would send and parse."""
    found = _embedder_record(client, settings, index, {"_source": "false"})
    return None if found is None else (str(found["_id"]), int(found["_seq_no"]), int(found["_primary_term"]))


def same_embedder(meta: dict[str, Any] | None, embedder: Embedder) -> bool:
    """The index has no record yet, or records this embedder."""
    return not meta or (meta.get("provider"), meta.get("model")) == (embedder.identity.provider,
                                                                      embedder.identity.model)


def check_identity(meta: dict[str, Any] | None, embedder: Embedder, settings: IndexSettings) -> None:
    """Refuse an embedder other than the one the index was built with, or a dimension it cannot hold."""
    identity = embedder.identity
    if identity.dimension != settings.embedding_dim:
        raise ConfigError(
            f"embedder {identity.provider}:{identity.model} gives {identity.dimension}-dimensional vectors, the "
            f"index holds {settings.embedding_dim}: set STROIDOK_INDEX_EMBEDDING_DIM={identity.dimension} and use "
            "a new STROIDOK_INDEX_ALIAS",
        )
    if not same_embedder(meta, embedder):
        assert meta is not None
        raise ConfigError(
            f"index {settings.alias} was built with {meta.get('provider')}:{meta.get('model')}, the configured "
            f"embedder is {identity.provider}:{identity.model}; configure the original embedder, or switch the "
            "index to the new one with `stroidok index migrate` (docs/embedders.md)",
        )


def load_embedder_state(client: OpenSearch, embedder: Embedder, settings: IndexSettings,
                        index: str | None = None) -> bool:
    """Check identity and adopt stored statistics; False when the index has none yet."""
    meta = read_embedder_meta(client, settings, index)
    check_identity(meta, embedder, settings)
    if meta and meta.get("stats") is not None:
        embedder.load_stats(meta["stats"])
        return True
    return bool(meta)


def carry_embedder_meta(client: OpenSearch, settings: IndexSettings, old: str, new: str) -> None:
    """``new`` holds ``old``'s vectors (a rebuild, a split): it gets ``old``'s record, statistics included
    (without them navec would embed queries unlike the passages it indexed)."""
    meta = read_embedder_meta(client, settings, old)
    if meta is None:
        return
    body = {**meta, "index": new, "updated_at": datetime.now(UTC).isoformat()}
    client.index(index=settings.meta_index, id=embedder_doc_id(new), body=body, refresh=True)


def claim_embedder_meta(client: OpenSearch, embedder: Embedder, settings: IndexSettings,
                        stats: dict[str, Any] | None, index: str | None = None) -> dict[str, Any] | None:
    """Store the embedder's identity and fitted statistics for ``index`` (default: the alias's) unless
    another writer (a parallel ``ingest --shard``) stored theirs first; returns the statistics in force,
    which the caller adopts, so one index never holds vectors made with two sets of statistics."""
    index = index or concrete_index(client, settings.alias)
    body = {"kind": EMBEDDER_DOC, **embedder.identity.to_dict(), "stats": stats, "index": index,
            "updated_at": datetime.now(UTC).isoformat()}
    try:
        client.index(index=settings.meta_index, id=embedder_doc_id(index), body=body, refresh=True,
                     op_type="create")
        return stats
    except VersionConflict:
        meta = read_embedder_meta(client, settings, index)
    check_identity(meta, embedder, settings)
    return meta.get("stats") if meta else stats


GENERATION_DOC = "generation"


def bump_generation(client: OpenSearch, settings: IndexSettings) -> None:
    """Record that searchable content or access rights changed (a cache made before is stale)."""
    body = {"kind": GENERATION_DOC, "updated_at": datetime.now(UTC).isoformat()}
    client.index(index=settings.meta_index, id=GENERATION_DOC, body=body)


def read_generation(client: OpenSearch, settings: IndexSettings) -> int:
    """The content generation (a real-time GET: no refresh needed); 0 before the first change."""
    found = unless_missing(lambda: client.get(index=settings.meta_index, id=GENERATION_DOC, _source=False), None)
    return 0 if found is None else int(found["_version"])


RULES_DOC = "access-rules"


def read_rules_record(client: OpenSearch, settings: IndexSettings) -> dict[str, Any] | None:
    """The access rules the index's groups were decided by (their digest and summary); None before any run."""
    found = unless_missing(lambda: client.get(index=settings.meta_index, id=RULES_DOC), None)
    return None if found is None else dict(found["_source"])


def record_rules(client: OpenSearch, settings: IndexSettings, digest: str, summary: str) -> None:
    body = {"kind": RULES_DOC, "digest": digest, "summary": summary, "updated_at": datetime.now(UTC).isoformat()}
    client.index(index=settings.meta_index, id=RULES_DOC, body=body, refresh=True)


def pending_vectors(client: OpenSearch, index: str) -> int:
    """How many chunks of ``index`` wait for their vectors."""
    return int(client.count(index=index, body={"query": PENDING})["count"])
