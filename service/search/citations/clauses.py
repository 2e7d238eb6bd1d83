"""A cited clause read from its document's chunks: the request that reads every cited clause at once (its first
chunks and the labels near it), its text from where it starts to where another clause starts, the labels nearest
one a document lacks. Pure but for the request's shape; ``service.search.citations.check`` decides with them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.search.answer.models import CitedClause
from service.search.answer.passages import parse_spans
from service.search.answer.text import passage_text
from service.search.dsl.filters import NOT_CONTENT, build_access_filter

#: chunks of a clause read to show its text and check a value (the clause's first chunk and the next)
CLAUSE_CHUNKS = 2
#: the longest clause text a value is checked against
VALUE_CHARS = 4000
#: the end of a chunk looked for in the next one, where the chunks' overlap ends
OVERLAP_PROBE = 40
#: labels listed as nearest to a clause a document lacks
NEAREST = 5
_CHUNK_FIELDS = ["chunk_id", "chunk_index", "text", "spans", "page_number", "clause"]


def lucene_literal(text: str) -> str:
    """``text`` as a literal in a Lucene regular expression: every character but a letter, digit or space escaped
    (a clause typed to get_document may hold «<», «@», «"», which are operators there)."""
    return "".join(c if c.isalnum() or c == " " else f"\\{c}" for c in text)


def label_pattern(clause: str) -> str:
    """A Lucene regular expression for the labels near ``clause``: its siblings and its parent («5.2.9» →
    ``5\\.2(\\..*)?``), the other tables or appendices («Таблица 9» → ``Таблица .*``)."""
    word, _, number = clause.rpartition(" ")
    prefix = lucene_literal(f"{word} ") if word else ""
    parent = number.rpartition(".")[0]
    if parent:
        return prefix + lucene_literal(parent) + r"(\..*)?"
    return prefix + (".*" if word else "[0-9]+")


def top_pattern(clause: str) -> str:
    """The labels of a document's first level of the kind cited: sections («[0-9]+»), tables, appendices."""
    word = clause.rpartition(" ")[0]
    return lucene_literal(word) + " .*" if word else "[0-9]+"


def build_clauses_request(targets: Sequence[tuple[str, str, str]], groups: list[str]) -> dict[str, Any]:
    """Request 2: for each target (key, document id, clause), the first chunks of that clause in that document
    and the labels near it; one aggregation a target, the access filter over them all."""
    aggs: dict[str, Any] = {}
    for key, doc_id, clause in targets:
        chunks = {"top_hits": {"size": CLAUSE_CHUNKS, "sort": [{"chunk_index": "asc"}],
                               "_source": _CHUNK_FIELDS}}
        aggs[key] = {"filter": {"term": {"doc_id": doc_id}}, "aggs": {
            "clause": {"filter": {"bool": {"filter": [{"term": {"clauses": clause}}], "must_not": [NOT_CONTENT]}},
                       "aggs": {"chunks": chunks}},
            "near": {"terms": {"field": "clauses", "include": label_pattern(clause), "size": 50}},
            "top": {"terms": {"field": "clauses", "include": top_pattern(clause), "size": 50}}}}
    query = {"bool": {"filter": [build_access_filter(groups),
                                 {"terms": {"doc_id": sorted({doc_id for _, doc_id, _ in targets})}}]}}
    return {"query": query, "size": 0, "track_total_hits": False, "aggs": aggs}


def _label_key(label: str) -> tuple[Any, ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.\s]", label) if p)


def nearest_labels(clause: str, labels: Sequence[str]) -> list[str]:
    """The labels closest to ``clause`` (by the number where they part), in document order."""
    wanted = _label_key(clause)

    def distance(label: str) -> tuple[int, int]:
        key = _label_key(label)
        shared = next((i for i, (a, b) in enumerate(zip(key, wanted, strict=False)) if a != b), min(len(key),
                                                                                                     len(wanted)))
        gap = (abs(key[shared][1] - wanted[shared][1]) if shared < min(len(key), len(wanted))
               and key[shared][0] == wanted[shared][0] == 0 else 99)
        return -shared, gap

    chosen = sorted((label for label in labels if label != clause), key=distance)[:NEAREST]
    return sorted(chosen, key=_label_key)


def _within(label: str | None, clause: str) -> bool:
    return label is not None and (label == clause or label.startswith(f"{clause}."))


def clause_text(hits: Sequence[dict[str, Any]], clause: str, limit: int) -> tuple[str, int | None]:
    """A clause's text, from where it starts in its first chunk to where another clause starts (its own
    sub-clauses kept), over into the next chunk when it runs on (the chunks' overlap read once), at most
    ``limit`` characters; and the page it starts on."""
    if not hits:
        return "", None
    first = hits[0]["_source"]
    spans = parse_spans(first.get("spans"))
    text = str(first.get("text") or "")
    at = next((s for s in spans if s.clause == clause), None)
    start = at.offset if at else 0
    page = at.page if at and at.page is not None else first.get("page_number")
    end = next((s.offset for s in spans if s.offset > start and not _within(s.clause, clause)), None)
    body = text[start:end if end is not None else len(text)]
    if end is None and len(hits) > 1 and len(body) < limit:
        body += continuation(text, hits[1]["_source"], clause)
    return body[:limit], page


def overlap_end(previous: str, text: str) -> int:
    """Where a chunk's ``text`` stops repeating the end of the chunk before it (the chunks' overlap)."""
    tail = previous[-OVERLAP_PROBE:].strip()
    at = text.find(tail) if tail else -1
    return at + len(tail) if at >= 0 else 0


def continuation(previous: str, source: dict[str, Any], clause: str) -> str:
    """What the next chunk adds to a clause: its text after the part it repeats of the previous chunk, to where
    another clause starts."""
    text = str(source.get("text") or "")
    begin = overlap_end(previous, text)
    end = next((s.offset for s in parse_spans(source.get("spans")) if s.offset > begin
                and not _within(s.clause, clause)), len(text))
    return text[begin:end] if end > begin else ""


def bounded(text: str, limit: int) -> str:
    """``text`` as a passage shows it, cut at a sentence or word boundary within ``limit`` characters."""
    shown = passage_text(text)
    if len(shown) <= limit:
        return shown
    cut = shown[:limit]
    stop = max(cut.rfind(". "), cut.rfind(".\n"))
    cut = cut[:stop + 1] if stop > limit // 2 else cut[:cut.rfind(" ")] if " " in cut else cut
    return cut.rstrip() + " …"


@dataclass(frozen=True)
class Opened:
    """A clause read from a document: the text shown, the longer text a value is checked against, its chunk."""

    shown: CitedClause
    full: str


def opened(bucket: dict[str, Any] | None, clause: str, passage_chars: int) -> Opened | None:
    hits = (bucket or {}).get("clause", {}).get("chunks", {}).get("hits", {}).get("hits", [])
    if not hits:
        return None
    full, page = clause_text(hits, clause, VALUE_CHARS)
    source = hits[0]["_source"]
    return Opened(CitedClause(clause=clause, text=bounded(full, passage_chars), page_number=page,
                              chunk_id=source["chunk_id"]), full)


def labels_of(bucket: dict[str, Any] | None) -> list[str]:
    """The labels near a clause, or, when its parent has none, the document's first-level ones."""
    near = [b["key"] for b in (bucket or {}).get("near", {}).get("buckets", [])]
    return near or [b["key"] for b in (bucket or {}).get("top", {}).get("buckets", [])]
