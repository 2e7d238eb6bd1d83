"""Retrieval by id: a document or chunk with its neighbours, a clause of a document, what it cites and who
cites it. Every lookup carries the caller's access filter, so an id the caller may not read is NOT_FOUND.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from service.errors import (
    InvalidQuery,
    NotFound,
)
from service.search.answer.map import map_chunk, map_document
from service.search.answer.models import (
    CitationCheck,
    CitingDocument,
    ClauseEdition,
    DocumentResponse,
    Edition,
)
from service.search.citations.check import CitationChecker, Held, verdict_of
from service.search.citations.clauses import Opened
from service.search.citations.designations import find_designation, parse_designation
from service.search.citations.editions import word_difference
from service.search.citations.grammar import POINTER_RE, Citation, pointer_label
from service.search.dsl.lookups import (
    build_chunks_by_index,
    build_cited_lookup,
    build_citing_lookup,
    build_clause_lookup,
    build_visible_ids,
)
from service.search.request.contract import validate_document_request

#: get_document shows a chunk whole (the ingest's chunks are far smaller); the bound keeps an answer sane
WHOLE_CHUNK_CHARS = 25_000


MAX_CITES = 200  # designations get_document lists of what a document cites


MAX_CITED_BY = 100


_ID_RE = re.compile(r"^(?P<doc>[0-9a-f]{20})(?::(?P<chunk>\d{1,7}))?$")


_CLAUSE_PREFIX_RE = re.compile(r"^(?:п\.|пп\.|пункт|подпункт|раздел|разд\.|р\.)\s*", re.IGNORECASE)


def normalize_clause(text: str) -> str:
    """How a person writes a clause → how chunks record it: «п. 5.2.3» → «5.2.3», «приложение б» →
    «Приложение Б», «таблица 4» → «Таблица 4». Bounded and stripped of anything but the clause."""
    if not isinstance(text, str) or not 0 < len(text.strip()) <= 60:
        raise InvalidQuery("clause must be 1-60 characters, e.g. «5.2.3» or «Приложение Б»",
                           details={"field": "clause"})
    text = " ".join(_CLAUSE_PREFIX_RE.sub("", text.strip()).split()).rstrip(".") or text.strip()
    word, *rest = text.split()
    if word[:1].isalpha() and rest:
        return " ".join([word.capitalize(), *(part.upper() if len(part) <= 3 else part for part in rest)])
    return text


#: the passages ``get_document`` shows for a query (as many as a second call inside one document)
DOCUMENT_PASSAGES = 10


def parse_id(result_id: str) -> tuple[str, int | None]:
    """A result id → (its document id, its chunk index or None); INVALID_QUERY for anything else."""
    match = _ID_RE.match(result_id.strip())
    if not match:
        raise InvalidQuery("id must be a document id (20 hex characters) or a chunk id (<document id>:<n>)",
                           details={"field": "id"})
    return match["doc"], int(match["chunk"]) if match["chunk"] is not None else None


def document_id(result_id: str) -> str:
    """The document a result or chunk id names."""
    return parse_id(result_id)[0]


Send = Callable[[dict[str, Any]], dict[str, Any]]


class Documents:
    """Lookups by id, each one engine search through ``send`` (the service's, which maps engine errors)."""

    def __init__(self, send: Send, passage_chars: int = 600) -> None:
        self.send = send
        self.citing = CitationChecker(send, passage_chars)

    def get(self, result_id: str, groups: tuple[str, ...], clause: str | None = None) -> DocumentResponse:
        """A document (by ``id``) or a chunk (by ``chunk_id``) with its neighbouring chunks; with ``clause``
        the first chunk of that clause in the document."""
        request = validate_document_request({"id": result_id, **({"clause": clause} if clause is not None else {})})
        doc_id, chunk = parse_id(request.id or "")
        centre = chunk or 0
        if request.clause is not None:
            centre = self._clause_start(doc_id, normalize_clause(request.clause), groups, result_id)
        indexes = [i for i in (centre - 1, centre, centre + 1) if i >= 0]
        hits = self.send(build_chunks_by_index(doc_id, indexes, list(groups)))["hits"]["hits"]
        by_index = {h["_source"]["chunk_index"]: h for h in hits}
        if centre not in by_index:
            raise NotFound(f"no document or chunk with id {result_id} is visible to you", details={"id": result_id})
        chunk_hit = by_index[centre]
        source = chunk_hit["_source"]
        document = map_document(source, 1.0)
        if document.superseded_by:
            self.hide_unreadable([document.superseded_by], groups)
        return DocumentResponse(
            id=result_id, document=document, chunk=map_chunk(chunk_hit, 1.0, WHOLE_CHUNK_CHARS),
            neighbours=[map_chunk(by_index[i], 0.0, WHOLE_CHUNK_CHARS) for i in indexes
                        if i != centre and i in by_index],
            cites=self._resolve_cites(source.get("cites") or [], groups) or None,
            cited_by=self._cited_by(source, groups) or None, replaces=source.get("replaces") or None)

    def by_designation(self, designation: str, clause: str | None, compare: bool,
                       groups: tuple[str, ...]) -> DocumentResponse:
        """A document by its designation (without an edition: the current one), opened at ``clause`` when
        given, with the other editions held; with ``compare`` the clause in each of them and what changed."""
        named = find_designation(designation) or designation
        wanted = clause_label(clause) if clause is not None else (None, None)
        citation = Citation(designation, named, *wanted)
        checked, compared = self.citing.check([citation], groups, compare)
        check = verdict_of(checked[0])
        opened_at = opening_of(check, named)
        response = self.get(opened_at, groups)
        editions = [Edition(designation=d) for d in check.editions or []]
        if check.replaced_by is not None:
            editions.append(Edition(designation=check.replaced_by.designation, id=check.replaced_by.id))
        response.editions = editions or None
        if compare:
            response.comparison = comparison(compared.get("0", []))
        return response

    def hide_unreadable(self, editions: list[Edition], groups: tuple[str, ...]) -> None:
        """A newer edition the caller may not read is named by its designation only, never by its id."""
        ids = {e.id for e in editions if e.id}
        if not ids:
            return
        visible = {h["_source"]["doc_id"] for h in self.send(build_visible_ids(sorted(ids), list(groups)))
                   ["hits"]["hits"]}
        for edition in editions:
            if edition.id not in visible:
                edition.id = None

    def _resolve_cites(self, cites: list[str], groups: tuple[str, ...]) -> list[Edition]:
        """Each designation the document cites with the id of the archive's document it names, among those the
        caller may read (an edition as cited; without an edition, the newest readable one)."""
        cites = cites[:MAX_CITES]
        if not cites:
            return []
        hits = self.send(build_cited_lookup(cites, list(groups)))["hits"]["hits"]
        exact: dict[str, str] = {}
        newest: dict[str, tuple[int, str]] = {}
        for hit in hits:
            src = hit["_source"]
            exact.setdefault(str(src.get("designation")), src["doc_id"])
            if src.get("family") and (src.get("edition") or 0) >= newest.get(src["family"], (-1, ""))[0]:
                newest[src["family"]] = (src.get("edition") or 0, src["doc_id"])
        return [Edition(designation=d, id=exact.get(d) or (newest.get(d, (0, None))[1]
                                                           if parse_designation(d).edition is None else None))
                for d in cites]

    def _cited_by(self, source: dict[str, Any], groups: tuple[str, ...]) -> list[CitingDocument]:
        """The documents citing this edition, or (when it is the current one) its designation without an edition."""
        if not source.get("designation"):
            return []
        # a citation without an edition names the current edition: it cites a replaced one only by its edition
        family = None if source.get("superseded_by") else source.get("family")
        body = build_citing_lookup(source["designation"], family, list(groups), MAX_CITED_BY)
        return [CitingDocument(id=h["_source"]["doc_id"], designation=h["_source"].get("designation"),
                               title=h["_source"].get("title") or h["_source"].get("file_name") or "")
                for h in self.send(body)["hits"]["hits"] if h["_source"]["doc_id"] != source["doc_id"]]

    def _clause_start(self, doc_id: str, clause: str, groups: tuple[str, ...], result_id: str) -> int:
        """The index of the first chunk of ``doc_id`` in which ``clause`` starts or runs."""
        hits = self.send(build_clause_lookup(doc_id, clause, list(groups)))["hits"]["hits"]
        if not hits:
            raise NotFound(f"no clause {clause} in a document with id {result_id} visible to you",
                           details={"id": result_id, "clause": clause})
        return int(hits[0]["_source"]["chunk_index"])


def clause_label(clause: str) -> tuple[str, str | None]:
    """A clause as typed («п. 4.2.19», «пп. 4.2.19–4.2.21», «табл. 2», «Приложение Б», «5.8») as chunks label it,
    with the last clause of a range."""
    pointer = POINTER_RE.fullmatch(" ".join(clause.split()).rstrip("."))
    return pointer_label(pointer["kind"], pointer["label"]) if pointer else (normalize_clause(clause), None)


def opening_of(check: CitationCheck, named: str) -> str:
    """The id a checked designation opens at: the clause's chunk, or the document; NOT_FOUND saying why not."""
    details: dict[str, str | list[str]] = {"designation": named, "verdict": check.verdict}
    if check.editions:
        details["editions"] = check.editions
    if check.document is None or check.document.id is None:
        if check.replaced_by is not None and check.replaced_by.id:
            details["replaced_by"] = check.replaced_by.designation
            raise NotFound(f"no {named} is visible to you; {check.replaced_by.designation} (id "
                           f"{check.replaced_by.id}) replaces it", details=details)
        held = f"; the archive holds {', '.join(check.editions)}" if check.editions else ""
        raise NotFound(f"no {named} is visible to you{held}", details=details)
    if check.verdict == "ambiguous":
        details["candidates"] = [c.id or c.designation for c in check.candidates or []]
        raise NotFound(f"several documents are {named}: open one by id", details=details)
    if check.clause is not None and check.found is None:
        details["nearest"] = check.nearest or []
        raise NotFound(f"no clause {check.clause} in {check.document.designation}; nearest: "
                       f"{', '.join(check.nearest or []) or 'none'}", details=details)
    return check.found.chunk_id if check.found else check.document.id


def comparison(editions: list[tuple[Held, Opened]]) -> list[ClauseEdition]:
    """The clause in each edition, oldest first, each with what changed from the one before."""
    shown: list[ClauseEdition] = []
    for n, (held, opened) in enumerate(editions):
        item = ClauseEdition(designation=held.designation, id=held.doc_id, clause=opened.shown)
        if n:
            item.difference, changed = word_difference(editions[n - 1][1].full, opened.full)
            item.changed_numbers = changed or None
        shown.append(item)
    return shown
