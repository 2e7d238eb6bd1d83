"""A firm's identity provider at the HTTP door (OAuth 2.1 resource server): a JWT access token of the configured
issuer, for this server's audience, signed by a key of the issuer's JWKS, reads the groups of its claim; expired,
other-audience, other-issuer, unknown-key, ``alg: none`` and HS256-with-the-public-key tokens get 401 with the
RFC 9728 pointer; a rotated key is followed; static tokens keep working beside it. Keys and JWKS are made here."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import jwt
import pytest

from service.settings import Settings
from tests.support.issuer import ISSUER, Issuer, Key, serving
from tests.support.net import free_port
from tests.support.servers import http_server, server_env

pytestmark = pytest.mark.integration
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SECRET_QUERY = {"query": "гидрофобизатор кремнийорганический ГКЖ", "search_mode": "fulltext"}


def post(url: str, token: str | None, arguments: dict[str, Any] | None = None) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "search_documents", "arguments": arguments or SECRET_QUERY}}
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.post(url, content=json.dumps(body).encode(), headers={**ACCEPT, **auth}, timeout=60)


def titles(response: httpx2.Response) -> list[str]:
    assert response.status_code == 200, response.text[:500]
    result = response.json()["result"]
    assert not result.get("isError"), result
    return [r["title"] for r in result["structuredContent"]["results"]]


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with serving(Issuer([Key.rsa("k-rsa"), Key.ec("k-ec")])) as served:
        yield served


@pytest.fixture(scope="module")
def door(issuer: Issuer, opensearch_url: str, corpus_settings: Settings) -> Iterator[str]:
    port = free_port()
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_HOST="0.0.0.0",
                     STROIDOK_SERVER_TOKENS='{"static-1": ["public"]}', STROIDOK_SERVER_OAUTH_ISSUER=ISSUER,
                     STROIDOK_SERVER_OAUTH_JWKS_URL=issuer.url,
                     STROIDOK_SERVER_OAUTH_AUDIENCE=f"http://127.0.0.1:{port}/mcp",
                     STROIDOK_SERVER_OAUTH_JWKS_REFETCH_S="0.5", STROIDOK_SEARCH_RATE_LIMIT="100000/minute",
                     STROIDOK_SEARCH_REFUSED_RATE_LIMIT="100000/minute", STROIDOK_SEARCH_CACHE_TTL_S="0")
    with http_server(env, port) as (url, _):
        yield url


@pytest.mark.parametrize("key", ["k-rsa", "k-ec"])
def test_a_token_of_the_issuer_reads_the_groups_of_its_claim(door: str, issuer: Issuer, key: str) -> None:
    signing = next(k for k in issuer.keys if k.kid == key)
    legal = titles(post(door, issuer.token(signing, door, ["legal"])))
    assert any("Секретный" in t for t in legal)
    public = titles(post(door, issuer.token(signing, door, ["public"])))
    assert not any("Секретный" in t for t in public)
    assert not any("Секретный" in t for t in titles(post(door, issuer.token(signing, door, None))))


def test_static_tokens_keep_working_beside_the_identity_provider(door: str) -> None:
    assert not any("Секретный" in t for t in titles(post(door, "static-1")))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(claims: dict[str, Any], kid: str) -> str:
    return f"{b64(json.dumps({'alg': 'none', 'typ': 'JWT', 'kid': kid}).encode())}.{b64(json.dumps(claims).encode())}."


def hs256_with_public_key(claims: dict[str, Any], key: Key) -> str:
    """The classic confusion: HS256 «signed» with the RSA public key's PEM as the shared secret."""
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": key.kid}).encode())
    body = b64(json.dumps(claims).encode())
    signature = hmac.new(key.public_pem(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


def refused_kinds(door: str, issuer: Issuer) -> dict[str, str]:
    rsa = issuer.keys[0]
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": door, "sub": "x", "exp": now + 300, "groups": ["legal"]}
    stranger = Key.rsa("k-rsa")  # the same key id, another key
    return {
        "expired": issuer.token(rsa, door, ["legal"], expires_in=-120),
        "wrong audience": issuer.token(rsa, "http://other.example/mcp", ["legal"]),
        "wrong issuer": issuer.token(rsa, door, ["legal"], issuer="http://evil.test/realms/firm"),
        "unknown key": issuer.token(Key.rsa("k-unknown"), door, ["legal"]),
        "forged with a known key id": issuer.token(stranger, door, ["legal"]),
        "alg none": unsigned(claims, rsa.kid),
        "HS256 with the public key": hs256_with_public_key(claims, rsa),
        "not yet valid": issuer.token(rsa, door, ["legal"], nbf=now + 600),
        "no expiry": jwt.encode({k: v for k, v in claims.items() if k != "exp"}, rsa.private, algorithm="RS256",
                                headers={"kid": rsa.kid}),
    }


def test_every_refused_kind_of_token_gets_401_with_the_pointer_to_the_metadata(door: str, issuer: Issuer) -> None:
    pointer = door.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    for kind, token in refused_kinds(door, issuer).items():
        response = post(door, token)
        assert response.status_code == 401, kind
        assert f'resource_metadata="{pointer}"' in response.headers["www-authenticate"], kind
        assert response.json()["code"] == "UNAUTHORIZED", kind
    assert post(door, None).status_code == 401


def test_the_protected_resource_metadata_names_the_issuer(door: str) -> None:
    base = door.rsplit("/mcp", 1)[0]
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        metadata = httpx2.get(base + path, timeout=30).json()
        assert metadata["resource"] == door and metadata["authorization_servers"] == [ISSUER], path


def test_a_rotated_key_is_followed_and_the_retired_one_refused(door: str, issuer: Issuer) -> None:
    retired = issuer.keys[0]
    assert post(door, issuer.token(retired, door, ["legal"])).status_code == 200
    rotated = Key.rsa("k-rotated")
    issuer.keys = [rotated, *issuer.keys[1:]]
    time.sleep(0.6)  # past the refetch interval of the door under test
    assert any("Секретный" in t for t in titles(post(door, issuer.token(rotated, door, ["legal"]))))
    time.sleep(0.6)
    assert post(door, issuer.token(retired, door, ["legal"])).status_code == 401
