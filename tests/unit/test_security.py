from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from pydantic import ValidationError

from service.caller.identity import Identity
from service.caller.limits import RateLimiter
from service.caller.principal import Principal
from service.errors import RateLimited, Unauthorized
from service.search.answer.models import SearchResponse
from service.settings import ServerSettings
from service.settings.groups import MAX_GROUPS
from tests.support.issuer import ISSUER, Issuer, Key, serving
from tests.support.net import free_port

EMPTY_RESPONSE = {"results": [], "meta": {
    "query": "q", "total_results": 0, "route_used": "bm25", "operator_used": "AUTO", "timings": {},
    "facets": {}, "suggestions": {}, "pagination": {"page": 1, "limit": 10, "total_pages": 1, "has_more": False}}}


def test_everyone_reads_public() -> None:
    assert Principal.of("a", ["legal", "legal"]).groups == ("legal", "public")


def test_tokens_map_to_groups_and_unknown_tokens_are_refused() -> None:
    identity = Identity(ServerSettings(tokens={"t1": ["legal"]}))
    assert identity.principal("Bearer t1").groups == ("legal", "public")
    for header in (None, "Bearer nope", "Basic t1", "Bearer a.b.c"):
        with pytest.raises(Unauthorized):
            identity.principal(header)


def test_rate_limiter_is_per_client() -> None:
    limiter = RateLimiter("2/minute")
    limiter.check("a")
    limiter.check("a")
    limiter.check("b")
    with pytest.raises(RateLimited):
        limiter.check("a")


def test_the_in_process_limiter_starts_no_thread_per_call_and_still_drops_expired_entries(
        monkeypatch: pytest.MonkeyPatch) -> None:
    limiter = RateLimiter("3/second")
    storage: Any = limiter.limiter.storage
    started: list[threading.Thread] = []
    monkeypatch.setattr(threading.Thread, "start", lambda thread: started.append(thread))
    for _ in range(3):
        limiter.check("a")
        time.sleep(0.03)  # longer than the library's 10 ms expiry timer
    assert started == []
    with pytest.raises(RateLimited):
        limiter.check("a")
    assert any("/a/" in key for key in storage.events)
    time.sleep(1.05)  # a's entries are past their one-second window
    storage.sweep_s = 0.0
    limiter.check("b")
    assert [events for key, events in storage.events.items() if "/a/" in key] == [[]], "swept on a later call"
    limiter.check("a")


def test_a_redis_that_is_down_lets_calls_through_and_misses_the_cache() -> None:
    from service.caller.limits import RateLimiter
    from service.search.cache import RedisCache, cache_key

    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    limiter = RateLimiter("1/minute", url)
    limiter.check("agent")
    limiter.check("agent")  # would be refused by a working store; a broken one must not refuse everyone
    cache = RedisCache(url, 60)
    key = cache_key("cluster", 1, ("public",), "{}", "alias")
    assert cache.get(key) is None
    cache.put(key, SearchResponse.model_validate(EMPTY_RESPONSE))  # no exception


def test_cache_keys_differ_by_deployment_generation_groups_request_and_index() -> None:
    from service.search.cache import cache_key

    base = cache_key("c1", 1, ("public",), '{"q":1}', "a")
    assert len({base, cache_key("c1", 2, ("public",), '{"q":1}', "a"),
                cache_key("c1", 1, ("legal", "public"), '{"q":1}', "a"), cache_key("c1", 1, ("public",), '{"q":2}',
                                                                                   "a"),
                cache_key("c1", 1, ("public",), '{"q":1}', "b"), cache_key("c2", 1, ("public",), '{"q":1}', "a")}) == 6


def test_two_lists_of_groups_never_share_a_cache_key() -> None:
    from service.search.cache import cache_key

    assert cache_key("c", 1, ("a,b",), "{}", "x") != cache_key("c", 1, ("a", "b"), "{}", "x")


def test_memory_cache_is_safe_when_many_threads_expire_and_insert_at_once() -> None:
    """The server answers calls from a thread pool: an unguarded TTLCache raised KeyError here (INTERNAL_ERROR)."""
    from service.search.cache import MemoryCache

    cache = MemoryCache(32, 0.001)  # entries expire while others are inserted
    response = SearchResponse.model_validate(EMPTY_RESPONSE)
    errors: list[BaseException] = []

    def hammer(n: int) -> None:
        try:
            for i in range(3000):
                key = str((i * 7 + n) % 100)
                cache.get(key)
                cache.put(key, response)
        except BaseException as exc:  # any failure of a thread is what the test looks for
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_memory_cache_round_trips_a_response() -> None:
    from service.search.cache import MemoryCache

    cache = MemoryCache(4, 60)
    response = SearchResponse.model_validate(EMPTY_RESPONSE)
    cache.put("k", response)
    assert cache.get("k") == response and cache.get("other") is None


def oauth_settings(jwks_url: str, **more: object) -> ServerSettings:
    return ServerSettings.model_validate({"oauth_issuer": ISSUER, "oauth_jwks_url": jwks_url,
                                          "oauth_audience": "http://s.test/mcp", **more})


def test_invented_key_ids_fetch_the_issuers_keys_at_most_once_per_interval() -> None:
    with serving(Issuer([Key.ec("k1")])) as issuer:
        identity = Identity(oauth_settings(issuer.url, oauth_jwks_refetch_s=60))
        assert identity.principal(f"Bearer {issuer.token(issuer.keys[0], 'http://s.test/mcp', ['legal'])}").groups \
            == ("legal", "public")
        for i in range(20):
            with pytest.raises(Unauthorized):
                identity.principal(f"Bearer {issuer.token(Key.ec(f'invented-{i}'), 'http://s.test/mcp', ['legal'])}")
        assert issuer.fetches == 1


def test_groups_come_from_a_dotted_claim_and_names_that_are_no_group_names_are_left_out() -> None:
    with serving(Issuer([Key.ec("k1")])) as issuer:
        identity = Identity(oauth_settings(issuer.url, oauth_groups_claim="realm_access.roles"))
        token = issuer.token(issuer.keys[0], "http://s.test/mcp", None,
                             realm_access={"roles": ["legal", "Domain Users", "l\u0435gal", "hr\n", 7]})
        assert identity.principal(f"Bearer {token}").groups == ("legal", "public")


@pytest.mark.parametrize("missing", ["oauth_issuer", "oauth_jwks_url", "oauth_audience"])
def test_oauth_settings_come_whole(missing: str) -> None:
    given = {"oauth_issuer": ISSUER, "oauth_jwks_url": "http://k.test/jwks", "oauth_audience": "http://s.test/mcp"}
    with pytest.raises(ValidationError):
        ServerSettings.model_validate({k: v for k, v in given.items() if k != missing})


def test_a_token_whose_alg_does_not_fit_its_keys_type_is_refused_not_an_error() -> None:
    """ES256 in the header, the kid of an RSA key: the verifier's TypeError was a 500 with a traceback."""
    rsa_key = Key.rsa("r1")
    with serving(Issuer([rsa_key])) as issuer:
        identity = Identity(oauth_settings(issuer.url))
        forged = issuer.token(Key("r1", "ES256", Key.ec("e1").private), "http://s.test/mcp", ["legal"])
        with pytest.raises(Unauthorized, match="could not be verified"):
            identity.principal(f"Bearer {forged}")


def test_a_token_with_too_many_groups_is_refused_before_any_engine_request() -> None:
    with serving(Issuer([Key.ec("k1")])) as issuer:
        identity = Identity(oauth_settings(issuer.url))
        many = issuer.token(issuer.keys[0], "http://s.test/mcp", [f"g{i}" for i in range(MAX_GROUPS + 1)])
        with pytest.raises(Unauthorized, match="groups"):
            identity.principal(f"Bearer {many}")
        fine = issuer.token(issuer.keys[0], "http://s.test/mcp", [f"g{i}" for i in range(MAX_GROUPS - 1)])
        assert len(identity.principal(f"Bearer {fine}").groups) == MAX_GROUPS


def test_settings_refuse_a_token_with_more_groups_than_a_caller_may_hold() -> None:
    with pytest.raises(ValidationError, match="over the"):
        ServerSettings.model_validate({"tokens": {"t" * 20: [f"g{i}" for i in range(MAX_GROUPS + 1)]}})


def test_a_caller_whose_key_is_cached_goes_on_while_another_fetches_the_keys() -> None:
    """One caller's unknown key id holds the issuer (a hook, not a sleep); a caller of a cached key is not held."""
    with serving(Issuer([Key.ec("k1")])) as issuer:
        identity = Identity(oauth_settings(issuer.url, oauth_jwks_refetch_s=0))
        good = f"Bearer {issuer.token(issuer.keys[0], 'http://s.test/mcp', ['legal'])}"
        identity.principal(good)  # the keys cached
        issuer.hold = True
        unknown = f"Bearer {issuer.token(Key.ec('new'), 'http://s.test/mcp', ['legal'])}"
        refused: list[str] = []

        def ask_unknown() -> None:
            try:
                identity.principal(unknown)
            except Unauthorized as exc:
                refused.append(exc.code)

        fetching = threading.Thread(target=ask_unknown)
        fetching.start()
        assert issuer.asked.wait(10)
        answered: list[Principal] = []
        cached = threading.Thread(target=lambda: answered.append(identity.principal(good)))
        cached.start()
        cached.join(5)
        held = cached.is_alive()
        issuer.release.set()
        fetching.join(10)
        cached.join(10)
        assert not held and answered and answered[0].groups == ("legal", "public")
        assert issuer.fetches == 2 and refused == ["UNAUTHORIZED"]


def test_callers_needing_the_keys_wait_for_the_one_fetch_under_way() -> None:
    with serving(Issuer([Key.ec("k1")])) as issuer:
        identity = Identity(oauth_settings(issuer.url))
        issuer.hold = True
        token = f"Bearer {issuer.token(issuer.keys[0], 'http://s.test/mcp', ['legal'])}"
        got: list[Principal] = []
        callers = [threading.Thread(target=lambda: got.append(identity.principal(token))) for _ in range(5)]
        callers[0].start()
        assert issuer.asked.wait(10)
        for t in callers[1:]:
            t.start()
        issuer.release.set()
        for t in callers:
            t.join(10)
        assert len(got) == 5 and issuer.fetches == 1


def test_keys_stay_trusted_while_the_issuer_is_down_only_for_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr("service.caller.identity.time.monotonic", lambda: clock[0])
    with serving(Issuer([Key.ec("k1")])) as issuer:
        identity = Identity(oauth_settings(issuer.url, oauth_jwks_ttl_s=60, oauth_jwks_max_stale_s=600))
        token = f"Bearer {issuer.token(issuer.keys[0], 'http://s.test/mcp', ['legal'])}"
        identity.principal(token)
        issuer.status = 500
        clock[0] += 500  # stale, the issuer down: the last good keys still hold
        assert identity.principal(token).groups == ("legal", "public")
        clock[0] += 200  # past the bound since the last good fetch
        with pytest.raises(Unauthorized):
            identity.principal(token)
        issuer.status = 200
        clock[0] += 100  # the issuer answers again
        assert identity.principal(token).groups == ("legal", "public")


def test_a_jwks_without_end_is_cut_at_its_size_bound_as_it_streams() -> None:
    with serving(Issuer([Key.ec("k1")], endless=True)) as issuer:
        identity = Identity(oauth_settings(issuer.url))
        token = f"Bearer {issuer.token(issuer.keys[0], 'http://s.test/mcp', ['legal'])}"
        refused: list[bool] = []

        def ask() -> None:
            with pytest.raises(Unauthorized):
                identity.principal(token)
            refused.append(True)

        asking = threading.Thread(target=ask, daemon=True)
        asking.start()
        asking.join(10)
        assert refused == [True]
