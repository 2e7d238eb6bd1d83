"""Who is asking: a principal and its access groups, from the server's settings or a bearer token."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

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
