"""Progress from inside a parse worker: the file started, its page count, each page read or OCRed.

A parse worker sends beats on a queue the ingest process drains (``ingest.pool``): the run's watchdog sees a
long scan advance page by page, and the pool gives each file its deadline from the page count the worker read
inside its own limits. Outside a worker (tests, ``python -m ingest.parse``) a beat goes nowhere.
"""

from __future__ import annotations

import contextlib
import queue
from dataclasses import dataclass
from typing import Any

_sink: Any = None
_path = ""


@dataclass(frozen=True)
class Beat:
    """``step`` of file ``path``: ``started``, ``pages`` (``total`` known), ``page`` (``done`` of ``total``)."""

    path: str
    step: str
    done: int = 0
    total: int = 0

    def describe(self) -> str:
        if self.step == "page":
            return f"parsing, page {self.done} of {self.total}"
        if self.step == "pages":
            return f"parsing, {self.total} pages"
        return "parsing"


def install(sink: Any) -> None:
    """Send this process's beats to ``sink`` (a multiprocessing queue); done once in each worker."""
    global _sink
    _sink = sink


def start(path: str) -> None:
    """A new file: every later beat of this process belongs to it."""
    global _path
    _path = path
    _send(Beat(path, "started"))


def pages(total: int) -> None:
    _send(Beat(_path, "pages", 0, total))


def page(done: int, total: int) -> None:
    _send(Beat(_path, "page", done, total))


def _send(beat: Beat) -> None:
    if _sink is None:
        return
    with contextlib.suppress(queue.Full, OSError, ValueError):  # advisory: a full queue never fails a parse
        _sink.put_nowait(beat)


def drain(source: Any, limit: int = 10_000) -> list[Beat]:
    """The beats waiting on ``source`` (the ingest process's side), without blocking."""
    beats: list[Beat] = []
    while len(beats) < limit:
        try:
            beats.append(source.get_nowait())
        except (queue.Empty, OSError, EOFError, ValueError):
            break
    return beats
