"""The OpenSearch client, and the one place where opensearch-py errors become the product's errors."""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from loguru import logger
from opensearchpy import JSONSerializer, OpenSearch, Transport, Urllib3HttpConnection, helpers
from opensearchpy import exceptions as os_exc
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential
from urllib3 import Timeout

from service.errors import (
    DiskFull,
    EngineBusy,
    EngineTimeout,
    IndexUnavailable,
    InvalidQuery,
    PastLastPage,
    SearchError,
    StroidokError,
)
from service.settings import Settings

#: a shard between states (just created, recovering, relocating) refuses with 503 for a moment; the same request
#: succeeds once it has started, so the connection tries again a few times (0.25 + 0.5 + 1 + 2 s at most)
SHARD_NOT_READY = {"illegal_index_shard_state_exception", "unavailable_shards_exception",
                   "no_shard_available_action_exception", "primary_missing_action_exception"}
SHARD_RETRIES = 5

T = TypeVar("T")
D = TypeVar("D")


def is_shard_not_ready(exc: BaseException) -> bool:
    """Whether the engine refused because a shard is not started yet (a 503 that passes by itself)."""
    return _refused(exc) and _status(exc) == 503 and _root_type(exc) in SHARD_NOT_READY


def is_bulk_rejected(exc: BaseException) -> bool:
    """A bulk request the engine had no queue room for (429): written a moment later (opensearch-py's bulk
    helpers retried it themselves, but they see the product's errors now)."""
    return _refused(exc) and _status(exc) == 429


class BoundedConnection(Urllib3HttpConnection):
    """Connects within ``connect_timeout_s`` whatever the read timeout: an engine that is down answers
    ``INDEX_UNAVAILABLE`` in about two seconds, while a long bulk write may still read for minutes. A shard
    that is not started yet (503) is waited for briefly, every request alike."""

    connect_timeout_s = 2.0

    def __init__(self, *args: Any, timeout: float = 10.0, **kwargs: Any) -> None:
        super().__init__(*args, timeout=self._bounded(timeout), **kwargs)  # type: ignore[arg-type]

    @classmethod
    def _bounded(cls, timeout: float | Timeout | None) -> Timeout | None:
        if timeout is None or isinstance(timeout, Timeout):
            return timeout
        return Timeout(connect=min(cls.connect_timeout_s, float(timeout)), read=float(timeout))

    def perform_request(self, method: str, url: str, params: Any = None, body: Any = None,
                        timeout: Any = None, ignore: Any = (), headers: Any = None) -> Any:
        transient = is_bulk_rejected if url.endswith("/_bulk") else (lambda exc: False)
        retrying = Retrying(retry=retry_if_exception(lambda exc: is_shard_not_ready(exc) or transient(exc)),
                            stop=stop_after_attempt(SHARD_RETRIES), wait=wait_exponential(multiplier=0.25, max=2),
                            reraise=True)
        return retrying(super().perform_request, method, url, params, body, self._bounded(timeout), ignore, headers)


class FastJSONSerializer(JSONSerializer):
    """opensearch-py's JSON serializer with orjson doing the work: a search body (its query vector written
    twice) encodes in 0.05 ms instead of 0.75, a response decodes in about half the time. Types orjson does
    not know go through opensearch-py's own ``default`` (numpy, pandas, Decimal …)."""

    OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY

    def dumps(self, data: Any) -> Any:
        if isinstance(data, str):
            return data
        try:
            return orjson.dumps(data, default=self.default, option=self.OPTIONS).decode()
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise os_exc.SerializationError(data, exc) from exc

    def loads(self, s: Any) -> Any:
        try:
            return orjson.loads(s)
        except (TypeError, orjson.JSONDecodeError) as exc:
            raise os_exc.SerializationError(s, exc) from exc


def engine_hosts(url: str) -> list[str]:
    """``OPENSEARCH_URL`` may list several nodes, comma-separated: requests are spread over them."""
    return [u.strip() for u in url.split(",") if u.strip()]


class TranslatingTransport(Transport):
    """The one engine-error boundary: every request's failure leaves the client as a member of the product's
    tree (``translate``), so no caller ever sees opensearch-py's errors. Retries across nodes happen below it,
    on the library's own errors."""

    def perform_request(self, method: str, url: str, params: Mapping[str, Any] | None = None, body: Any = None,
                        timeout: float | None = None, ignore: Collection[int] = (),
                        headers: Mapping[str, str] | None = None) -> Any:
        try:
            return super().perform_request(method, url, params=params, body=body, timeout=timeout, ignore=ignore,
                                           headers=headers)
        except os_exc.OpenSearchException as exc:
            raise translate(exc) from exc


def build_client(settings: Settings) -> OpenSearch:
    """A client for the configured engine; no request is made here. The client's own request logging
    is silenced: failures are translated below and logged once by the caller, never as tracebacks.

    With several nodes, a request that cannot reach one (refused, reset, 502/503/504) is retried on
    another and the dead node is left out for a while; with one node there is nothing to retry on, so an
    engine that is down answers at once."""
    logging.getLogger("opensearch").setLevel(logging.CRITICAL)
    # this client's own connection class: a connect timeout set on the shared class would change every
    # client built before it
    connection = type("BoundedConnection", (BoundedConnection,),
                      {"connect_timeout_s": settings.opensearch.connect_timeout_s})
    hosts = engine_hosts(settings.opensearch_url)
    engine = settings.opensearch
    tls: dict[str, Any] = {"verify_certs": engine.verify_certs, "ssl_show_warn": not engine.verify_certs}
    if engine.ca_certs is not None:
        tls["ca_certs"] = str(engine.ca_certs)
    if (credentials := engine.credentials()) is not None:  # basic auth in UTF-8 (a Cyrillic password too)
        token = base64.b64encode(":".join(credentials).encode()).decode()
        tls["headers"] = {"authorization": f"Basic {token}"}
    return OpenSearch(
        hosts=hosts,
        timeout=settings.opensearch.timeout_s,
        **tls,
        max_retries=len(hosts) - 1,
        retry_on_timeout=False,
        dead_timeout=settings.opensearch.dead_timeout_s,
        randomize_hosts=True,
        pool_maxsize=settings.opensearch.pool_size,
        connection_class=connection,
        serializer=FastJSONSerializer(),
        transport_class=TranslatingTransport,
    )


#: the engine's dynamic pruning of cardinality aggregations (0 turns it off): service.index_admin.guards
PRUNING_SETTING = "search.dynamic_pruning.cardinality_aggregation.max_allowed_cardinality"
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
    (lambda e: isinstance(e, os_exc.NotFoundError),
     lambda e: IndexUnavailable("the index or a resource it needs is not found; create it with `stroidok index "
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
     lambda e: SearchError("the search engine refused the product's credentials; check STROIDOK_OPENSEARCH_USERNAME "
                           "and STROIDOK_OPENSEARCH_PASSWORD(_FILE)", details={"status": 401})),
    (_refused, lambda e: SearchError("the search engine rejected the request (its reason is in the server's log)",
                                     details={"status": _status(e), "type": _root_type(e) or None})),
)


def translate(exc: Exception) -> StroidokError:
    """Map an opensearch-py exception to a member of the product's tree (``TRANSLATIONS``). A missing resource
    (404) or a lost race (409) is an answer callers expect and test for (``is_missing``, ``is_conflict``): it is
    logged only at debug level."""
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


#: how much longer than its engine-side ``timeout`` the client waits for a search's answer
GRACE_S = 5.0
#: the tasks API's name of a search and of its shard-level parts
SEARCH_ACTIONS = "indices:data/read/search*"


def bounded_search(client: OpenSearch, index: str, body: dict[str, Any], params: dict[str, str],
                   timeout_s: float) -> dict[str, Any]:
    """One search bounded inside the engine and at the client: the body carries an engine-side ``timeout``
    (partial results are refused, so running out of it fails the request), the request an ``X-Opaque-Id``;
    a client that stops waiting (``timeout_s`` + grace) cancels the engine's task by that id, so no search
    keeps a core busy after its caller has been told ``ENGINE_TIMEOUT``."""
    opaque = f"stroidok-search-{uuid.uuid4().hex}"
    bounded = {**body, "timeout": f"{round(timeout_s * 1000)}ms"}
    try:
        raw: dict[str, Any] = client.search(index=index, body=bounded, params=params, opaque_id=opaque,
                                            request_timeout=timeout_s + GRACE_S)
    except EngineTimeout as exc:
        if isinstance(exc.__cause__, os_exc.ConnectionTimeout):  # the client stopped waiting: the engine goes on
            cancel_searches(client, opaque)
        raise engine_timeout(timeout_s) from exc
    if raw.get("timed_out"):
        raise engine_timeout(timeout_s)
    return raw


def cancel_searches(client: OpenSearch, opaque_id: str) -> int:
    """Cancel the engine's search tasks started by the request with ``opaque_id``; how many were asked to
    stop. Never raises: the caller is already failing with the timeout it reports."""
    try:
        ids = [task.task for task in search_tasks(client, detailed=False,
                                                  timeout_s=GRACE_S) if task.opaque_id == opaque_id]
        for task_id in ids:
            client.tasks.cancel(task_id=task_id, request_timeout=GRACE_S)
    except StroidokError as exc:
        logger.warning("could not cancel the timed-out search {}: {}", opaque_id, exc.message)
        return 0
    if ids:
        logger.warning("search {} cancelled in the engine after its client stopped waiting", opaque_id)
    return len(ids)


@dataclass(frozen=True)
class RunningSearch:
    """A search task the engine is running: how long, for whom, what."""

    task: str
    node: str
    running_s: float
    opaque_id: str | None
    cancellable: bool
    description: str


def search_tasks(client: OpenSearch, detailed: bool = True, timeout_s: float | None = None) -> list[RunningSearch]:
    """The searches the engine is running (parent tasks: what clients asked; ``detailed``: with the request),
    listed within ``timeout_s`` (the client's own timeout when None)."""
    listed = client.tasks.list(actions=SEARCH_ACTIONS, detailed=detailed,
                               **({"request_timeout": timeout_s} if timeout_s is not None else {}))
    return [RunningSearch(task=task_id, node=task.get("node", ""), running_s=task["running_time_in_nanos"] / 1e9,
                          opaque_id=task.get("headers", {}).get("X-Opaque-Id"),
                          cancellable=bool(task.get("cancellable")), description=str(task.get("description", ""))[:300])
            for node in listed.get("nodes", {}).values() for task_id, task in node.get("tasks", {}).items()
            if not task.get("parent_task_id")]


def long_searches(client: OpenSearch, longer_than_s: float) -> list[RunningSearch]:
    """The searches running longer than ``longer_than_s``, longest first."""
    found = [task for task in search_tasks(client) if task.running_s > longer_than_s]
    return sorted(found, key=lambda s: -s.running_s)


def is_missing(error: StroidokError) -> bool:
    """The engine has no such index, template, pipeline or document (404)."""
    return isinstance(error, IndexUnavailable) and error.details.get("status") == 404


def unless_missing(call: Callable[[], T], default: D) -> T | D:
    """``call()``, or ``default`` where the engine answers that what it asks for is not there (404)."""
    try:
        return call()
    except IndexUnavailable as exc:
        if is_missing(exc):
            return default
        raise


def is_conflict(error: StroidokError) -> bool:
    """A write refused for a version conflict: another writer was first (409)."""
    return isinstance(error, SearchError) and error.details.get("status") == 409


def already_exists(error: StroidokError) -> bool:
    """An index created by another process first."""
    return isinstance(error, SearchError) and error.details.get("type") == "resource_already_exists_exception"


def is_forbidden(error: StroidokError) -> bool:
    """The engine's security refused this caller the action (401, 403), a disk block aside."""
    return not isinstance(error, DiskFull) and error.details.get("status") in (401, 403)


def scan(client: OpenSearch, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """opensearch-py's ``helpers.scan``, whose own failure (a scroll some shards failed) is the product's error
    too: its requests already are, through the client."""
    try:
        yield from helpers.scan(client, **kwargs)
    except os_exc.OpenSearchException as exc:
        raise translate(exc) from exc


@dataclass(frozen=True)
class ItemOutcome:
    """One bulk item's outcome: its action, document id, the engine's status and, when refused, its reason."""

    ok: bool
    action: str
    id: str | None
    status: int | None
    reason: str | None

    @property
    def missing(self) -> bool:
        """The item's document is not there (a delete of what is gone, an update of what was deleted)."""
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409


def bulk_outcomes(client: OpenSearch, actions: Iterable[dict[str, Any]], **options: Any) -> Iterator[ItemOutcome]:
    """Every item's outcome of opensearch-py's streaming bulk, refused items reported, not raised; ``options``
    are its own (chunk_size, max_retries, request_timeout, refresh …). A failure of a bulk request itself is
    the product's error, as every request's is."""
    try:
        for ok, item in helpers.streaming_bulk(client, actions, raise_on_error=False, **options):
            action, result = next(iter(item.items()))
            status = result.get("status")
            yield ItemOutcome(bool(ok), action, result.get("_id"), status if isinstance(status, int) else None,
                              None if ok else str(result.get("error", result))[:300])
    except os_exc.OpenSearchException as exc:
        raise translate(exc) from exc
