"""Search responses rendered for people: text (terminal), markdown, or JSON."""

from __future__ import annotations

from service.query.models import SearchResponse


def render_text(response: SearchResponse) -> str:
    meta = response.meta
    lines = [f"«{meta.query}»: {meta.total_results} documents, route {meta.route_used}"
             + (f" (fallback: {meta.fallback_reason})" if meta.fallback_reason else "")
             + f", {meta.timings.total_ms:.0f} ms"]
    if meta.suggestions.corrected_query:
        lines.append(f"Did you mean: {meta.suggestions.corrected_query}")
    for rank, doc in enumerate(response.results, (meta.pagination.page - 1) * meta.pagination.limit + 1):
        lines.append(f"\n{rank}. {doc.title}  [{doc.file_type}, relevance {doc.relevance_score:.2f}]")
        lines.append(f"   {doc.file_path}  (id {doc.id})")
        for chunk in doc.context_chunks:
            where = f"p. {chunk.page_number}" + (f" «{chunk.page_label}»" if chunk.page_label else "")
            lines.append(f"   — {where}: {chunk.text}")
        if not doc.context_chunks:
            lines += [f"   … {h}" for h in doc.highlights]
    if meta.facets.document_types:
        lines.append("\nBy type: " + ", ".join(f"{k} {v}" for k, v in meta.facets.document_types.items()))
    if meta.pagination.has_more:
        lines.append(f"More: --page {meta.pagination.page + 1}")
    if meta.suggestions.related_queries:
        lines.append("Try: " + " | ".join(meta.suggestions.related_queries))
    return "\n".join(lines)


def render_markdown(response: SearchResponse) -> str:
    meta = response.meta
    out = [f"**{meta.total_results}** documents for *{meta.query}* (route `{meta.route_used}`)\n"]
    for doc in response.results:
        out.append(f"### {doc.title}\n`{doc.file_path}` — {doc.file_type}, relevance {doc.relevance_score:.2f}\n")
        out += [f"> p. {c.page_number}: {c.text}\n" for c in doc.context_chunks]
    return "\n".join(out)
