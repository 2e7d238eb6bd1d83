"""A whole document's citations checked — нормоконтроль of an explanatory note, a specification, a section of
project documentation: every citation of every page with its page and line, each distinct one checked once, in
batches of ``MAX_CITATIONS`` (two engine requests a batch), and a summary by verdict. Finding and batching are
pure; ``SearchService.check_pages`` runs the batches."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from service.search.citations import MAX_CITATIONS, Citation, find_citations
from service.search.query.models import CitationCheck, PlacedCitation

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


def placed_checks(placed: Sequence[Placed], checks: dict[tuple[object, ...], CitationCheck]) -> list[PlacedCitation]:
    """Each placed citation with its check, cited as the document writes it there."""
    return [PlacedCitation(**checks[key_of(p.citation)].model_dump(exclude={"cited"}), cited=p.citation.cited,
                           page=p.page, line=p.line) for p in placed]


def summary_of(checks: Sequence[CitationCheck]) -> dict[str, int]:
    """Citations per verdict, and how many are found with a value that is not the clause's."""
    counts = Counter(c.verdict for c in checks)
    mismatched = sum(1 for c in checks if c.verdict == "found" and c.value_matches is False)
    return {**dict(counts.most_common()), **({"value_mismatch": mismatched} if mismatched else {})}
