"""Who is asking: a principal and its access groups, from the server's settings or a bearer token."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from service.errors import Unauthorized
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
