"""Each file's parse deadline, kept by the ingest process from its worker's beats (``ingest.heartbeat``).

A file's clock starts when a worker takes it, not when it is queued. Its deadline is the per-file cap plus the
per-page allowance for each page the worker counted (a scan is read by OCR page by page); and a file that gives
no sign of progress for a whole per-file cap is stuck on one page. Either way the run gives up on that file,
records it as failed, and goes on. Pure: the clock is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.heartbeat import Beat
from service.settings import IngestSettings


@dataclass
class FileClock:
    started: float
    last: float
    pages: int = 0
    page: int = 0


@dataclass
class Deadlines:
    file_timeout_s: float
    page_timeout_s: float
    clocks: dict[str, FileClock] = field(default_factory=dict)

    @classmethod
    def of(cls, ingest: IngestSettings) -> Deadlines:
        return cls(ingest.file_timeout_s, ingest.page_timeout_s)

    def beat(self, beat: Beat, now: float) -> None:
        clock = self.clocks.get(beat.path)
        if beat.step == "started" or clock is None:
            clock = self.clocks[beat.path] = FileClock(now, now)
        clock.last = now
        if beat.step in ("pages", "page"):
            clock.pages = max(clock.pages, beat.total)
        if beat.step == "page":
            clock.page = beat.done

    def limit_s(self, path: str) -> float:
        """The parse time ``path`` is given: the per-file cap plus the page allowance for each counted page."""
        clock = self.clocks.get(path)
        return self.file_timeout_s + self.page_timeout_s * (clock.pages if clock else 0)

    def overdue(self, path: str, now: float) -> str | None:
        """Why the run gives up on ``path`` now, or None while it is within its bounds (or not started)."""
        clock = self.clocks.get(path)
        if clock is None:
            return None
        if now - clock.started > self.limit_s(path):
            return timeout_reason(self.limit_s(path))
        if clock.pages and now - clock.last > self.file_timeout_s:
            return (f"no progress for {now - clock.last:.0f}s at page {clock.page + 1} of {clock.pages} "
                    "(STROIDOK_INGEST_FILE_TIMEOUT_S)")
        return None

    def forget(self, path: str) -> None:
        self.clocks.pop(path, None)


def timeout_reason(limit_s: float) -> str:
    return (f"parsing took longer than {limit_s:.0f}s (STROIDOK_INGEST_FILE_TIMEOUT_S, "
            "plus STROIDOK_INGEST_PAGE_TIMEOUT_S a PDF page)")
