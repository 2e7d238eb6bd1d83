"""What reading the caller costs the server per HTTP call: a static token, and a JWT access token of an identity
provider (RS256 and ES256, the issuer's keys cached), through ``service.caller.identity.Identity`` as the door calls
it. The keys and the JWKS are made here (``tests.support.issuer``).

    python -m benchmarks.identity_cost
"""

from __future__ import annotations

import time

from service.caller.identity import Identity
from service.settings import ServerSettings
from tests.support.issuer import ISSUER, Issuer, Key, serving


def per_call_us(identity: Identity, header: str, calls: int) -> float:
    identity.principal(header)  # the keys fetched once
    began = time.perf_counter()
    for _ in range(calls):
        identity.principal(header)
    return (time.perf_counter() - began) / calls * 1e6


def main() -> None:
    with serving(Issuer([Key.rsa("rsa"), Key.ec("ec")])) as issuer:
        identity = Identity(ServerSettings.model_validate({
            "tokens": {"static-1": ["public"]}, "oauth_issuer": ISSUER, "oauth_jwks_url": issuer.url,
            "oauth_audience": "http://search.test/mcp"}))
        print("# python -m benchmarks.identity_cost")
        print(f"static token: {per_call_us(identity, 'Bearer static-1', 20_000):.1f} us a call")
        for key in issuer.keys:
            token = issuer.token(key, "http://search.test/mcp", ["legal"])
            print(f"JWT {key.algorithm}: {per_call_us(identity, f'Bearer {token}', 2_000):.0f} us a call "
                  f"(JWKS fetched {issuer.fetches} time(s) in all)")


if __name__ == "__main__":
    main()
