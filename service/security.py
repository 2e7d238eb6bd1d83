"""Who is asking (principal and access groups), and how often they may ask."""

from __future__ import annotations

from dataclasses import dataclass

from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

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
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or token not in settings.tokens:
        raise Unauthorized("a valid bearer token is required (Authorization: Bearer <token>)")
    return Principal.of(f"token:{token[:4]}…", settings.tokens[token])


class RateLimiter:
    """A moving window per client (``limits``); raises ``RateLimited`` with the retry time."""

    def __init__(self, rule: str) -> None:
        self.item = parse(rule)
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    def check(self, client: str) -> None:
        if not self.limiter.hit(self.item, client):
            reset = self.limiter.get_window_stats(self.item, client).reset_time
            raise RateLimited(f"more than {self.item} requests; slow down",
                              details={"limit": str(self.item), "reset_at_epoch_s": round(reset, 1)})
