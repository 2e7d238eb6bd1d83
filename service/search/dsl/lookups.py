"""Lookups by id, clause, citation and content: small requests beside a search, access filter always in."""

from __future__ import annotations

from typing import Any

from service.engine.fields import FIRST_CHUNK
from service.search.citations.designations import parse_designation
from service.search.dsl.build import SOURCE_EXCLUDES
from service.search.dsl.filters import NOT_CONTENT, build_access_filter

#: the most copies (paths of one content) a result lists
MAX_COPIES = 20


def build_copies_lookup(hashes: list[str], scope: dict[str, Any]) -> dict[str, Any]:
    """Every path of each content (``doc_hash``) that the request's filters admit, the access filter among
    them: a result's copies, the first ``MAX_COPIES`` paths in order, each with its document id. Asked once for
    the whole page, by filters and aggregations alone: one query phase a shard, however many results share
    their content (a collapse with inner hits ran one search per content and shard)."""
    ids = {"terms": {"field": "doc_id", "size": 1}}
    paths = {"terms": {"field": "file_path", "size": MAX_COPIES, "order": {"_key": "asc"}}, "aggs": {"ids": ids}}
    return {"query": {"bool": {"filter": [scope, {"terms": {"doc_hash": hashes}}]}}, "size": 0,
            "track_total_hits": False,
            "aggs": {"copies": {"terms": {"field": "doc_hash", "size": len(hashes)}, "aggs": {"paths": paths}}}}


def build_document_query(doc_id: str, groups: list[str]) -> dict[str, Any]:
    return {"bool": {"filter": [{"term": {"doc_id": doc_id}}, build_access_filter(groups)]}}


def build_chunks_by_index(doc_id: str, indexes: list[int], groups: list[str]) -> dict[str, Any]:
    query = build_document_query(doc_id, groups)
    query["bool"]["filter"].append({"terms": {"chunk_index": indexes}})
    return {"query": query, "size": len(indexes), "_source": SOURCE_EXCLUDES, "sort": [{"chunk_index": "asc"}]}


def build_clause_lookup(doc_id: str, clause: str, groups: list[str]) -> dict[str, Any]:
    """The first chunk of a document in which ``clause`` starts or runs (access filter included)."""
    query = build_document_query(doc_id, groups)
    query["bool"]["filter"].append({"term": {"clauses": clause}})
    query["bool"]["must_not"] = [NOT_CONTENT]  # a contents page lists the clause; the clause is in the text
    return {"query": query, "size": 1, "_source": ["chunk_index"], "sort": [{"chunk_index": "asc"}]}


def build_visible_ids(doc_ids: list[str], groups: list[str]) -> dict[str, Any]:
    """Which of ``doc_ids`` the caller may read (one chunk each)."""
    query = {"bool": {"filter": [{"terms": {"doc_id": doc_ids}}, FIRST_CHUNK, build_access_filter(groups)]}}
    return {"query": query, "size": len(doc_ids), "_source": ["doc_id"]}


def build_documents_matching_any(clauses: list[dict[str, Any]], groups: list[str]) -> dict[str, Any]:
    """The documents the caller may read that match any of ``clauses`` (one chunk per document)."""
    return {"bool": {"filter": [FIRST_CHUNK, build_access_filter(groups)], "should": clauses,
                     "minimum_should_match": 1}}


def build_cited_lookup(cites: list[str], groups: list[str]) -> dict[str, Any]:
    """The archive's documents a list of cited designations names: by designation, or by family for one
    cited without an edition (access filter included)."""
    undated = [d for d in cites if parse_designation(d).edition is None]
    clauses = [{"terms": {"designation": cites}}, *([{"terms": {"family": undated}}] if undated else [])]
    return {"query": build_documents_matching_any(clauses, groups), "size": 2 * len(cites),
            "_source": ["doc_id", "designation", "family", "edition"]}


def build_citing_lookup(designation: str, family: str | None, groups: list[str], size: int) -> dict[str, Any]:
    """Documents citing ``designation`` as such, or its family without an edition (access filter included)."""
    clauses = [{"term": {"cites": designation}}, *([{"term": {"cites": family}}] if family else [])]
    return {"query": build_documents_matching_any(clauses, groups), "size": size,
            "_source": ["doc_id", "designation", "title", "file_name"],
            "sort": [{"designation": "asc"}, {"doc_id": "asc"}]}


#: what a page image needs of its document
PAGE_FIELDS = ["doc_id", "doc_hash", "file_path", "file_type", "file_size", "page_count", "title", "file_name"]


def build_page_source(doc_id: str, groups: list[str]) -> dict[str, Any]:
    """A document's file facts (its first chunk), the access filter in."""
    query = build_document_query(doc_id, groups)
    query["bool"]["filter"].append(FIRST_CHUNK)
    return {"query": query, "size": 1, "_source": PAGE_FIELDS}


def build_registry_root(doc_id: str) -> dict[str, Any]:
    """The folder the ingest walked to reach a document's file (its registry entry; read only once the caller's
    access to the document is established)."""
    return {"query": {"ids": {"values": [doc_id]}}, "size": 1, "_source": ["root"]}
