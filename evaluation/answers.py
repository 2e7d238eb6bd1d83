"""Answer-level judging: does the text an agent was shown contain the judged answer?

A judged answer is a short quote copied from the document (the construction clause set) or an answer span
(TyDi, XQuAD). Both sides are folded the same way before a substring test: case, «ё», soft hyphens, dash
and quote variants, and whitespace (line breaks of the source are not the product's to keep).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_DASHES = str.maketrans({"—": "-", "–": "-", "‑": "-", "−": "-", "«": '"', "»": '"', "“": '"', "”": '"', "ё": "е",
                         "\u00a0": " "})
_SPACE_RE = re.compile(r"\s+")
_HYPHEN_BREAK_RE = re.compile(r"(?<=\w)[\u00ad]\s*|(?<=[а-яё])-\s+(?=[а-яё])")


def fold(text: str) -> str:
    """``text`` reduced to what a reader compares: lower case, one kind of dash, single spaces."""
    text = _HYPHEN_BREAK_RE.sub("", text.lower()).replace("\u00ad", "")
    return _SPACE_RE.sub(" ", text.translate(_DASHES)).strip()


def contains_answer(shown: str, answers: list[str]) -> bool:
    """Whether ``shown`` contains any of ``answers`` once both are folded."""
    folded = fold(shown)
    return any(fold(a) in folded for a in answers if a.strip())


@dataclass(frozen=True)
class Judged:
    """One question's judged answer: the quotes that answer it, and where (for the clause set)."""

    answers: tuple[str, ...]
    document: str | None = None
    clause: str | None = None
    page: int | None = None
    #: other (document, clause) pairs stating the same requirement, which count as right too
    also: tuple[tuple[str, str], ...] = ()


def load_answers(path: Path) -> dict[str, Judged]:
    """Judged answers by query id, from a clause set (JSONL with ``quote``) or a SQuAD-style JSON (TyDi,
    XQuAD: every question's answer texts)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        # ours ({"_id", "quote"}), the shared dev clause set's ({"id", "answer"}), or several quotes ("answers")
        return {str(r.get("_id", r.get("id"))): Judged(tuple(r.get("answers") or (r.get("quote") or r["answer"],)),
                                                       r.get("doc"), r.get("clause"), r.get("page"),
                                                       tuple((a["doc"], a["clause"]) for a in r.get("also", ())))
                for r in rows}
    data = json.loads(text)
    return {str(qa["id"]): Judged(tuple(dict.fromkeys(a["text"] for a in qa.get("answers", []))))
            for article in data["data"] for paragraph in article["paragraphs"] for qa in paragraph["qas"]}


def qrels_of(answers: dict[str, Judged]) -> dict[str, dict[str, int]]:
    """Document-level judgments of a clause set: each question's document is its one relevant result."""
    return {q: {a.document: 1} for q, a in answers.items() if a.document}


@dataclass(frozen=True)
class Shown:
    """One passage as the answer shows it: which result it belongs to, its text and label."""

    rank: int
    text: str
    clause: str | None
    clause_end: str | None
    page: int | None
    page_end: int | None
    #: the eval id of the document it belongs to (None: not known)
    document: str | None = None


def answers(shown: Shown, judged: Judged) -> bool:
    """Whether a passage answers, as the clause sets are scored: its text holds the judged quote, or it belongs to
    the judged document (or an ``also`` pair's) and its clause label is the judged clause. A label counts where a
    scan's errors in the quote («площ ади») keep the text from matching it."""
    if contains_answer(shown.text, list(judged.answers)):
        return True
    right = {(judged.document, judged.clause), *judged.also} if judged.document and judged.clause else set()
    return shown.document is not None and (shown.document, shown.clause) in right


def cites(shown: Shown, judged: Judged) -> bool:
    """Whether a passage's label names the judged clause and page (a passage may run over two of each)."""
    clause_ok = judged.clause is None or judged.clause in (shown.clause, shown.clause_end)
    first = shown.page or 0
    page_ok = judged.page is None or first <= judged.page <= (shown.page_end or first)
    return clause_ok and page_ok


@dataclass
class AnswerTally:
    """Answer-level figures over a run's questions (only questions with a judged answer count)."""

    questions: int = 0
    at1: int = 0
    at5: int = 0
    cited: int = 0
    read_before: list[int] | None = None
    sizes: list[int] | None = None
    #: questions a second call (inside the first document) answered, after the first did not
    second: int = 0

    def add(self, shown: list[Shown], judged: Judged, size: int) -> bool:
        """Count one call's answer; whether a passage of its first five documents answers (``answers``)."""
        self.questions += 1
        self.sizes = [*(self.sizes or []), size]
        hits = [s for s in shown if s.rank < 5 and answers(s, judged)]
        self.at1 += bool(shown) and shown[0].rank == 0 and answers(shown[0], judged)
        self.at5 += bool(hits)
        if hits:
            self.cited += cites(hits[0], judged)
            before = sum(len(s.text) for s in shown[: shown.index(hits[0])])
            self.read_before = [*(self.read_before or []), before]
        return bool(hits)

    def metrics(self) -> dict[str, float]:
        n = max(1, self.questions)
        sizes = sorted(self.sizes or [0])
        read = sorted(self.read_before or [0])
        return {"answer@1": round(self.at1 / n, 4), "answer@5": round(self.at5 / n, 4),
                "within_two_calls": round((self.at5 + self.second) / n, 4), "cited@5": round(self.cited / n, 4),
                "chars_before_answer_p50": float(read[len(read) // 2]),
                "answer_chars_p50": float(sizes[len(sizes) // 2]), "answer_chars_max": float(sizes[-1])}
