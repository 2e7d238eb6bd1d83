"""Stopping a long run cleanly: SIGTERM, SIGHUP (and SIGINT) set a flag the run checks between documents.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from service.errors import Interrupted


class StopFlag:
    """Set by a stop signal; the run stops at its next check. Raising from the signal handler instead would
    land inside whatever runs, e.g. an engine request, which the client takes for a connection error."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def set(self, signum: int, _: FrameType | None) -> None:
        self.signum = signum

    def check(self) -> None:
        if self.signum is not None:
            raise Interrupted(f"interrupted by {signal.Signals(self.signum).name}", details={"signal": self.signum})


@contextmanager
def stop_on_signals(signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)) -> Iterator[StopFlag]:
    """SIGTERM and SIGHUP (and SIGINT unless left out) stop the run like Ctrl-C: cleanly, with a message."""
    flag = StopFlag()
    previous = {s: signal.signal(s, flag.set) for s in signals}
    try:
        yield flag
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
