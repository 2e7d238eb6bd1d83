"""Per-file outcomes of a run, their totals, and how they are shown (rich on a terminal, log lines otherwise)."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from loguru import logger
from rich.console import Console

from ingest.progress import ProgressBar

Status = Literal["indexed", "skipped", "failed", "deleted", "planned"]


@dataclass(frozen=True)
class FileOutcome:
    path: str
    status: Status
    chunks: int = 0
    pages: int = 0
    reason: str = ""
    #: pages (1-based) left out because nothing read them as language
    unread: list[int] = field(default_factory=list)

    def line(self) -> str:
        if self.status == "indexed" and self.unread:
            return (f"indexed ({self.chunks} chunks, {self.pages} pages; {len(self.unread)} unread: "
                    f"{compact_pages(self.unread)})  {self.path}")
        if self.status == "indexed":
            return f"indexed ({self.chunks} chunks, {self.pages} pages)  {self.path}"
        if self.status == "deleted":
            return f"deleted ({self.chunks} chunks)  {self.path}"
        if self.status == "planned":
            return f"would {self.reason}  {self.path}"
        return f"{self.status}: {self.reason}  {self.path}"


def compact_pages(pages: list[int]) -> str:
    """«3, 5-9, 12»: page numbers as ranges."""
    runs: list[list[int]] = []
    for page in sorted(pages):
        if runs and page == runs[-1][1] + 1:
            runs[-1][1] = page
        else:
            runs.append([page, page])
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in runs)


@dataclass
class RunReport:
    outcomes: list[FileOutcome] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=lambda: {"parse": 0.0, "embed": 0.0, "index": 0.0})
    wall_s: float = 0.0

    def add(self, outcome: FileOutcome) -> None:
        self.outcomes.append(outcome)

    @property
    def counts(self) -> Counter[str]:
        return Counter(o.status for o in self.outcomes)

    @property
    def failed(self) -> bool:
        return self.counts["failed"] > 0

    def totals(self) -> dict[str, int | float]:
        indexed = [o for o in self.outcomes if o.status == "indexed"]
        return {**{s: self.counts[s] for s in ("indexed", "skipped", "failed", "deleted", "planned")},
                "chunks": sum(o.chunks for o in indexed), "pages": sum(o.pages for o in indexed),
                "wall_s": round(self.wall_s, 2), **{f"{k}_s": round(v, 2) for k, v in self.timings.items()}}

    def to_dict(self) -> dict[str, Any]:
        return {"files": [asdict(o) for o in self.outcomes], "totals": self.totals()}


class Reporter:
    """Shows progress and each outcome as it happens; stdout gets the final report only."""

    def __init__(self, total: int, quiet: bool = False, log_every_s: float = 10.0) -> None:
        self.bar = ProgressBar("ingesting", "files", total, quiet, log_every_s)

    def __enter__(self) -> Reporter:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def status(self, text: str) -> None:
        self.bar.status(text)

    def outcome(self, outcome: FileOutcome) -> None:
        """Live: a line per file above the bar. Plain: failures at once, progress every 10 s."""
        if outcome.status == "failed" and not self.bar.live:
            logger.warning(outcome.line())
        self.bar.show(outcome.line())
        if outcome.status != "deleted":
            self.bar.advance()


def print_report(report: RunReport, as_json: bool) -> None:
    out = Console(file=sys.stdout, soft_wrap=True)
    if as_json:
        import json

        out.print_json(json.dumps(report.to_dict(), ensure_ascii=False))
        return
    for outcome in report.outcomes:
        out.print(outcome.line(), markup=False, highlight=False)
    t = report.totals()
    out.print(f"\n{t['indexed']} indexed ({t['chunks']} chunks, {t['pages']} pages), {t['skipped']} unchanged, "
              f"{t['deleted']} deleted, {t['failed']} failed"
              + (f", {t['planned']} planned (dry run)" if t["planned"] else "")
              + f" in {t['wall_s']:.1f}s (parse {t['parse_s']:.1f}s, embed {t['embed_s']:.1f}s, "
              f"index {t['index_s']:.1f}s)", markup=False, highlight=False)
