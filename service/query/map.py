"""Engine responses → the public result models. Pure functions."""

from __future__ import annotations

from typing import Any

from service.query.models import ChunkResult, DocumentResult, Facets

MARK = "**"  # the highlight tags (build.HIGHLIGHT_TAGS)
HIGHLIGHT_CHARS = 240


def cut_at_word(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with an ellipsis when cut."""
    return _cut(" ".join(text.split()), limit)


def _cut(text: str, limit: int) -> str:
    """``cut_at_word`` of a text whose whitespace is already single spaces."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[: cut if cut > limit // 2 else limit - 1].rstrip(" ,;:") + "…"


def passage_of(hit: dict[str, Any]) -> str | None:
    """The engine's best passage of a chunk hit (matched words marked, whitespace single spaces), None when
    it sent none."""
    passages = hit.get("highlight", {}).get("text") or [None]
    return None if passages[0] is None else " ".join(str(passages[0]).split())


def snippet(passage: str, limit: int) -> str | None:
    """A highlight: up to ``limit`` characters of ``passage`` from shortly before its first marked word, with
    its marks paired; None when nothing in it is marked (a dense-only hit's opening)."""
    return _snippet(" ".join(passage.split()), limit)


def _snippet(text: str, limit: int) -> str | None:
    """``snippet`` of a passage whose whitespace is already single spaces."""
    first = text.find(MARK)
    if first < 0:
        return None
    start = 0 if first <= limit // 5 else text.rfind(" ", 0, first - limit // 5) + 1
    cut = ("…" if start else "") + _cut(text[start:], limit - (1 if start else 0))
    return cut if cut.count(MARK) % 2 == 0 else cut.rstrip("…") + MARK + ("…" if cut.endswith("…") else "")


def similarity_of(hit: dict[str, Any]) -> float | None:
    """The chunk's cosine to the query (the ``similarity`` script field), clamped to 0-1; None without one."""
    values = hit.get("fields", {}).get("similarity") or [None]
    return None if values[0] is None else clamp(float(values[0]))


def map_chunk(hit: dict[str, Any], score: float, limit: int, passage: str | None = None) -> ChunkResult:
    """A chunk hit: its best passage when the engine chose one (a search; ``passage``: its ``passage_of``,
    when the caller has it), else its stored text (a lookup), cut at a word to ``limit`` characters."""
    src = hit["_source"]
    passage = passage if passage is not None else passage_of(hit)
    # marks out first, then whitespace: the engine sometimes sends a stray mark ("». ** На"), two spaces otherwise
    text = cut_at_word(passage.replace(MARK, "") if passage is not None else src.get("text", ""), limit)
    return ChunkResult(chunk_id=src["chunk_id"], chunk_index=src["chunk_index"], text=text,
                       page_number=src.get("page_number"), page_label=src.get("page_label"),
                       page_end=src.get("page_end") if src.get("page_end") != src.get("page_number") else None,
                       section_title=src.get("section_title"), clause=src.get("clause"),
                       relevance_score=round(score, 4),
                       similarity=similarity_of(hit))


def clamp(score: float | None) -> float:
    return round(min(1.0, max(0.0, score or 0.0)), 4)


def map_document(src: dict[str, Any], score: float) -> DocumentResult:
    return DocumentResult(id=src["doc_id"], title=src.get("title") or src["file_name"],
                          designation=src.get("designation"), file_path=src["file_path"],
                          file_type=src["file_type"], file_size=src.get("file_size") or 0,
                          created_at=src.get("created_at"), updated_at=src.get("updated_at"),
                          page_count=src.get("page_count"), relevance_score=clamp(score))


def map_hit(hit: dict[str, Any], include_context: bool, chunk_chars: int) -> DocumentResult:
    """A collapsed hit: the document, its best chunks (scores scaled to the document's) and highlights."""
    doc = map_document(hit["_source"], hit.get("_score") or 0.0)
    doc.similarity = similarity_of(hit)
    inner = hit.get("inner_hits", {}).get("chunks", {}).get("hits", {}).get("hits", [])
    top = max((h.get("_score") or 0.0 for h in inner), default=0.0) or 1.0
    passages = [passage_of(h) for h in inner]
    snippets = (_snippet(p, HIGHLIGHT_CHARS) for p in passages if p is not None)
    doc.highlights = list(dict.fromkeys(s for s in snippets if s))[:3]
    if include_context:
        doc.context_chunks = [map_chunk(h, doc.relevance_score * (h.get("_score") or 0.0) / top, chunk_chars, p)
                              for h, p in zip(inner, passages, strict=True)]
    return doc


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
