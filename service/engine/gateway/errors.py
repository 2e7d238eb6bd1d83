"""The one place where opensearch-py's failures become the product's errors: each refusal a caller expects (a
missing resource, a lost race, an index created first) becomes a class of its own that callers catch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from loguru import logger
from opensearchpy import exceptions as os_exc

from service.errors import (
    AccessRefused,
    AlreadyExists,
    DiskFull,
    EngineBusy,
    EngineTimeout,
    IndexUnavailable,
    InvalidQuery,
    PastLastPage,
    RequestRejected,
    ResourceMissing,
    SearchError,
    StroidokError,
    VersionConflict,
    WaitExpired,
)

T = TypeVar("T")
D = TypeVar("D")

#: a shard between states (just created, recovering, relocating) refuses with 503 for a moment; the same request
#: succeeds once it has started, so the connection tries again a few times (0.25 + 0.5 + 1 + 2 s at most)
SHARD_NOT_READY = {"illegal_index_shard_state_exception", "unavailable_shards_exception",
                   "no_shard_available_action_exception", "primary_missing_action_exception"}
SHARD_RETRIES = 5

def is_shard_not_ready(exc: BaseException) -> bool:
    """Whether the engine refused because a shard is not started yet (a 503 that passes by itself)."""
    return _refused(exc) and _status(exc) == 503 and _root_type(exc) in SHARD_NOT_READY


def is_bulk_rejected(exc: BaseException) -> bool:
    """A bulk request the engine had no queue room for (429): written a moment later (opensearch-py's bulk
    helpers retried it themselves, but they see the product's errors now)."""
    return _refused(exc) and _status(exc) == 429


#: Engine rejections caused by what the caller asked for: an INVALID_QUERY, not a database error.
INPUT_ERRORS = {"too_complex_to_determinize_exception", "too_many_clauses", "too_many_nested_clauses"}
#: Rejections for lack of memory or queue room: the same request succeeds later (ENGINE_BUSY).
BUSY_ERRORS = {"circuit_breaking_exception", "es_rejected_execution_exception", "rejected_execution_exception",
               *SHARD_NOT_READY}
#: the engine's block exceptions, of which the flood-stage ones are DISK_FULL
DISK_BLOCKS = {"cluster_block_exception", "index_create_block_exception"}
#: refusals callers expect (a lookup that finds nothing, a create that loses a race)
EXPECTED_STATUSES = {404, 409}
#: how long a caller should wait before trying a busy engine again
RETRY_AFTER_S = 2.0
DISK_FULL_MESSAGE = ("the engine's disk is past its flood-stage watermark, so it blocks writes to the index until "
                     "space is freed (then it lifts the block itself); searches keep working. Free disk space "
                     "and run the ingest again: what was refused is not recorded as indexed")


CREATE_BLOCKED_MESSAGE = ("the engine blocks creating indexes: every node's disk is past its high watermark (the "
                          "engine lifts the block itself at its next disk check once space is back, within about a "
                          "minute; this run waited for that in vain). Free disk space (`stroidok engine status` "
                          "shows it) and run again: nothing was written")


def is_create_block(exc: BaseException) -> bool:
    """Whether ``exc`` is the engine refusing to create an index while every node's disk is full
    (``cluster.blocks.create_index``, set by its disk guard and lifted by it)."""
    return _refused(exc) and _status(exc) == 403 and "create-index blocked" in _reason(exc)


def is_disk_block(reason: str) -> bool:
    """Whether an engine failure text is a flood-stage block: writes to an index on the full disk
    (``index.blocks.read_only_allow_delete``), or creating any index while every node's disk is full."""
    return any(mark in reason for mark in ("read_only_allow_delete", "flood-stage", "flood stage",
                                           "create-index blocked"))


#: the engine's ways of saying a search ran out of its time: its own ``timeout`` (with partial results refused)
#: and a cancellation (``search.cancel_after_time_interval``, or ours after the client stopped waiting)
TIMEOUT_MARKS = ("time exceeded", "cancelled", "canceled")


def engine_timeout(timeout_s: float | None = None) -> EngineTimeout:
    """The engine answers, but did not finish this request in time."""
    within = f" within {timeout_s:g} s" if timeout_s else " in time"
    return EngineTimeout(f"the search engine did not finish this request{within} (it was cancelled); narrow the "
                         "query (fewer words, operator AND or PHRASE) or add filters (document_types, folder, path)",
                         details={"timeout_s": timeout_s} if timeout_s else {})


def _refused(exc: BaseException) -> bool:
    """An answer of the engine (a status), not a failure to reach it."""
    return isinstance(exc, os_exc.TransportError) and not isinstance(exc, os_exc.ConnectionError)


def _missing_pipeline(exc: Exception) -> bool:
    return isinstance(exc, os_exc.RequestError) and "Pipeline" in _reason(exc) and "is not defined" in _reason(exc)


def _past_last_page(exc: Exception) -> bool:
    return isinstance(exc, os_exc.RequestError) and "Reached end of search result" in str(exc.info)


def _disk_blocked(exc: Exception) -> bool:
    return _refused(exc) and _root_type(exc) in DISK_BLOCKS and is_disk_block(_reason(exc))


def _busy(exc: Exception) -> bool:
    return _refused(exc) and (_root_type(exc) in BUSY_ERRORS or _status(exc) == 429)


def _timed_out(exc: Exception) -> bool:
    return _refused(exc) and any(mark in str(getattr(exc, "info", "")).lower() for mark in TIMEOUT_MARKS)


def _input_refused(exc: Exception) -> bool:
    return isinstance(exc, os_exc.RequestError) and _root_type(exc) in INPUT_ERRORS


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


#: the engine's failures as the product's errors: the first row whose test holds builds the error. The
#: engine's own reason text is logged, never put in the error a client receives.
TRANSLATIONS: tuple[tuple[Callable[[Exception], bool], Callable[[Exception], StroidokError]], ...] = (
    # connected, then no answer in time: busy, not down
    (lambda e: isinstance(e, os_exc.ConnectionTimeout), lambda e: engine_timeout()),
    (lambda e: isinstance(e, os_exc.SSLError),
     lambda e: IndexUnavailable("the search engine's TLS certificate could not be verified; set "
                                "STROIDOK_OPENSEARCH_CA_CERTS to the CA file it chains to",
                                details={"reason": "SSLError"})),
    (lambda e: isinstance(e, os_exc.ConnectionError),
     lambda e: IndexUnavailable("the search engine is not reachable; start it with `stroidok engine up`",
                                details={"reason": type(e).__name__})),
    (lambda e: _refused(e) and _status(e) == 404,
     lambda e: ResourceMissing("the index or a resource it needs is not found; create it with `stroidok index "
                                "init`", details={"status": 404})),
    (_missing_pipeline,
     lambda e: IndexUnavailable("the index is not initialised (its search pipeline is missing); run `stroidok "
                                "index init`", details={"status": 400})),
    (_past_last_page, lambda e: PastLastPage("the requested page is past the last result")),
    (is_create_block, lambda e: DiskFull(CREATE_BLOCKED_MESSAGE, details={"status": 403, "block": "create_index"})),
    (_disk_blocked, lambda e: DiskFull(DISK_FULL_MESSAGE, details={"status": _status(e)})),
    (_busy, lambda e: EngineBusy(f"the search engine is short of memory or busy; try again in {RETRY_AFTER_S:.0f} s",
                                 details={"status": _status(e), "type": _root_type(e) or None,
                                          "retry_after_s": RETRY_AFTER_S})),
    (_timed_out, lambda e: engine_timeout()),
    (_input_refused,
     lambda e: InvalidQuery("the search engine could not run this query as given; simplify the query or its "
                            "filters", details={"reason": _root_type(e)})),
    (lambda e: _refused(e) and _status(e) == 401,
     lambda e: AccessRefused("the search engine refused the product's credentials; check "
                             "STROIDOK_OPENSEARCH_USERNAME and STROIDOK_OPENSEARCH_PASSWORD(_FILE)",
                             details={"status": 401})),
    (lambda e: _refused(e) and _status(e) == 403,
     lambda e: AccessRefused("the search engine's security refused this action to the product's user",
                             details=_status_and_type(e))),
    (lambda e: _refused(e) and _status(e) == 409,
     lambda e: VersionConflict("another writer changed this document first", details=_status_and_type(e))),
    (lambda e: _refused(e) and _root_type(e) == "resource_already_exists_exception",
     lambda e: AlreadyExists("the index was created by another process first", details=_status_and_type(e))),
    (lambda e: _refused(e) and _status(e) == 408,
     lambda e: WaitExpired("the engine's wait ended before what it waited for happened",
                           details=_status_and_type(e))),
    (lambda e: _refused(e) and _status(e) == 400,
     lambda e: RequestRejected("the search engine rejected the request (its reason is in the server's log)",
                               details=_status_and_type(e))),
    (_refused, lambda e: SearchError("the search engine rejected the request (its reason is in the server's log)",
                                     details=_status_and_type(e))),
)


def _status_and_type(exc: BaseException) -> dict[str, Any]:
    return {"status": _status(exc), "type": _root_type(exc) or None}


def translate(exc: Exception) -> StroidokError:
    """Map an opensearch-py exception to a member of the product's tree (``TRANSLATIONS``). A missing resource
    (404) or a lost race (409) is an answer callers expect and catch (``ResourceMissing``, ``VersionConflict``):
    it is logged only at debug level."""
    if _refused(exc):
        level = "DEBUG" if _status(exc) in EXPECTED_STATUSES else "WARNING"
        logger.log(level, "engine error {}: {}", _status(exc), _reason(exc))
    for holds, build in TRANSLATIONS:
        if holds(exc):
            return build(exc)
    logger.warning("unexpected engine failure: {}", exc)
    return SearchError("unexpected engine failure (details in the server's log)")


def _info(exc: BaseException) -> dict[str, Any]:
    """The engine's JSON answer carried by a refusal; empty for anything else."""
    info = getattr(exc, "info", None)
    return info if isinstance(info, dict) else {}


def _root_type(exc: BaseException) -> str:
    info = _info(exc)
    error = info.get("error")
    if not isinstance(error, dict):
        return ""
    causes = [*(error.get("root_cause") or []), error, *((error.get("caused_by") and [error["caused_by"]]) or [])]
    types = [str(c.get("type", "")) for c in causes if isinstance(c, dict)]
    return next((t for t in types if t in INPUT_ERRORS | BUSY_ERRORS), types[0] if types else "")


def _reason(exc: BaseException) -> str:
    error = _info(exc).get("error")
    if isinstance(error, dict):
        root = (error.get("root_cause") or [error])[0]
        return str(root.get("reason") or error.get("reason") or error.get("type"))
    return str(error or getattr(exc, "error", ""))


def unless_missing(call: Callable[[], T], default: D) -> T | D:
    """``call()``, or ``default`` where the engine answers that what it asks for is not there (404)."""
    try:
        return call()
    except ResourceMissing:
        return default
