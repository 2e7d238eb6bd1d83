"""Aggregations: facets and totals counted in documents (one per content), and ``list_sources``' body."""

from __future__ import annotations

from typing import Any

from service.engine.fields import FIRST_CHUNK
from service.search.dsl.filters import build_access_filter, build_folder_filter

MOST_CITED = 20


#: documents counted as contents (a file kept in several folders counts once), exact below 40,000
DOCUMENTS = {"docs": {"cardinality": {"field": "doc_hash", "precision_threshold": 40000}}}


TOTAL_DOCS = "total_docs"
#: documents per file type: a facet of every search and of ``list_sources``
DOCUMENT_TYPES = {"terms": {"field": "file_type", "size": 30}, "aggs": DOCUMENTS}


def build_document_count() -> dict[str, Any]:
    """The matching documents, counted under a ``filter`` that admits every hit: a cardinality at the top of
    the request would be run by the engine's dynamic pruning, which re-runs the query on a segment with few
    documents and, under a ``hybrid`` query, can loop without end on a core (OpenSearch issue 22582; pruning
    never runs below a parent aggregation). The count is the same: every hit is admitted."""
    return {"filter": {"match_all": {}}, "aggs": DOCUMENTS}


def document_count(aggregations: dict[str, Any], default: int) -> int:
    """The count ``build_document_count`` asked for, from a response's aggregations."""
    return int(aggregations.get(TOTAL_DOCS, {}).get("docs", {}).get("value", default))


def build_aggregations() -> dict[str, Any]:
    """Facets counted in documents (one per content), not chunks."""
    return {
        TOTAL_DOCS: build_document_count(),
        "document_types": DOCUMENT_TYPES,
        "date_distribution": {"date_histogram": {"field": "updated_at", "calendar_interval": "month",
                                                 "format": "yyyy-MM", "min_doc_count": 1}, "aggs": DOCUMENTS},
    }


#: the replaced editions list_sources names
MAX_REPLACED = 100  # a top_hits aggregation reads at most 100 (index.max_inner_result_window)


def build_sources_body(groups: list[str], folder: str | None = None) -> dict[str, Any]:
    """What the caller may read (below ``folder``, when given): documents (one per content, copies in several
    folders counted once; in each folder they are in), chunks, types, folders, dates."""
    scope = [build_access_filter(groups), *([build_folder_filter(folder)] if folder is not None else [])]
    return {"size": 0, "query": {"bool": {"filter": scope}}, "track_total_hits": True,
            "aggs": {TOTAL_DOCS: build_document_count(),
                     "document_types": DOCUMENT_TYPES,
                     "folders": {"terms": {"field": "folder", "size": 50}, "aggs": DOCUMENTS},
                     "earliest": {"min": {"field": "updated_at"}}, "latest": {"max": {"field": "updated_at"}},
                     # one chunk per document: a document citing a designation counts once
                     "cited": {"filter": FIRST_CHUNK,
                               "aggs": {"top": {"terms": {"field": "cites", "size": MOST_CITED}}}},
                     # the editions the archive holds a newer one of (ingest/links.py sets it where every reader of
                     # the older may read the newer), each with the one replacing it
                     "replaced": {"filter": {"bool": {"filter": [FIRST_CHUNK,
                                                                 {"exists": {"field": "superseded_by_designation"}}]}},
                                  "aggs": {"editions": {"top_hits": {
                                      "size": MAX_REPLACED, "sort": [{"edition": "asc"}, {"doc_id": "asc"}],
                                      "_source": ["designation", "superseded_by_designation"]}}}}}}
