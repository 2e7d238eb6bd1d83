"""Who an HTTP caller is, from its one ``Authorization: Bearer`` header: a static token of the settings, or a JWT
access token of the firm's identity provider (OAuth 2.1 resource server, RFC 9068 / RFC 9728).

A JWT is accepted only when signed RS256 or ES256 by a key of the issuer's JWKS (fetched, cached, fetched again for
an unknown key id at most once every ``oauth_jwks_refetch_s``: a rotated key is followed, a stream of invented key
ids costs the issuer nothing), with ``iss`` the configured issuer, ``aud`` naming this server's resource URI, and
``exp`` (and ``nbf`` when present) holding. ``alg: none``, HS256 (a public key used as a shared secret) and every
other algorithm are refused before any key is looked at. The caller's groups come from one claim; names that are not
group names are left out (fewer rights, never more). The token itself goes nowhere.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

import httpx
import jwt
import orjson
from loguru import logger

from service.caller.principal import Principal, known_token, token_name
from service.errors import Unauthorized
from service.settings import ServerSettings
from service.settings.groups import MAX_GROUP_BYTES, MAX_GROUPS, check_group, group_bytes

#: where the HTTP guard leaves the caller it read (a request scope's ``state``): the tools read it from there
SCOPE_KEY = "stroidok.caller"

#: the signature algorithms accepted (asymmetric only: the verifier never holds a secret a token could be made with)
ALGORITHMS = ("RS256", "ES256")
#: clock skew allowed on exp / nbf / iat, seconds
LEEWAY_S = 30
#: the JWKS document read at most this big
MAX_JWKS_BYTES = 256 * 1024


class Jwks:
    """The issuer's signing keys by key id, fetched over HTTP(S) and cached.

    One caller fetches at a time (single flight): a caller whose key is cached goes on while another fetches, a
    caller that needs the fetch waits for the one under way (at most its timeout) instead of starting its own. Keys
    of the last good fetch stay trusted while the issuer cannot be read, at most ``max_stale_s`` after that fetch
    (then every token is refused until the issuer answers again): a key the issuer dropped is trusted no longer."""

    def __init__(self, url: str, ttl_s: float, refetch_s: float, timeout_s: float = 5.0,
                 max_stale_s: float = 900.0) -> None:
        self.url, self.ttl_s, self.refetch_s, self.timeout_s = url, ttl_s, refetch_s, timeout_s
        self.max_stale_s = max(max_stale_s, ttl_s)
        self.keys: dict[str, jwt.PyJWK] = {}
        self.fetched = -float("inf")  # the last fetch tried
        self.good = -float("inf")  # the last fetch that read the keys
        self.lock = threading.Lock()  # the cache's fields
        self.fetching = threading.Lock()  # held by the one caller fetching

    def key(self, kid: str) -> jwt.PyJWK | None:
        """The key ``kid``: from the cache while it is fresh (``ttl_s``), else after fetching the JWKS again; an
        unknown ``kid`` fetches it at most once every ``refetch_s``. None when the issuer does not publish it."""
        if not self._due(kid, time.monotonic()):
            return self._trusted(kid)
        if self.fetching.acquire(blocking=False):
            try:
                if self._due(kid, time.monotonic()):  # a fetch that ended since may have done it
                    self._fetch()
            finally:
                self.fetching.release()
        elif (cached := self._trusted(kid)) is not None:
            return cached  # another caller is fetching; this key is known
        elif self.fetching.acquire(timeout=self.timeout_s + 1.0):
            self.fetching.release()  # the fetch under way has ended: its keys are in
        return self._trusted(kid)

    def _due(self, kid: str, now: float) -> bool:
        with self.lock:
            stale = now - self.fetched > self.ttl_s
            return stale or (kid not in self.keys and now - self.fetched > self.refetch_s)

    def _trusted(self, kid: str) -> jwt.PyJWK | None:
        with self.lock:
            if time.monotonic() - self.good > self.max_stale_s:
                return None
            return self.keys.get(kid)

    def _fetch(self) -> None:
        started = time.monotonic()
        try:
            found = jwt.PyJWKSet.from_dict(orjson.loads(read_bounded(self.url, self.timeout_s, MAX_JWKS_BYTES))).keys
        except (httpx.HTTPError, ValueError, TypeError, jwt.PyJWTError) as exc:
            with self.lock:
                self.fetched = started  # a failing issuer is asked again after refetch_s, not on every call
            logger.warning("JWKS {} not read ({}); tokens signed by unknown keys are refused",
                           self.url, str(exc)[:200])
            return
        with self.lock:
            self.keys = {k.key_id: k for k in found if k.key_id}
            self.fetched = self.good = started


def read_bounded(url: str, timeout_s: float, limit: int) -> bytes:
    """The body at ``url``, read as it streams and refused (``ValueError``) once over ``limit`` bytes."""
    body = bytearray()
    with httpx.stream("GET", url, timeout=timeout_s, follow_redirects=False) as response:
        response.raise_for_status()
        for part in response.iter_bytes():
            body += part
            if len(body) > limit:
                raise ValueError(f"JWKS over {limit} bytes")
    return bytes(body)


def claim(claims: dict[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` of the claims (``realm_access.roles``), or None."""
    value: Any = claims
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def groups_of(value: Any) -> list[str]:
    """The valid group names of a claim's value (a list of names, or one name); others left out. More than
    ``MAX_GROUPS`` names, or names over ``MAX_GROUP_BYTES`` together, are refused (``Unauthorized``): a caller's
    groups go into every engine request."""
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    if len(names) > MAX_GROUPS:
        raise Unauthorized(f"the access token names {len(names)} groups, over the {MAX_GROUPS} accepted")
    kept: list[str] = []
    for name in names:
        try:
            kept.append(check_group(name))
        except ValueError:
            continue
    if group_bytes(kept) > MAX_GROUP_BYTES:
        raise Unauthorized(f"the access token's group names take over {MAX_GROUP_BYTES} bytes")
    return kept


class Identity:
    """Turns one ``Authorization`` header into a principal, or refuses with ``Unauthorized``."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.jwks = (Jwks(settings.oauth_jwks_url, settings.oauth_jwks_ttl_s, settings.oauth_jwks_refetch_s,
                          max_stale_s=settings.oauth_jwks_max_stale_s) if settings.oauth_jwks_url else None)

    def principal(self, authorization: str | None) -> Principal:
        """The caller of a request with this header value (None: no header)."""
        token = known_token(self.settings, authorization)
        if token is not None:
            return Principal.of(token_name(token), self.settings.tokens[token])
        scheme, _, given = (authorization or "").strip().partition(" ")
        if self.jwks is not None and scheme.lower() == "bearer" and given.strip().count(".") == 2:
            return self.from_jwt(given.strip())
        raise Unauthorized("a valid bearer token is required (Authorization: Bearer <token>)")

    def from_jwt(self, token: str) -> Principal:
        """The principal of a JWT access token of the configured issuer, for this server's audience."""
        if self.jwks is None:
            raise Unauthorized("this server accepts no access tokens of an identity provider")
        try:
            header = jwt.get_unverified_header(token)
            if header.get("alg") not in ALGORITHMS:
                raise Unauthorized(f"access token algorithm {str(header.get('alg'))[:20]!r} is not accepted "
                                   f"({', '.join(ALGORITHMS)})")
            key = self.jwks.key(str(header.get("kid") or ""))
            if key is None:
                raise Unauthorized("access token signed by a key the issuer does not publish")
            claims = jwt.decode(token, key=key.key, algorithms=[str(header["alg"])],
                                audience=self.settings.oauth_audience, issuer=self.settings.oauth_issuer,
                                leeway=LEEWAY_S, options={"require": ["exp", "iss", "aud"]})
        except jwt.PyJWTError as exc:
            raise Unauthorized(f"access token refused: {str(exc)[:120]}") from exc
        except Unauthorized:
            raise
        except Exception as exc:  # a key of another type than the token's alg, a malformed key: still the caller's
            raise Unauthorized(f"access token could not be verified ({type(exc).__name__})") from exc
        subject = str(claims.get("sub") or claims.get("client_id") or claims.get("azp") or "")
        name = "oauth:" + hashlib.sha256(f"{claims['iss']}|{subject}".encode()).hexdigest()[:12]
        return Principal.of(name, groups_of(claim(claims, self.settings.oauth_groups_claim)))
