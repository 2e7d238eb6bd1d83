"""A whole document's citations checked — нормоконтроль of an explanatory note, a specification, a section of
project documentation: every citation of every page with its page and line, each distinct one checked once, in
batches of ``MAX_CITATIONS`` (two engine requests a batch), and a summary by verdict. Finding and batching are
pure; ``SearchService.check_pages`` runs the batches."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from service.search.answer.models import CitationCheck
from service.search.answer.passages import parse_spans
from service.search.citations.clauses import overlap_end
from service.search.citations.grammar import MAX_CITATIONS, Citation, find_citations
from service.search.dsl.lookups import build_document_query

#: citations one document is checked for (a 300-page note cites a few hundred)
MAX_DOCUMENT_CITATIONS = 5000

Pages = Sequence[tuple[int, str]]


@dataclass(frozen=True)
class Placed:
    """A citation and where it stands: its page, its line on the page."""

    page: int
    line: int
    citation: Citation


def placed_citations(pages: Pages, limit: int = MAX_DOCUMENT_CITATIONS) -> list[Placed]:
    """Every citation of ``pages`` in order, each with its page and line (at most ``limit``)."""
    out: list[Placed] = []
    for page, text in pages:
        at = 0
        for citation in find_citations(text, limit - len(out)):
            offset = text.find(citation.cited, at)
            if offset < 0:
                offset = at
            at = offset
            out.append(Placed(page, text.count("\n", 0, offset) + 1, citation))
        if len(out) >= limit:
            break
    return out


def key_of(citation: Citation) -> tuple[object, ...]:
    """What makes two citations the same check: the document, the clause, the value as stated."""
    return citation.designation, citation.clause, citation.clause_end, citation.value, citation.quoted


def distinct_batches(placed: Sequence[Placed], size: int = MAX_CITATIONS) -> Iterator[list[Citation]]:
    """The distinct citations in the order first met, ``size`` at a time."""
    seen: dict[tuple[object, ...], Citation] = {}
    for item in placed:
        seen.setdefault(key_of(item.citation), item.citation)
    distinct = list(seen.values())
    for start in range(0, len(distinct), size):
        yield distinct[start:start + size]


def placed_checks(placed: Sequence[Placed], checks: dict[tuple[object, ...], CitationCheck]) -> list[CitationCheck]:
    """Each placed citation with its check, cited as the document writes it there, with its page and line."""
    return [checks[key_of(p.citation)].model_copy(update={"cited": p.citation.cited, "page": p.page, "line": p.line})
            for p in placed]


def summary_of(checks: Sequence[CitationCheck]) -> dict[str, int]:
    """Citations per verdict, and how many are found with a value that is not the clause's."""
    counts = Counter(c.verdict for c in checks)
    mismatched = sum(1 for c in checks if c.verdict == "found" and c.value_matches is False)
    return {**dict(counts.most_common()), **({"value_mismatch": mismatched} if mismatched else {})}


#: chunks of an indexed document read for its citations, in one request (a 300-page document holds ~1,000)
MAX_DOCUMENT_CHUNKS = 3000


def build_document_text(doc_id: str, groups: list[str]) -> dict[str, Any]:
    """Every chunk of a document the caller may read, in order: its text, spans and page (access filter in)."""
    return {"query": build_document_query(doc_id, groups), "size": MAX_DOCUMENT_CHUNKS,
            "_source": ["chunk_index", "text", "spans", "page_number", "file_name"], "sort": [{"chunk_index": "asc"}],
            "track_total_hits": True}


def document_pages(sources: Sequence[dict[str, Any]]) -> list[tuple[int, str]]:
    """An indexed document's text page by page from its chunks in order, each overlap read once: every piece of
    a chunk on the page its span says (the chunk's page where it has none)."""
    pages: dict[int, list[str]] = {}
    previous = ""
    for source in sources:
        text = str(source.get("text") or "")
        begin = overlap_end(previous, text)
        previous = text
        spans = [(s.offset, int(s.page)) for s in parse_spans(source.get("spans")) if s.page is not None]
        first = next((p for o, p in reversed(spans) if o <= begin), int(source.get("page_number") or 1))
        cuts = [(begin, first), *((o, p) for o, p in spans if begin < o < len(text))]
        for (start, on), (end, _) in zip(cuts, [*cuts[1:], (len(text), 0)], strict=True):
            if end > start and (piece := text[start:end].strip()):
                pages.setdefault(on, []).append(piece)
    return [(page, "\n".join(pieces)) for page, pieces in sorted(pages.items())]
