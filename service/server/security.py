"""Who is asking (principal and access groups), and how often they may ask."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from dataclasses import dataclass

from limits import parse
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import MovingWindowRateLimiter
from loguru import logger

from service.errors import RateLimited, Unauthorized
from service.settings import ServerSettings

PUBLIC = "public"


@dataclass(frozen=True)
class Principal:
    name: str
    groups: tuple[str, ...]

    @classmethod
    def of(cls, name: str, groups: list[str] | tuple[str, ...]) -> Principal:
        """Everyone may read public documents; groups are deduplicated and ordered."""
        return cls(name, tuple(sorted({PUBLIC, *groups})))


def stdio_principal(settings: ServerSettings) -> Principal:
    return Principal.of(settings.principal, settings.groups)


def token_principal(settings: ServerSettings, authorization: str | None) -> Principal:
    """The principal of an HTTP ``Authorization: Bearer`` header; ``Unauthorized`` when unknown.
    With no tokens configured the server is open and callers get the configured principal."""
    if not settings.tokens:
        return stdio_principal(settings)
    token = known_token(settings, authorization)
    if token is None:
        raise Unauthorized("a valid bearer token is required (Authorization: Bearer <token>)")
    return Principal.of(token_name(token), settings.tokens[token])


def token_name(token: str) -> str:
    """How a token's caller is named in logs and limits: a digest, never a part of the secret."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:12]


def known_token(settings: ServerSettings, authorization: str | None) -> str | None:
    """The configured token an ``Authorization: Bearer`` header carries (compared in constant time)."""
    scheme, _, given = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not given:
        return None
    given_bytes = given.strip().encode()
    return next((t for t in settings.tokens if hmac.compare_digest(t.encode(), given_bytes)), None)


class SweptMemoryStorage(MemoryStorage):
    """``limits``' in-process storage, with expired entries swept inline at most once per ``sweep_s``. The
    library starts a 10 ms timer thread for that on a hit whenever none is running, i.e. on nearly every
    call of a server that answers in tens of ms (~0.3 ms of latency each, measured over stdio). It overrides
    the library's private hook; a unit test notices if a new ``limits`` stops calling it."""

    sweep_s = 1.0

    def __init__(self) -> None:
        super().__init__()
        self._swept = time.monotonic()
        self._sweeping = threading.Lock()

    def _MemoryStorage__schedule_expiry(self) -> None:
        if time.monotonic() - self._swept < self.sweep_s or not self._sweeping.acquire(blocking=False):
            return
        try:
            self._swept = time.monotonic()
            self._MemoryStorage__expire_events()  # type: ignore[attr-defined]
        finally:
            self._sweeping.release()


class RateLimiter:
    """A moving window per client (``limits``); raises ``RateLimited`` with the retry time. With a Redis
    URL the windows live in Redis, so every server process enforces one limit; a Redis that fails lets
    calls through (logged once) rather than refusing every agent."""

    def __init__(self, rule: str, redis_url: str | None = None) -> None:
        self.item = parse(rule)
        storage = storage_from_string(redis_url, socket_timeout=1.0) if redis_url else SweptMemoryStorage()
        self.limiter = MovingWindowRateLimiter(storage)
        self._warned = False

    def check(self, client: str, tool: str = "search_documents") -> None:
        """One window per caller and tool: a burst of one tool does not starve the others."""
        try:
            allowed = self.limiter.hit(self.item, tool, client)
        except Exception as exc:  # the shared store is down: fail open, loudly once
            if not self._warned:
                logger.warning("rate limits in Redis unavailable ({}); calls are not limited", exc)
                self._warned = True
            return
        if not allowed:
            reset = self.limiter.get_window_stats(self.item, tool, client).reset_time
            raise RateLimited(f"more than {self.item} requests; slow down",
                              details={"limit": str(self.item), "reset_at_epoch_s": round(reset, 1)})
