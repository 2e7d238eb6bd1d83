"""Pure ``build_*`` functions producing OpenSearch request bodies; no I/O here.

The vector field is always excluded from ``_source`` in responses (it is kept in the index through
k-NN derived source, so a reindex still carries it).
"""

from __future__ import annotations

from typing import Any, Literal

Operator = Literal["AND", "OR"]

VECTOR_FIELD = "embedding"
TEXT_FIELDS = ("text", "title^2", "section_title^1.5", "text.codes", "title.codes^2")
SOURCE_EXCLUDES = {"excludes": [VECTOR_FIELD]}


def build_bm25_leg(text: str, operator: Operator = "AND", fields: tuple[str, ...] = TEXT_FIELDS) -> dict[str, Any]:
    """BM25 over the analyzed text fields; ``operator`` decides whether every term must match."""
    return {"multi_match": {"query": text, "fields": list(fields), "type": "best_fields",
                            "operator": operator.lower()}}


def build_knn_leg(vector: list[float], k: int, field: str = VECTOR_FIELD) -> dict[str, Any]:
    """Approximate nearest neighbours (Lucene HNSW) of ``vector``."""
    return {"knn": {field: {"vector": vector, "k": k}}}


def build_search_body(query: dict[str, Any], size: int) -> dict[str, Any]:
    return {"query": query, "size": size, "_source": SOURCE_EXCLUDES}


def build_hybrid_body(
    legs: list[dict[str, Any]], size: int, filter_: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A native ``hybrid`` query over ``legs``; run it with a normalization or RRF search pipeline."""
    hybrid: dict[str, Any] = {"queries": legs}
    if filter_ is not None:
        hybrid["filter"] = filter_
    return build_search_body({"hybrid": hybrid}, size)
