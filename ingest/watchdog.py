"""A watchdog that turns "no progress for N seconds" into a reported, coded failure.

Every per-step bound (parse time cap, engine timeouts) should fire first; the watchdog is the net
under them for what no bound covers (a deadlocked library, a pool that stopped scheduling). On a
stall it reports the stage and the file, runs the cleanup it was given and ends the process with
``EXIT_STALLED``: the parse workers die with it (see ``ingest.worker``), and the next run repairs
whatever was half-written (see ``ingest.index``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

from loguru import logger

from service.errors import EXIT_STALLED

STALLED_CODE = "INGEST_STALLED"


def stall_message(stage: str, subject: str, seconds: float) -> str:
    return (f"{STALLED_CODE}: no progress for {seconds:.0f}s while {stage}"
            + (f" ({subject})" if subject else "") + "; the run was stopped, run the same command again "
            "(STROIDOK_INGEST_STALL_TIMEOUT_S sets the limit)")


def exit_stalled(message: str) -> None:
    logger.error(message)
    print(message, file=sys.stderr, flush=True)
    os._exit(EXIT_STALLED)


class Watchdog:
    """Call ``progress(stage, subject)`` whenever work advances; ``on_stall(message)`` runs in the
    watchdog's thread when nothing advanced for ``stall_s`` seconds (default: end the process)."""

    def __init__(self, stall_s: float, on_stall: Callable[[str], None] = exit_stalled) -> None:
        self.stall_s, self.on_stall = stall_s, on_stall
        self.stage, self.subject = "starting", ""
        self.last = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="ingest-watchdog", daemon=True)

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def progress(self, stage: str | None = None, subject: str | None = None) -> None:
        if stage is not None:
            self.stage = stage
        if subject is not None:
            self.subject = subject
        self.last = time.monotonic()

    def _watch(self) -> None:
        while not self._stop.wait(min(1.0, self.stall_s / 4)):
            idle = time.monotonic() - self.last
            if idle > self.stall_s:
                self.on_stall(stall_message(self.stage, self.subject, idle))
                return
