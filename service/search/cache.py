"""The query cache: in process by default, in Redis when ``STROIDOK_REDIS_URL`` is set (shared by every
server process). Keys carry the engine's cluster id, the content generation, the caller's groups and the whole
request, so a
response is never served across an ingest or to a caller with other rights. A cache that fails is a
miss, never a failed search."""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Protocol

from cachetools import TTLCache
from loguru import logger

from service.search.answer.models import SearchResponse
from service.settings import SearchSettings

KEY_PREFIX = "stroidok:response:"


def cache_key(deployment: str, generation: int, groups: tuple[str, ...], request_json: str, alias: str) -> str:
    """The key of a response: which engine (its cluster's id: two deployments sharing a Redis never share
    entries), which index and content generation, which groups (as a JSON list: no name can make two lists
    alike), which request."""
    raw = json.dumps([deployment, alias, generation, list(groups), request_json], ensure_ascii=False)
    return KEY_PREFIX + hashlib.sha256(raw.encode()).hexdigest()


class ResponseCache(Protocol):
    def get(self, key: str) -> SearchResponse | None: ...
    def put(self, key: str, response: SearchResponse) -> None: ...


class MemoryCache:
    """One process's TTL cache (cachetools). cachetools' caches are not thread-safe — the server answers tool
    calls from a pool of threads, and an unguarded ``TTLCache`` raises ``KeyError`` when two of them expire
    and insert at once (1 call in ~300 under 10 clients) — so every access holds a lock."""

    def __init__(self, size: int, ttl_s: float) -> None:
        self.store: TTLCache[str, str] = TTLCache(size, ttl_s)
        self._lock = threading.Lock()

    def get(self, key: str) -> SearchResponse | None:
        with self._lock:
            raw = self.store.get(key)
        return SearchResponse.model_validate_json(raw) if raw is not None else None

    def put(self, key: str, response: SearchResponse) -> None:
        raw = response.model_dump_json()
        with self._lock:
            self.store[key] = raw


class RedisCache:
    """Responses as JSON under ``SET key value EX ttl``; Redis expires them."""

    def __init__(self, url: str, ttl_s: float) -> None:
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        self.ttl_ms = max(1, int(ttl_s * 1000))
        self._warned = False

    def get(self, key: str) -> SearchResponse | None:
        try:
            raw = self.client.get(key)
        except Exception as exc:  # redis down or slow: a miss, the search still runs
            self._warn(exc)
            return None
        return SearchResponse.model_validate_json(raw) if raw is not None else None  # type: ignore[arg-type]

    def put(self, key: str, response: SearchResponse) -> None:
        try:
            self.client.set(key, response.model_dump_json(), px=self.ttl_ms)
        except Exception as exc:
            self._warn(exc)

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            logger.warning("query cache in Redis unavailable ({}); searching without it", exc)
            self._warned = True


def build_cache(settings: SearchSettings) -> ResponseCache | None:
    """None when caching is off (``cache_ttl_s`` 0)."""
    if settings.cache_ttl_s <= 0:
        return None
    if settings.redis_url:
        return RedisCache(settings.redis_url, settings.cache_ttl_s)
    return MemoryCache(settings.cache_size, settings.cache_ttl_s)
