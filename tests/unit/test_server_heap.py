"""The server settles its heap before the first call: the embedder loaded, the heap frozen, the collector slowed."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from service.errors import IndexUnavailable
from service.server.tools import YOUNG_OBJECTS, settle


@pytest.fixture
def collector() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


class Resolver:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls, self.error = 0, error

    def current(self) -> Any:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return "index", object()


def test_settle_loads_the_embedder_then_freezes_the_heap_and_slows_the_collector(collector: None) -> None:
    gc.unfreeze()
    resolver = Resolver()
    settle(SimpleNamespace(resolver=resolver))  # type: ignore[arg-type]
    assert resolver.calls == 1
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] == YOUNG_OBJECTS


def test_settle_with_the_engine_down_still_settles_and_leaves_the_embedder_to_the_first_call(collector: None) -> None:
    gc.unfreeze()
    resolver = Resolver(IndexUnavailable("the engine is down"))
    settle(SimpleNamespace(resolver=resolver))  # type: ignore[arg-type]
    assert resolver.calls == 1
    assert gc.get_freeze_count() > 0


def test_a_cycle_made_while_serving_is_still_collected(collector: None) -> None:
    settle(SimpleNamespace(resolver=Resolver()))  # type: ignore[arg-type]

    class Node:
        pass

    node = Node()
    node.self = node  # type: ignore[attr-defined]
    gone = weakref.ref(node)
    del node
    assert gone() is not None  # a cycle: reference counting alone keeps it
    gc.collect()
    assert gone() is None
