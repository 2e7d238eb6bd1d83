"""Searches bounded in time, and the engine's running searches: listed, and cancelled by their opaque id."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from loguru import logger
from opensearchpy import OpenSearch
from opensearchpy import exceptions as os_exc

from service.engine.gateway.errors import engine_timeout
from service.errors import EngineTimeout, StroidokError

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
    #: the engine accepted a cancel: it stops at its next check (between hits, segments or intervals of documents)
    cancelled: bool = False


def search_tasks(client: OpenSearch, detailed: bool = True, timeout_s: float | None = None) -> list[RunningSearch]:
    """The searches the engine is running (parent tasks: what clients asked; ``detailed``: with the request),
    listed within ``timeout_s`` (the client's own timeout when None)."""
    listed = client.tasks.list(actions=SEARCH_ACTIONS, detailed=detailed,
                               **({"request_timeout": timeout_s} if timeout_s is not None else {}))
    return [RunningSearch(task=task_id, node=task.get("node", ""), running_s=task["running_time_in_nanos"] / 1e9,
                          opaque_id=task.get("headers", {}).get("X-Opaque-Id"),
                          cancellable=bool(task.get("cancellable")), description=str(task.get("description", ""))[:300],
                          cancelled=bool(task.get("cancelled")))
            for node in listed.get("nodes", {}).values() for task_id, task in node.get("tasks", {}).items()
            if not task.get("parent_task_id")]


def long_searches(client: OpenSearch, longer_than_s: float) -> list[RunningSearch]:
    """The searches running longer than ``longer_than_s``, longest first."""
    found = [task for task in search_tasks(client) if task.running_s > longer_than_s]
    return sorted(found, key=lambda s: -s.running_s)
