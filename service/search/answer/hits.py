"""The engine's raw answer read: each collapsed hit's candidate chunks, a chunk's marked text and spans, the dense
leg's unit cosines, the copies of a content, facets and suggestions. Pure functions."""

from __future__ import annotations

from typing import Any

from service.engine.fields import UNITS_FIELD
from service.search.answer.models import Copy, Facets
from service.search.answer.passages import Marked, Span, Spans, parse_spans, unmark
from service.search.dsl.build import CHUNKS
from service.search.request.parse import ParsedQuery


def inner_hits(hit: dict[str, Any], name: str = CHUNKS) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = hit.get("inner_hits", {}).get(name, {}).get("hits", {}).get("hits", [])
    return hits


def chunks_by_document(raw: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A chunks request's answer (``build_chunks_request``) → document id → its best chunks, best first."""
    buckets = raw.get("aggregations", {}).get(CHUNKS, {}).get("buckets", [])
    return {str(b["key"]): b[CHUNKS]["hits"]["hits"] for b in buckets}


def document_chunks(hits: list[dict[str, Any]],
                    found: dict[str, list[dict[str, Any]]] | None) -> list[list[dict[str, Any]]]:
    """Each collapsed hit's candidate chunks: those a chunks request ``found`` for its document, or, without
    one, the collapse's inner hits."""
    if found is None:
        return [inner_hits(hit) for hit in hits]
    return [found.get(str(hit["_source"]["doc_id"]), []) for hit in hits]


def content_hash(hit: dict[str, Any]) -> str | None:
    """The content a collapsed hit stands for (the collapse key the engine returns with it)."""
    values = hit.get("fields", {}).get("doc_hash") or [None]
    return values[0] if isinstance(values[0], str) else None


def map_copies(raw: dict[str, Any]) -> dict[str, list[Copy]]:
    """A copies lookup's answer → content hash → every path the caller may read, where there is more than one."""
    found = {str(content["key"]): [Copy(id=str(path["ids"]["buckets"][0]["key"]), file_path=str(path["key"]))
                                   for path in content["paths"]["buckets"] if path["ids"]["buckets"]]
             for content in raw.get("aggregations", {}).get("copies", {}).get("buckets", [])}
    return {key: copies for key, copies in found.items() if len(copies) > 1}


def marked_of(hit: dict[str, Any]) -> Marked:
    """The chunk's whole text with the query's terms located (the engine's highlighter sends it whole)."""
    texts = hit.get("highlight", {}).get("text") or [hit["_source"].get("text", "")]
    return unmark(str(texts[0]))


def spans_of(src: dict[str, Any]) -> Spans:
    """The chunk's page and clause changes; an index written before spans existed gives its start alone."""
    return parse_spans(src.get("spans")) or Spans([Span(0, src.get("page_number"), src.get("clause"))])


def engine_cosines(hit: dict[str, Any], floor: float | None = None) -> dict[int, float]:
    """Unit start → cosine to the query, for the chunk's nearest units the dense leg named (its ``units``
    inner hits; a cosine-space k-NN score is (1 + cosine) / 2); empty when the leg did not reach the chunk.
    ``floor``: the dense leg's score floor (the fusion's, per embedder): a model whose cosines crowd near 1
    (e5: 0.75–0.95 for any text of the language) is measured from it, ``(score - floor) / (1 - floor)``, as
    the fusion scales it, so a unit's cosine tells it from its neighbours as navec's do."""
    def scaled(score: float) -> float:
        return 2 * score - 1 if floor is None or floor >= 1 else max(0.0, (score - floor) / (1 - floor))
    return {int(u["_source"]["o"]): scaled(float(u.get("_score") or 0.0))
            for u in inner_hits(hit, UNITS_FIELD) if isinstance(u.get("_source", {}).get("o"), int)}


def map_facets(aggs: dict[str, Any]) -> Facets:
    return Facets(
        document_types={b["key"]: b["docs"]["value"] for b in aggs.get("document_types", {}).get("buckets", [])},
        date_distribution={b["key_as_string"]: b["docs"]["value"]
                           for b in aggs.get("date_distribution", {}).get("buckets", [])},
    )


def map_correction(suggest: dict[str, Any] | None, original: str) -> str | None:
    """The suggester's best correction, if it differs from what was asked."""
    for entry in (suggest or {}).get("corrected", []):
        for option in entry.get("options", []):
            if option["text"].strip().lower() != " ".join(original.lower().replace("ё", "е").split()):
                return str(option["text"])
    return None


def related_queries(parsed: ParsedQuery, correction: str | None) -> list[str]:
    """Broader variants an agent can try when little was found: the correction, unquoted, one term fewer."""
    related = [correction] if correction else []
    if parsed.phrases:
        related.append(parsed.plain)
    words = parsed.terms.split()
    if len(words) > 1:
        related += [" ".join(w for j, w in enumerate(words) if j != i) for i in range(len(words))][:3]
    return list(dict.fromkeys(r for r in related if r))[:5]
