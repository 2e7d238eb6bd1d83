"""Creating an index: once (a parallel run may create it first), through the disk guard's create-index block
(waited out, bounded), and ready for writes — its primaries started — before anyone reads or writes it.

A new index's shards start a moment after the engine acknowledges it; a read or write in between is answered
503 (on a busy machine, seconds). And after a full disk the engine keeps refusing to create indexes until its
next disk check (up to about a minute after space is back), with a bare 403.
"""

from __future__ import annotations

from typing import Any

from loguru import logger
from opensearchpy import OpenSearch
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_fixed

from service.errors import AlreadyExists, DiskFull, IndexSetupError, WaitExpired

#: how often a blocked creation is tried again
BLOCK_POLL_S = 2.0


def create_index(client: OpenSearch, name: str, body: dict[str, Any], block_wait_s: float,
                 ready_timeout_s: float = 120.0) -> bool:
    """Create ``name`` unless it exists; True when this call created it. A create-index block is tried again
    every ``BLOCK_POLL_S`` for ``block_wait_s`` seconds, then raised (DISK_FULL).
    Either way the index's primaries are active when this returns."""
    retrying = Retrying(retry=retry_if_exception(create_blocked), stop=stop_after_delay(block_wait_s),
                        wait=wait_fixed(BLOCK_POLL_S), reraise=True, before_sleep=_waiting(name, block_wait_s))
    created = retrying(_create_once, client, name, body)
    wait_active(client, name, ready_timeout_s)
    return created


def _create_once(client: OpenSearch, name: str, body: dict[str, Any]) -> bool:
    try:
        client.indices.create(index=name, body=body)
    except AlreadyExists:
        return False
    return True


def _waiting(name: str, block_wait_s: float) -> Any:
    said: list[bool] = []

    def log(_: Any) -> None:
        if not said:
            logger.warning("the engine blocks creating {} (its disk guard, after a full disk); waiting up to {:.0f} s "
                           "for it to lift the block", name, block_wait_s)
            said.append(True)

    return log


def create_blocked(error: BaseException) -> bool:
    """The engine refusing to create an index while every node's disk is full (its disk guard lifts it)."""
    return isinstance(error, DiskFull) and error.details.get("block") == "create_index"


def wait_active(client: OpenSearch, name: str, timeout_s: float) -> None:
    """Block until the primaries of ``name`` have started (replicas may follow later)."""
    try:
        health = client.cluster.health(index=name, params={"wait_for_status": "yellow", "timeout": f"{timeout_s:.0f}s",
                                                           "request_timeout": timeout_s + 30})
    except WaitExpired:  # the engine answers 408 when the wait timed out
        health = {"timed_out": True}
    if health.get("timed_out"):
        raise IndexSetupError(f"index {name} was created but its shards did not start within {timeout_s:.0f} s; "
                              "`stroidok engine status` shows the node", details={"index": name})
