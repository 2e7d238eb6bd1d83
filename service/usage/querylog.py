"""The query log: one entry per tool call, refused calls included, with every argument and the error code.

Entries go to the query-log index (for OpenSearch Dashboards) and, at DEBUG, to stderr (``--verbose``).
Logging is best effort and off the request path: it never fails or slows a call.
"""

from __future__ import annotations

import atexit
import json
import queue
import threading
import time
from datetime import UTC, datetime
from typing import Any

import orjson
from loguru import logger
from opensearchpy import OpenSearch
from pydantic import BaseModel

from service.engine.gateway import bulk_outcomes
from service.errors import StroidokError
from service.usage.feedback import Opening
from service.usage.stats import prune_log

MAX_ARGUMENTS = 40
MAX_VALUE_CHARS = 500


def logged_arguments(arguments: dict[str, Any]) -> dict[str, str]:
    """The call's arguments as the log keeps them: each value as JSON text, bounded in count and length."""
    kept = list(arguments.items())[:MAX_ARGUMENTS]
    return {str(k)[:100]: json.dumps(v, ensure_ascii=False, default=str)[:MAX_VALUE_CHARS] for k, v in kept}


def result_summary(result: BaseModel | None) -> dict[str, Any]:
    """What a successful call returned, in the log's fields (a search: its results' ids in rank order too)."""
    meta = getattr(result, "meta", None)
    if meta is not None:  # a search
        results = getattr(result, "results", [])
        return {"route_used": meta.route_used, "operator_used": meta.operator_used,
                "total_results": meta.total_results, "returned": len(results),
                "result_ids": [r.id for r in results], "cached": meta.cached, "truncated": meta.truncated,
                "embedding_ms": meta.timings.embedding_ms, "search_ms": meta.timings.search_ms}
    if hasattr(result, "total_documents"):
        return {"total_results": result.total_documents}  # type: ignore[union-attr]
    return {"returned": 1} if result is not None else {}


def encodable(value: Any) -> Any:
    """``value`` with every text that is not valid UTF-8 (lone surrogates from a command line's bytes) escaped, so
    an entry always serialises: logging a refused call must never fail the call's own error path."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encodable(v) for v in value]
    return value


def call_entry(tool: str, arguments: dict[str, Any], principal: str, client: str | None, total_ms: float,
               result: BaseModel | None = None, error: BaseException | None = None, *, call_id: str | None = None,
               groups: tuple[str, ...] = (), opening: Opening | None = None,
               request: dict[str, Any] | None = None) -> dict[str, Any]:
    """One log entry of a tool call: who (name, client, access groups), what, how long, what came back; for a
    ``get_document`` that opened a result of an earlier search, that search's ``call_id`` and the rank; a
    search's ``request``: its main fields as the contract reads them (``contract.logged_fields``). Pure."""
    code = error.code if isinstance(error, StroidokError) else ("INTERNAL_ERROR" if error else None)
    entry: dict[str, Any] = {
        "call_id": call_id, "groups": list(groups), "tool": tool, "principal": principal, "client": client,
        "query": str(arguments.get("query") or arguments.get("id") or arguments.get("designation")
                     or arguments.get("text") or "")[:500],
        "status": "error" if error else "ok", "error_code": code, "total_ms": round(total_ms, 2),
        "arguments": logged_arguments(arguments),
    }
    entry.update(request or {})
    entry.update(result_summary(result))
    if opening is not None:
        entry.update(follows=opening.follows, opened_rank=opening.rank)
    return entry


#: a refused call's entry keeps the names of its arguments (the keys of ``arguments``), never their values: it is
#: bounded, and nothing of a query reaches readers of other groups; every reader's stats count it (groups: public)
REFUSED_ARGUMENTS = 20


def refused_entry(tool: str, arguments: dict[str, Any], error: StroidokError, who: str) -> dict[str, Any]:
    """The log entry of a call refused before the service (no token, unknown or malformed arguments). Pure."""
    names = [str(k)[:60] for k in list(arguments)[:REFUSED_ARGUMENTS]] if isinstance(arguments, dict) else []
    return {"call_id": None, "groups": ["public"], "tool": tool[:60], "principal": "refused", "client": who[:100],
            "query": "", "status": "error", "error_code": error.code, "total_ms": 0.0,
            "arguments": dict.fromkeys(names, "")}


class QueryLog:
    """Entries are queued by the call and written by one background thread in bulk requests (every
    ``interval_s`` or ``batch`` entries), so a tool call never waits on the log. ``flush`` waits until
    everything queued so far is written (tests, shutdown; also run at interpreter exit)."""

    def __init__(self, client: OpenSearch, index: str, enabled: bool = True, interval_s: float = 1.0,
                 batch: int = 500, max_queued: int = 100_000, retention_days: int | None = None,
                 max_bytes: int = 64 * 1024 * 1024) -> None:
        self.client, self.index, self.enabled, self.retention_days = client, index, enabled, retention_days
        self._pruned_at: float | None = None
        self.interval_s, self.batch = interval_s, batch
        self.queue: queue.Queue[tuple[dict[str, Any], int]] = queue.Queue(max_queued)
        self.max_bytes, self.queued_bytes, self.dropped = max_bytes, 0, 0
        self._exists = False
        self._writer: threading.Thread | None = None
        self._lock = threading.Lock()

    def _ready(self) -> bool:
        """Write only into the index `stroidok index init` created (never auto-create one without its mapping)."""
        if not self._exists:
            try:
                self._exists = bool(self.client.indices.exists(index=self.index))
            except (StroidokError, OSError):
                return False
            if not self._exists:
                logger.warning("query log index {} missing; run `stroidok index init`", self.index)
        return self._exists

    def record(self, entry: dict[str, Any]) -> None:
        entry = encodable({"timestamp": datetime.now(UTC).isoformat(), **entry})
        logger.debug("query {}", entry)  # on stderr with --verbose; always in the query-log index
        if not self.enabled:
            return
        self._start()
        size = len(orjson.dumps(entry, default=str))
        with self._lock:
            fits = self.queued_bytes + size <= self.max_bytes
            if fits:
                self.queued_bytes += size
        if fits:
            try:
                self.queue.put_nowait((entry, size))
                return
            except queue.Full:
                with self._lock:
                    self.queued_bytes -= size
        self._drop()

    def _drop(self) -> None:
        """Count an entry the queue had no room for (bytes or entries); warn on the first and every 1000th."""
        with self._lock:
            self.dropped += 1
            dropped, waiting = self.dropped, self.queued_bytes
        if dropped == 1 or dropped % 1000 == 0:
            logger.warning("query log queue full ({} bytes waiting); {} entries dropped so far", waiting, dropped)

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until every entry queued so far is written (or given up); False on timeout."""
        deadline = time.monotonic() + timeout_s
        while self.queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self.queue.unfinished_tasks

    def _start(self) -> None:
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="query-log", daemon=True)
                self._writer.start()
                atexit.register(self.flush, 5.0)

    def _run(self) -> None:
        while True:
            taken = [self.queue.get()]
            deadline = time.monotonic() + self.interval_s
            while len(taken) < self.batch and (left := deadline - time.monotonic()) > 0:
                try:
                    taken.append(self.queue.get(timeout=left))
                except queue.Empty:
                    break
            self._write([entry for entry, _ in taken])
            with self._lock:
                self.queued_bytes -= sum(size for _, size in taken)
            self._prune_daily()
            for _ in taken:
                self.queue.task_done()

    def _prune_daily(self) -> None:
        """Entries past the retention go when the writer starts and once a day after."""
        if self.retention_days is None or (self._pruned_at is not None and time.monotonic() - self._pruned_at < 86400):
            return
        self._pruned_at = time.monotonic()
        try:
            deleted = prune_log(self.client, self.index, self.retention_days)
        except (StroidokError, OSError) as exc:
            logger.warning("query log not pruned: {}", exc)
            return
        if deleted:
            logger.info("query log: {} entries older than {} days deleted", deleted, self.retention_days)

    def _write(self, entries: list[dict[str, Any]]) -> None:
        if not self._ready():
            return
        try:
            refused = sum(not outcome.ok for outcome in bulk_outcomes(
                self.client, ({"_index": self.index, "_source": e} for e in entries), request_timeout=10))
            if refused:
                logger.warning("query log: {} entries not written", refused)
        except (StroidokError, OSError) as exc:
            logger.warning("query log not written: {}", exc)
