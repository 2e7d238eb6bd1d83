"""The request's filters: access, types, dates, paths, folders, citations; what is never searched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.engine.fields import REPLACED
from service.search.citations.designations import parse_designation
from service.search.request.contract import SearchRequest

#: evaluation/sets/editions: 12 of 12 current first, both shown in 6; 0.5 hid the old edition from most
REPLACED_BOOST = 0.75
#: how much higher the text leg scores a chunk of a document the question names («СП 253.1325800 число котлов»)
NAMED_BOOST = 2.0


def escape_wildcard(value: str) -> str:
    return value.replace("\\", "\\\\").replace("*", "\\*").replace("?", "\\?")


def build_source_filter(value: str) -> dict[str, Any]:
    """An absolute path prefix, or a folder/file name fragment anywhere in the path."""
    if value.startswith("/"):
        return {"prefix": {"file_path": value}}
    return {"wildcard": {"file_path": {"value": f"*{escape_wildcard(value)}*"}}}


def build_folder_filter(folder: str) -> dict[str, Any]:
    """Files below ``folder``, whole path segments only: "/a/b" holds "/a/b/c.pdf", not "/a/bc.pdf"."""
    folder = folder.rstrip("/")
    if not folder:
        return {"prefix": {"file_path": "/"}}
    if folder.startswith("/"):
        return {"prefix": {"file_path": folder + "/"}}
    return {"wildcard": {"file_path": {"value": f"*/{escape_wildcard(folder)}/*"}}}


def build_access_filter(groups: list[str]) -> dict[str, Any]:
    return {"terms": {"access_groups": sorted(set(groups))}}


#: chunks of contents, cover and imprint pages (``role``, set at ingest) are never searched; get_document reads them
NOT_CONTENT = {"exists": {"field": "role"}}


def _types(request: SearchRequest) -> dict[str, Any] | None:
    return {"terms": {"file_type": request.document_types}} if request.document_types else None


def _dates(request: SearchRequest) -> dict[str, Any] | None:
    """``updated_at`` within the range, the whole last day included (``||/d``: no date overflow)."""
    span = request.date_range
    if span is None or not (span.from_ or span.to):
        return None
    bounds = {**({"gte": span.from_.isoformat()} if span.from_ else {}),
              **({"lte": span.to.isoformat() + "||/d"} if span.to else {})}
    return {"range": {"updated_at": bounds}}


def _paths(request: SearchRequest) -> dict[str, Any] | None:
    return {"terms": {"file_path": request.path}} if request.path else None


def _folder(request: SearchRequest) -> dict[str, Any] | None:
    return build_folder_filter(request.folder) if request.folder else None


def _source(request: SearchRequest) -> dict[str, Any] | None:
    return build_source_filter(request.source_filter) if request.source_filter else None


def _cites(request: SearchRequest) -> dict[str, Any] | None:
    return build_cites_filter(request.cites) if request.cites else None


#: one filter per request parameter, each None when the parameter is not given (AND between them)
REQUEST_FILTERS: tuple[Callable[[SearchRequest], dict[str, Any] | None], ...] = (
    _types, _dates, _paths, _folder, _source, _cites,
)


def build_filters(request: SearchRequest, groups: list[str]) -> dict[str, Any]:
    """Every filter (AND between kinds, OR within a list), the caller's access groups always among them;
    contents, cover and imprint pages left out."""
    given = (clause for make in REQUEST_FILTERS if (clause := make(request)) is not None)
    must_not = [NOT_CONTENT, *([REPLACED] if request.current_only else [])]
    return {"bool": {"filter": [build_access_filter(groups), *given], "must_not": must_not}}


def build_cites_filter(designation: str) -> dict[str, Any]:
    """Documents citing ``designation``: that edition as cited, or, without an edition, any edition of it."""
    cited = parse_designation(designation)
    if cited.edition is None:
        return {"term": {"cites_family": cited.family}}
    return {"term": {"cites": cited.text}}


def demote_replaced(query: dict[str, Any]) -> dict[str, Any]:
    """The text leg with editions the archive holds a newer one of scored lower, so the current edition ranks
    first when both match (the search does not demote when the query names a designation: then it is the
    one wanted)."""
    return {"boosting": {"positive": query, "negative": REPLACED, "negative_boost": REPLACED_BOOST}}


def favour_named(query: dict[str, Any], families: list[str]) -> dict[str, Any]:
    """The text leg with the chunks of the named documents (``families``: any edition of each) scored
    ``NAMED_BOOST`` times higher, so the document asked about ranks first where it holds the question's words at
    all; the rest keep their scores."""
    return {"function_score": {"query": query, "boost_mode": "multiply",
                               "functions": [{"filter": {"terms": {"family": families}}, "weight": NAMED_BOOST}]}}


def unboosted(leg: dict[str, Any]) -> dict[str, Any]:
    """The text leg without its demotion of replaced editions (a ``boosting`` query, which hides the scores'
    bounds from Lucene's top-k pruning), in each phrasing's leg too."""
    if "boosting" in leg:
        return unboosted(leg["boosting"]["positive"])
    if "dis_max" in leg:
        return {"dis_max": {**leg["dis_max"], "queries": [unboosted(q) for q in leg["dis_max"]["queries"]]}}
    return leg
