"""The per-window lookups of service/search/vectors.py under many concurrent searches: one engine read per expiry."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import service.search.vectors as vectors
from service.search.vectors import Coverage, CoverageCache, EmbedderResolver
from service.settings import Settings

CALLERS = 24


class SlowCounter:
    """Stands in for one engine request: counts calls and takes a little while, so callers overlap."""

    def __init__(self, result: Any) -> None:
        self.calls, self.result, self._lock = 0, result, threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self.calls += 1
        time.sleep(0.05)
        return self.result() if callable(self.result) else self.result


def at_once(fn: Any) -> list[Any]:
    start = threading.Barrier(CALLERS)

    def call(_: int) -> Any:
        start.wait()
        return fn()

    with ThreadPoolExecutor(CALLERS) as pool:
        return list(pool.map(call, range(CALLERS)))


def test_coverage_is_read_once_per_window_for_concurrent_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    read = SlowCounter(Coverage(10, 3))
    monkeypatch.setattr(vectors, "read_coverage", read)
    cache = CoverageCache(client=None, index="idx", ttl_s=0.3)  # type: ignore[arg-type]

    assert set(at_once(lambda: cache.get(("b", "a")))) == {Coverage(10, 3)}
    assert read.calls == 1
    assert cache.get(("a", "b", "a")) == Coverage(10, 3) and read.calls == 1  # same groups, same entry
    cache.get(("c",))
    assert read.calls == 2  # other groups, their own entry

    time.sleep(0.35)
    at_once(lambda: cache.get(("a", "b")))
    assert read.calls == 3


class Fixed:
    """An embedder stand-in: the resolver only stores and returns it."""

    def load_stats(self, stats: Any) -> None:
        raise AssertionError("no stats in these records")


def resolver(monkeypatch: pytest.MonkeyPatch, index: list[str]) -> tuple[EmbedderResolver, SlowCounter]:
    lookup = SlowCounter(lambda: index[0])
    monkeypatch.setattr(vectors, "concrete_index", lookup)
    monkeypatch.setattr(vectors, "read_embedder_meta", lambda *a: {"provider": "navec", "model": "m"})
    monkeypatch.setattr(vectors, "embedder_meta_version", lambda client, settings, idx: ("embedder@" + idx, 1, 1))
    built = Fixed()
    monkeypatch.setattr(vectors, "embedder_for", lambda *a: built)
    resolver = EmbedderResolver(client=None, settings=Settings(), configured=None, ttl_s=0.3)  # type: ignore[arg-type]
    return resolver, lookup


def test_resolver_looks_up_once_and_serves_the_last_answer_while_refreshing(monkeypatch: pytest.MonkeyPatch) -> None:
    index = ["idx-1"]
    res, lookup = resolver(monkeypatch, index)

    first = at_once(res.current)
    assert {i for i, _ in first} == {"idx-1"} and lookup.calls == 1  # nothing known yet: all wait for one

    time.sleep(0.35)
    index[0] = "idx-2"
    expired = at_once(res.current)
    assert lookup.calls == 2  # one caller looked up again
    assert {i for i, _ in expired} <= {"idx-1", "idx-2"} and ("idx-2", res.current()[1]) in expired


def test_after_invalidate_no_caller_gets_the_old_index(monkeypatch: pytest.MonkeyPatch) -> None:
    index = ["idx-1"]
    res, lookup = resolver(monkeypatch, index)
    res.current()

    index[0] = "idx-2"
    res.invalidate()  # the alias moved: the old answer must not be served any more
    answers = at_once(res.current)
    assert {i for i, _ in answers} == {"idx-2"}
    assert lookup.calls == 2


def test_the_record_is_read_only_when_its_version_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh asks for the record's version (no source); the record itself (megabytes of navec
    statistics) is read for a new index or a rewritten record only."""
    index, version, reads = ["idx-1"], [1], list[str]()
    monkeypatch.setattr(vectors, "concrete_index", lambda *a: index[0])
    monkeypatch.setattr(vectors, "embedder_meta_version", lambda client, settings, idx: ("embedder@" + idx, version[0],
                                                                                         1))
    def read(client: object, settings: object, idx: str) -> dict[str, Any]:
        reads.append(idx)
        return {}

    monkeypatch.setattr(vectors, "read_embedder_meta", read)
    monkeypatch.setattr(vectors, "embedder_for", lambda meta, *a: Fixed())
    res = EmbedderResolver(client=None, settings=Settings(), configured=None, ttl_s=0.0)  # type: ignore[arg-type]
    for _ in range(3):
        res.current()
    assert reads == ["idx-1"]
    index[0] = "idx-2"
    first = res.current()[1]
    assert reads == ["idx-1", "idx-2"] and res.current()[1] is first
    version[0] = 2  # the record was rewritten (statistics re-fitted): a fresh embedder
    assert res.current()[1] is not first and reads == ["idx-1", "idx-2", "idx-2"]
