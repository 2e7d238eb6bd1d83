"""A stand-in identity provider for tests: signing keys made in the test, their JWKS served on loopback (and
changeable, to rotate keys), access tokens minted with PyJWT."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "http://idp.test/realms/firm"


@dataclass
class Key:
    kid: str
    algorithm: str
    private: Any

    @classmethod
    def rsa(cls, kid: str) -> Key:
        return cls(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))

    @classmethod
    def ec(cls, kid: str) -> Key:
        return cls(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))

    def jwk(self) -> dict[str, Any]:
        kind = RSAAlgorithm if self.algorithm == "RS256" else ECAlgorithm
        public: dict[str, Any] = json.loads(kind.to_jwk(self.private.public_key()))
        return {**public, "kid": self.kid, "use": "sig", "alg": self.algorithm}

    def public_pem(self) -> bytes:
        return bytes(self.private.public_key().public_bytes(serialization.Encoding.PEM,
                                                            serialization.PublicFormat.SubjectPublicKeyInfo))


@dataclass
class Issuer:
    """The keys whose JWKS is served (``keys``, replaceable) and how many times it was fetched."""

    keys: list[Key]
    url: str = ""
    fetches: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: the HTTP status the JWKS is served with (500: an issuer that is down)
    status: int = 200
    #: when set, a fetch signals ``asked`` and waits for ``release`` before it answers (a slow issuer, by a hook)
    hold: bool = False
    asked: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    #: serve a body without end (no Content-Length) instead of the JWKS
    endless: bool = False

    def jwks(self) -> bytes:
        with self.lock:
            self.fetches += 1
            return json.dumps({"keys": [k.jwk() for k in self.keys]}).encode()

    def token(self, key: Key, audience: str, groups: list[str] | None = None, issuer: str = ISSUER,
              expires_in: float = 300, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": issuer, "aud": audience, "sub": "engineer-1", "iat": now, "exp": now + int(expires_in),
                **({"groups": groups} if groups is not None else {}), **claims}
        return jwt.encode(body, key.private, algorithm=key.algorithm, headers={"kid": key.kid})


@contextmanager
def serving(issuer: Issuer) -> Iterator[Issuer]:
    """The issuer's JWKS at ``issuer.url`` (loopback) while the block runs."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = issuer.jwks()
            if issuer.hold:
                issuer.asked.set()
                issuer.release.wait(30)
            if issuer.endless:
                self.send_response(200)
                self.end_headers()
                try:
                    while True:
                        self.wfile.write(b" " * 65536)
                except OSError:
                    return
            self.send_response(issuer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    issuer.url = f"http://127.0.0.1:{server.server_address[1]}/jwks"
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
