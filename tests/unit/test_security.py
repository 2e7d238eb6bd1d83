from __future__ import annotations

import pytest

from service.errors import RateLimited, Unauthorized
from service.security import Principal, RateLimiter, stdio_principal, token_principal
from service.settings import ServerSettings


def test_everyone_reads_public():
    assert Principal.of("a", ["legal", "legal"]).groups == ("legal", "public")


def test_tokens_map_to_groups_and_unknown_tokens_are_refused():
    settings = ServerSettings(tokens={"t1": ["legal"]})
    assert token_principal(settings, "Bearer t1").groups == ("legal", "public")
    for header in (None, "Bearer nope", "Basic t1"):
        with pytest.raises(Unauthorized):
            token_principal(settings, header)


def test_without_tokens_http_callers_get_the_configured_principal():
    settings = ServerSettings(principal="svc", groups=["eng"])
    assert token_principal(settings, None) == stdio_principal(settings) == Principal.of("svc", ["eng"])


def test_rate_limiter_is_per_client():
    limiter = RateLimiter("2/minute")
    limiter.check("a")
    limiter.check("a")
    limiter.check("b")
    with pytest.raises(RateLimited):
        limiter.check("a")
