"""One progress display for long work (files of an ingest, chunks of a backfill): a bar with counts, elapsed and
remaining time on a terminal; plain log lines at an interval otherwise. Always on stderr: stdout carries the
final report (and, for the MCP server, the protocol)."""

from __future__ import annotations

import time

from loguru import logger
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class ProgressBar:
    """``total`` items of ``unit`` under ``label``; ``log_every_s`` between log lines where no terminal shows
    the bar (a run under a scheduler, a pipe)."""

    def __init__(self, label: str, unit: str, total: int, quiet: bool = False, log_every_s: float = 10.0) -> None:
        self.console = Console(stderr=True)
        self.live = self.console.is_terminal and not quiet
        self.bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
                            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                            TextColumn("{task.fields[status]}"), console=self.console, disable=not self.live)
        self.task = self.bar.add_task(label, total=total, status="")
        self.label, self.unit, self.log_every_s = label, unit, log_every_s
        self.total, self.done, self.began, self.logged = total, 0, time.monotonic(), 0.0
        self.status_logged = 0.0

    def __enter__(self) -> ProgressBar:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def advance(self, count: int = 1) -> None:
        """``count`` more done; without a terminal, a log line with the rate and time left now and then."""
        self.done += count
        self.bar.advance(self.task, count)
        now = time.monotonic()
        if not self.live and (now - self.logged > self.log_every_s or self.done >= self.total):
            self.logged = now
            rate = self.done / max(now - self.began, 1e-9)
            left = (self.total - self.done) / rate if rate else float("inf")
            logger.info("{}: {}/{} {}, {:.1f} {}/s, ~{:.0f} min left", self.label, self.done, self.total, self.unit,
                        rate, self.unit, left / 60)

    def status(self, text: str) -> None:
        """What the work is doing inside the current item (a long scan's page): beside the bar, or a log line
        now and then."""
        self.bar.update(self.task, status=text)
        now = time.monotonic()
        if not self.live and now - self.status_logged > self.log_every_s:
            self.status_logged = now
            logger.info("{}: {}", self.label, text)

    def show(self, line: str) -> None:
        """A line above the bar (a file's outcome); nothing without a terminal (the log has its own lines)."""
        if self.live:
            self.bar.console.print(line, markup=False, highlight=False)
