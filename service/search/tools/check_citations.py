"""check_citations: every citation of a text, of a file's pages or of an indexed document, checked against the
archive the caller may read — each distinct one once, ``MAX_CITATIONS`` to a batch of two engine requests."""

from __future__ import annotations

from collections.abc import Callable

from service.caller.principal import Principal
from service.errors import NotFound
from service.search.answer.models import CitationCheck, CitationsResponse
from service.search.citations.check import CITATION_TEXT_SHARE, fit_texts, verdict_of
from service.search.citations.document import (
    MAX_DOCUMENT_CITATIONS,
    Pages,
    build_document_text,
    distinct_batches,
    document_pages,
    key_of,
    placed_checks,
    placed_citations,
    summary_of,
)
from service.search.citations.grammar import MAX_CITATIONS, find_citations
from service.search.documents import Documents, document_id
from service.search.reads import EngineReads
from service.search.request.contract import CitationsRequest


def citations_of(request: CitationsRequest, principal: Principal, documents: Documents, reads: EngineReads,
                 answer_chars: int) -> CitationsResponse:
    """The request's text checked, or the indexed document of its ``document_id`` (NOT_FOUND for one the caller may
    not read; its first ``MAX_DOCUMENT_CHUNKS`` chunks read, ``truncated`` past them)."""
    if request.document_id is None:
        return check_text(str(request.text), principal, documents, answer_chars)
    doc_id = document_id(request.document_id)
    found = reads.send(build_document_text(doc_id, list(principal.groups)))
    hits = [h["_source"] for h in found["hits"]["hits"]]
    if not hits:
        raise NotFound(f"no document {doc_id} you may read", details={"document_id": request.document_id})
    checked = check_pages(str(hits[0].get("file_name") or doc_id), document_pages(hits), principal, documents,
                          answer_chars)
    if found["hits"]["total"]["value"] > len(hits):  # a document past MAX_DOCUMENT_CHUNKS: its first ones read
        checked.truncated = True
    return checked


def check_text(text: str, principal: Principal, documents: Documents, answer_chars: int) -> CitationsResponse:
    """The first ``MAX_CITATIONS`` citations of a text, checked in one batch."""
    citations = find_citations(text, MAX_CITATIONS + 1)
    checked, _ = documents.citing.check(citations[:MAX_CITATIONS], principal.groups)
    verdicts = [verdict_of(c) for c in checked]
    cut = fit_texts(verdicts, CITATION_TEXT_SHARE * answer_chars)
    return CitationsResponse(citations=verdicts, truncated=True if len(citations) > MAX_CITATIONS else None,
                             texts_cut=cut or None)


def check_pages(name: str, pages: Pages, principal: Principal, documents: Documents, answer_chars: int,
                progress: Callable[[int, int], None] | None = None) -> CitationsResponse:
    """Every citation of a document's ``pages`` with its page and line (``service.search.citations.document``);
    ``progress(done, total)`` after each batch."""
    placed = placed_citations(pages, MAX_DOCUMENT_CITATIONS + 1)
    kept = placed[:MAX_DOCUMENT_CITATIONS]
    batches = list(distinct_batches(kept))
    total = sum(len(b) for b in batches)
    checks: dict[tuple[object, ...], CitationCheck] = {}
    for batch in batches:
        checked, _ = documents.citing.check(batch, principal.groups)
        checks.update({key_of(c): verdict_of(v) for c, v in zip(batch, checked, strict=True)})
        if progress:
            progress(len(checks), total)
    cut = fit_texts(list(checks.values()), CITATION_TEXT_SHARE * answer_chars)
    listed = placed_checks(kept, checks)
    return CitationsResponse(citations=listed, truncated=True if len(placed) > MAX_DOCUMENT_CITATIONS else None,
                             texts_cut=cut or None, file=name, pages=len(pages), summary=summary_of(listed))
