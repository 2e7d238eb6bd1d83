"""The query log's queue is bounded in bytes, and a refused call's entry is small and counted by every reader."""

from __future__ import annotations

import json
import threading
from typing import Any

from service.errors import InvalidQuery, Unauthorized
from service.usage.querylog import QueryLog, call_entry, refused_entry


class StuckEngine:
    """A client whose first request never returns (the log's writer stays busy): entries pile up in the queue."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.indices = self

    def exists(self, index: str) -> bool:
        self.release.wait(30)
        return False


def test_the_log_queue_keeps_at_most_its_bytes_and_counts_what_it_drops() -> None:
    engine = StuckEngine()
    log = QueryLog(engine, "q", max_bytes=1024 * 1024)  # type: ignore[arg-type]
    big = {"query": "бетон " * 2000, "arguments": {"x": "y" * 20000}}  # ~44 KB, the largest a call logs
    try:
        for _ in range(100):
            log.record(big)
        assert log.queued_bytes <= 1024 * 1024
        assert log.dropped >= 100 - 1024 * 1024 // 40_000
    finally:
        engine.release.set()
        assert log.flush(10)


def test_a_refused_call_is_logged_by_its_argument_names_only_and_counted_by_every_reader() -> None:
    arguments: dict[str, Any] = {f"field{i}": "x" * 10_000 for i in range(100)}
    entry = refused_entry("search_documents", arguments, InvalidQuery("unknown argument(s)"), "addr:10.0.0.7")
    assert len(json.dumps(entry, ensure_ascii=False)) < 1500
    assert entry["groups"] == ["public"] and entry["error_code"] == "INVALID_QUERY" and entry["query"] == ""
    assert list(entry["arguments"]) == [f"field{i}" for i in range(20)] and set(entry["arguments"].values()) == {""}
    full = call_entry("search_documents", arguments, "unknown", None, 0.0, error=Unauthorized("no"))
    assert len(json.dumps(full, ensure_ascii=False)) > 10 * len(json.dumps(entry, ensure_ascii=False))
