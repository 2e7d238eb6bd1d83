"""Citation checks scored: ``check_citations`` and ``get_document(designation, clause)`` through the service
with its defaults, on an index the ingest built, against a citation set (``evaluation/sets/citations``).

Per kind: the verdict right; for a real clause the page right and ``get_document`` opening a chunk that holds
it; for a stated value ``value_matches`` right; and how many invented citations were called ``found``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from service.caller.principal import Principal
from service.errors import StroidokError
from service.search.citations.grammar import find_citations
from service.search.service import SearchService

REAL = ("clause", "table", "appendix", "value", "wrong_value", "judged", "bare_clause", "bare_value", "flipped_bound",
        "quote", "flipped_quote")
INVENTED = ("wrong_clause", "other_clause", "wrong_edition", "missing", "replaced", "bare_wrong_clause",
            "replaced_spaced")


@dataclass
class KindScore:
    kind: str
    total: int = 0
    verdict: int = 0
    page: int = 0
    opened: int = 0
    valued: int = 0
    value_right: int = 0
    invented_found: int = 0
    misses: list[str] = field(default_factory=list)


def load_citations(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def holds(text: str, clause: str) -> bool:
    """The chunk's text holds the clause's start: its label as a word, a capital letter (or a table's number)
    after it."""
    return re.search(rf"(?:^|\s){re.escape(clause)}\.?\s*[-—–]?\s*[А-ЯЁA-Z«(\d]", text, re.IGNORECASE) is not None


def score_row(row: dict[str, Any], service: SearchService, principal: Principal, score: KindScore) -> None:
    """One citation: checked alone as a text, and a real one opened by designation and clause."""
    score.total += 1
    checks = service.check_citations({"text": row["text"]}, principal, "eval").citations
    check = checks[0] if len(checks) == 1 else None
    verdict = check.verdict if check else f"{len(checks)} citations read"
    if verdict == row["verdict"]:
        score.verdict += 1
    else:
        score.misses.append(f"{row['_id']} «{row['text']}»: {verdict}")
    if row["kind"] in INVENTED and verdict == "found":
        score.invented_found += 1
    if check and check.found and row.get("page") and check.found.page_number == row["page"]:
        score.page += 1
    if "value_matches" in row:
        score.valued += 1
        right = bool(check and check.value_matches == row["value_matches"])
        score.value_right += right
        if not right:
            score.misses.append(f"{row['_id']} «{row['text']}»: value_matches {check and check.value_matches}")
    if row["kind"] in REAL:
        score.opened += opens(row, service, principal)


def opens(row: dict[str, Any], service: SearchService, principal: Principal) -> bool:
    """``get_document(designation, clause)`` opens a chunk holding the clause, on its page."""
    cited = find_citations(row["text"])
    if not cited:
        return False
    try:
        response = service.get_document(None, principal, "eval", cited[0].clause or row["clause"],
                                        designation=cited[0].designation)
    except StroidokError:
        return False
    chunk = response.chunk
    if chunk is None:
        return False
    pages = range(chunk.page_number or 0, (chunk.page_end or chunk.page_number or 0) + 1)
    return holds(chunk.text, row["clause"]) and row["page"] in pages


def evaluate_citations(rows: list[dict[str, Any]], service: SearchService, principal: Principal,
                       progress: Callable[[], None] | None = None) -> list[KindScore]:
    scores: dict[str, KindScore] = {}
    for row in rows:
        score_row(row, service, principal, scores.setdefault(row["kind"], KindScore(row["kind"])))
        if progress:
            progress()
    return list(scores.values())


def format_scores(scores: list[KindScore]) -> str:
    """A table a kind a line, and the totals the issue's bars are read from."""
    lines = ["| kind | citations | verdict right | page right | get_document opens it | value_matches right |",
             "|---|---|---|---|---|---|"]
    for s in scores:
        real = s.kind in REAL
        lines.append(f"| {s.kind} | {s.total} | {s.verdict / s.total:.3f} | "
                     f"{f'{s.page / s.total:.3f}' if real else '—'} | {f'{s.opened / s.total:.3f}' if real else '—'} "
                     f"| {f'{s.value_right / s.valued:.3f}' if s.valued else '—'} |")
    total = sum(s.total for s in scores)
    real_total = sum(s.total for s in scores if s.kind in REAL)
    valued = sum(s.valued for s in scores)
    lines.append(f"| all | {total} | {sum(s.verdict for s in scores) / total:.3f} | "
                 f"{sum(s.page for s in scores if s.kind in REAL) / max(real_total, 1):.3f} | "
                 f"{sum(s.opened for s in scores) / max(real_total, 1):.3f} | "
                 f"{sum(s.value_right for s in scores) / max(valued, 1):.3f} |")
    lines.append(f"\ninvented citations called found: {sum(s.invented_found for s in scores)}")
    misses = [m for s in scores for m in s.misses]
    lines += ["", f"misses ({len(misses)}):", *misses[:40]] if misses else []
    return "\n".join(lines)


def scores_json(scores: list[KindScore]) -> list[dict[str, Any]]:
    return [asdict(s) for s in scores]
