"""get_document: a document or chunk by id (with its neighbours, at a clause), a document by designation (across
editions), or a document's best passages for a query — a search inside that one document."""

from __future__ import annotations

from typing import Any

from service.caller.principal import Principal
from service.search.answer.models import DocumentResponse
from service.search.documents import DOCUMENT_PASSAGES, Documents, document_id
from service.search.request.contract import validate_document_request, validate_request
from service.search.tools.search_documents import Searcher


def open_document(arguments: dict[str, Any], principal: Principal, documents: Documents,
                  searcher: Searcher) -> DocumentResponse:
    """A lookup by id or designation, or with a query the document's best passages: a search inside that one
    document (its access filter in the engine, every chunk of it ranked), answered as the document and its
    passages."""
    request = validate_document_request(arguments)
    if request.designation is not None:
        return documents.by_designation(request.designation, request.clause, request.compare, principal.groups)
    result_id = request.id or ""  # the contract asks for one of id and designation
    if request.query is None:
        return documents.get(result_id, principal.groups, request.clause)
    doc_id = document_id(result_id)
    search = validate_request({"query": request.query, "limit": 1, "max_chunks": DOCUMENT_PASSAGES})
    answered = searcher.answer(search, principal, searcher.coverage.get(principal.groups), document=doc_id)
    if not answered.found.raw["hits"]["hits"]:  # nothing in it matches, or no such document for this caller
        found = documents.get(doc_id, principal.groups)
        return DocumentResponse(id=result_id, document=found.document, passages=[])
    response = searcher.map(search, answered.planned.parsed[0], answered.planned.plan, answered.found,
                            searcher.coverage.get(principal.groups))
    document = response.results[0]
    passages, document.context_chunks = document.context_chunks, []
    return DocumentResponse(id=result_id, document=document, passages=passages)
