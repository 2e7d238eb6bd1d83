"""Free loopback ports and waiting for a condition."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from opensearchpy.exceptions import ConnectionError as EngineConnectionError
from opensearchpy.exceptions import TransportError

from service.errors import EngineBusy, IndexUnavailable, SearchError

#: what an engine answers for a moment (a shard that is starting, a node that is busy): a poll tries again
TRANSIENT_STATUS = frozenset({429, 502, 503, 504})


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def holds(predicate: Callable[[], object]) -> bool:
    """``predicate()``, false while the engine answers transiently (503 while a new index's shard starts)."""
    try:
        return bool(predicate())
    except (EngineConnectionError, IndexUnavailable, EngineBusy):  # a raw client's, or the product's
        return False
    except TransportError as exc:
        if exc.status_code in TRANSIENT_STATUS:
            return False
        raise
    except SearchError as exc:
        if exc.details.get("status") in TRANSIENT_STATUS:
            return False
        raise


def wait_until(predicate: Callable[[], object], timeout: float, step: float = 0.05) -> bool:
    """Whether ``predicate()`` became true within ``timeout`` seconds (polled every ``step``); the engine's
    transient answers count as not yet."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if holds(predicate):
            return True
        time.sleep(step)
    return holds(predicate)


def port_open(port: int) -> bool:
    """Whether something accepts connections on the loopback ``port``."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
