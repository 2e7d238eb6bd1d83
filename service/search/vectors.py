"""How complete an index's vectors are, and which embedder its queries need.

Text can be indexed before its vectors (``stroidok ingest --vectors later``); such chunks carry
``vector_pending: true`` until ``stroidok embed`` fills them in. A search reports the share of chunks
that have their vector, counted within the caller's access groups. Each physical index records the
embedder that built it; after a model switch (an alias swap) the service embeds queries with the new
index's embedder, never with one the index refuses.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from cachetools import TTLCache, cached
from opensearchpy import OpenSearch

from service.embedders.base import Embedder
from service.engine.fields import FIRST_CHUNK, PENDING
from service.engine.gateway import bounded_search
from service.engine.index_meta import (
    concrete_index,
    embedder_meta_version,
    read_embedder_meta,
    same_embedder,
)
from service.errors import ConfigError
from service.search.dsl.filters import build_access_filter
from service.settings import Settings
from service.settings.capabilities import capabilities_of

#: contents kept at several paths that a coverage read lists; past that, every search looks its copies up
MAX_SHARED = 1000


@dataclass(frozen=True)
class Coverage:
    chunks: int
    pending: int
    #: the contents the caller may read at several paths (a search lists their copies); None: too many to
    #: list, any result may have copies
    copies: frozenset[str] | None = None

    def shared(self, hashes: list[str | None]) -> list[str]:
        """Those of ``hashes`` that may be kept at several paths (all of them when the list is unknown)."""
        return sorted({h for h in hashes if h and (self.copies is None or h in self.copies)})

    @property
    def share(self) -> float:
        """Share of chunks with their vector (1.0 for an empty index: nothing is missing)."""
        return 1.0 if not self.chunks else round((self.chunks - self.pending) / self.chunks, 4)


def coverage_body(groups: list[str] | None) -> dict[str, Any]:
    query = {"bool": {"filter": [build_access_filter(groups)]}} if groups is not None else {"match_all": {}}
    # one chunk per document; a content hash two documents share is a file kept at two paths
    shared = {"filter": FIRST_CHUNK, "aggs": {"hashes": {"terms": {"field": "doc_hash", "min_doc_count": 2,
                                                                   "size": MAX_SHARED}}}}
    return {"size": 0, "track_total_hits": True, "query": query,
            "aggs": {"pending": {"filter": PENDING}, "shared": shared}}


#: the bound of a coverage count (a size-0 request: milliseconds on a million chunks)
COVERAGE_TIMEOUT_S = 30.0


def read_coverage(client: OpenSearch, index: str, groups: list[str] | None = None) -> Coverage:
    """Chunks and chunks waiting for vectors in ``index`` (an alias or a physical index), within ``groups``."""
    raw = bounded_search(client, index, coverage_body(groups), {}, COVERAGE_TIMEOUT_S)
    aggs = raw["aggregations"]
    shared = aggs["shared"]["hashes"]
    copies = frozenset(str(b["key"]) for b in shared["buckets"]) if not shared.get("sum_other_doc_count") else None
    return Coverage(int(raw["hits"]["total"]["value"]), int(aggs["pending"]["doc_count"]), copies)


class CoverageCache:
    """Coverage per access-group set, re-read at most every ``ttl_s`` (a search pays ~1 ms once per window).

    When an entry expires under load only one caller reads it again; the others wait for that answer
    instead of each sending the same count (``cachetools``' condition)."""

    def __init__(self, client: OpenSearch, index: str, ttl_s: float = 5.0) -> None:
        self.client, self.index = client, index
        lock = threading.Lock()
        self._read = cached(TTLCache[tuple[str, ...], Coverage](maxsize=256, ttl=ttl_s), lock=lock,
                            condition=threading.Condition(lock))(self._read_groups)

    def _read_groups(self, key: tuple[str, ...]) -> Coverage:
        return read_coverage(self.client, self.index, list(key))

    def get(self, groups: tuple[str, ...]) -> Coverage:
        return self._read(tuple(sorted(set(groups))))


def embedder_for(meta: dict[str, Any] | None, configured: Embedder | None, settings: Settings) -> Embedder:
    """The embedder an index's queries need: the configured one when the index records it (or nothing yet),
    else one built from the index's record when that needs no configuration of its own (navec, e5)."""
    if configured is not None and same_embedder(meta, configured):
        return configured
    if meta and capabilities_of(str(meta.get("provider"))).shipped:
        from service.embedders.factory import build_embedder

        row = capabilities_of(str(meta["provider"]))
        variant = str(meta.get("model", "")).rpartition("/")[2] if row.variant_in_model else ""
        built = build_embedder(settings.embedder.model_copy(update={"provider": meta["provider"], "model": variant}))
        if (built.identity.provider, built.identity.model) == (meta["provider"], meta.get("model")):
            if meta.get("stats") is not None:
                built.load_stats(meta["stats"])
            return built
    if configured is None:
        raise ConfigError("no embedder is configured")
    raise ConfigError(f"the index was built with {meta.get('provider') if meta else '?'}:"
                      f"{meta.get('model') if meta else '?'}, which this server cannot build from its settings "
                      "(configure that embedder)")


class EmbedderResolver:
    """The physical index behind the alias and its embedder, looked up again every ``ttl_s`` and whenever
    a response came from another index (an alias swap happened in between). A lookup reads the alias and
    the embedder record's version; the record itself only when that changed.

    One caller looks up at a time: when the window merely expired, the others keep the answer they had
    meanwhile; after ``invalidate`` (the alias moved) they wait for the new one."""

    def __init__(self, client: OpenSearch, settings: Settings, configured: Embedder | None, ttl_s: float = 5.0) -> None:
        self.client, self.settings, self.configured, self.ttl_s = client, settings, configured, ttl_s
        self._lock = threading.Lock()
        self._refreshing = threading.Lock()
        self._built: dict[tuple[str | None, tuple[str, int, int] | None], Embedder] = {}
        self._current: tuple[str | None, Embedder] | None = None
        self._checked = 0.0
        self._stale_ok = False

    def invalidate(self) -> None:
        with self._lock:
            self._checked, self._stale_ok = 0.0, False

    def moved(self, index: str | None) -> bool:
        """The alias points elsewhere than ``index`` now (then the next lookup is fresh)."""
        if concrete_index(self.client, self.settings.index.alias) == index:
            return False
        self.invalidate()
        return True

    def current(self) -> tuple[str | None, Embedder]:
        """(physical index, the embedder its queries need); raises ``ConfigError`` when none fits."""
        with self._lock:
            current, stale_ok = self._current, self._stale_ok
            if current is not None and time.monotonic() - self._checked < self.ttl_s:
                return current
        if not self._refreshing.acquire(blocking=not (stale_ok and current is not None)):
            assert current is not None
            return current
        try:
            return self._refresh()
        finally:
            self._refreshing.release()

    def _refresh(self) -> tuple[str | None, Embedder]:
        with self._lock:
            if self._current is not None and time.monotonic() - self._checked < self.ttl_s:
                return self._current  # another caller refreshed it while this one waited
        index = concrete_index(self.client, self.settings.index.alias)
        key = (index, embedder_meta_version(self.client, self.settings.index, index))
        with self._lock:
            embedder = self._built.get(key)
        if embedder is None:  # a new index or a rewritten record: only now the record itself (MBs for navec)
            meta = read_embedder_meta(self.client, self.settings.index, index)
            embedder = embedder_for(meta, self.configured, self.settings)
            if embedder is self.configured and meta and meta.get("stats") is not None:
                embedder.load_stats(meta["stats"])
            with self._lock:
                self._built[key] = embedder
        with self._lock:
            self._current, self._checked, self._stale_ok = (index, embedder), time.monotonic(), True
        return index, embedder
