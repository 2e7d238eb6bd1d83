"""Search responses rendered for people: text (terminal), markdown, or JSON."""

from __future__ import annotations

from service.search.query.models import ChunkResult, SearchResponse


def clause_label(clause: str | None, clause_end: str | None = None) -> str | None:
    """«п. 5.2.3», «пп. 5.2.3–5.2.4», «Приложение Б», «Таблица 4 – 5.3»."""
    if not clause:
        return None
    numbered = clause[:1].isdigit()
    if clause_end:
        return f"{'пп. ' if numbered else ''}{clause}–{clause_end}"
    return f"п. {clause}" if numbered else clause


def place(chunk: ChunkResult) -> str:
    """Where a passage is, as an engineer cites it: «п. 5.2.3, с. 12–13» (sheet name for XLSX)."""
    pages = f"с. {chunk.page_number}" + (f"–{chunk.page_end}" if chunk.page_end else "") \
        if chunk.page_number is not None else None
    parts = [clause_label(chunk.clause, chunk.clause_end), pages,
             f"«{chunk.page_label}»" if chunk.page_label else None]
    return ", ".join(p for p in parts if p)


def render_text(response: SearchResponse) -> str:
    meta = response.meta
    lines = [f"«{meta.query}»: {meta.total_results} documents, route {meta.route_used}"
             + (f" (fallback: {meta.fallback_reason})" if meta.fallback_reason else "")
             + f", {meta.timings.total_ms:.0f} ms"]
    if meta.vectors.share < 1:
        lines.append(f"Vectors: {meta.vectors.share:.0%} of chunks ({meta.vectors.pending_chunks} still pending: "
                     "the dense leg sees only the others)")
    if meta.suggestions.corrected_query:
        lines.append(f"Did you mean: {meta.suggestions.corrected_query}")
    for rank, doc in enumerate(response.results, (meta.pagination.page - 1) * meta.pagination.limit + 1):
        similarity = f", similarity {doc.similarity:.2f}" if doc.similarity is not None else ""
        lines.append(f"\n{rank}. {doc.title}  [{doc.file_type}, relevance {doc.relevance_score:.2f}{similarity}]")
        lines.append(f"   {doc.file_path}  (id {doc.id})")
        if doc.superseded_by:
            lines.append(f"   заменён: {doc.superseded_by.designation}")
        for chunk in doc.context_chunks:
            where = place(chunk)
            lines.append(f"   — {where}: " + chunk.text.replace("\n", "\n     "))  # a table's rows, indented
        if not doc.context_chunks:
            lines += [f"   … {h}" for h in doc.highlights or []]
    if meta.facets.document_types:
        lines.append("\nBy type: " + ", ".join(f"{k} {v}" for k, v in meta.facets.document_types.items()))
    if meta.pagination.has_more:
        lines.append(f"More: --cursor {meta.pagination.next_cursor}")
    if meta.suggestions.related_queries:
        lines.append("Try: " + " | ".join(meta.suggestions.related_queries))
    return "\n".join(lines)


def render_markdown(response: SearchResponse) -> str:
    meta = response.meta
    out = [f"**{meta.total_results}** documents for *{meta.query}* (route `{meta.route_used}`)\n"]
    if meta.vectors.share < 1:
        out.append(f"_Vectors: {meta.vectors.share:.0%} of chunks; {meta.vectors.pending_chunks} pending._\n")
    for doc in response.results:
        out.append(f"### {doc.title}\n`{doc.file_path}` — {doc.file_type}, relevance {doc.relevance_score:.2f}\n")
        if doc.superseded_by:
            out.append(f"_Заменён: {doc.superseded_by.designation}_\n")
        out += [f"> {place(c)}: " + c.text.replace("\n", "\n> ") + "\n" for c in doc.context_chunks]
    return "\n".join(out)
