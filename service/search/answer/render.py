"""Search responses rendered for people: text (terminal), markdown, or JSON."""

from __future__ import annotations

from service.search.answer.models import (
    ChunkResult,
    CitationCheck,
    CitationsResponse,
    DocumentResponse,
    SearchResponse,
)


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


def render_document_citations(response: CitationsResponse, markdown: bool = False) -> str:
    """A checked document: every citation with its page and line, its verdict and what the archive holds; the
    summary by verdict last. ``markdown``: a table."""
    summary = ", ".join(f"{verdict} {count}" for verdict, count in (response.summary or {}).items()) or "no citations"
    if markdown:
        rows = ["| с. | стр. | citation | verdict | archive |", "|---|---|---|---|---|"]
        rows += [f"| {c.page} | {c.line} | {c.cited.replace('|', '/')} | {c.verdict}"
                 f"{' (value differs)' if c.value_matches is False else ''} | {held_of(c).replace('|', '/')} |"
                 for c in response.citations]
        return "\n".join([f"**{response.file}**: {len(response.citations)} citations on {response.pages} pages — "
                          f"{summary}", "", *rows])
    lines = [f"с. {c.page}, стр. {c.line}: {citation_line(c)}" for c in response.citations]
    if response.truncated:
        lines.append("… more citations than are checked in one document (5,000)")
    return "\n".join([*lines, f"{response.file}: {len(response.citations)} citations on {response.pages} pages — "
                                f"{summary}"])


def held_of(check: CitationCheck) -> str:
    """What the archive holds for a citation, in a few words."""
    if check.found is not None and check.document is not None:
        return f"{check.document.designation}, {clause_name(check.found.clause)}, с. {check.found.page_number}"
    if check.replaced_by is not None:
        return f"replaced by {check.replaced_by.designation}"
    if check.nearest:
        return f"nearest: {', '.join(check.nearest)}"
    return check.document.designation if check.document is not None else ""


def citation_line(check: CitationCheck) -> str:
    """A citation's verdict, as cited, and what the archive holds (clause, page, replacing edition, nearest
    labels, whether a stated value is the clause's, and the clause's own words when it is not)."""
    line = f"{check.verdict:<19} {check.cited}"
    if check.found is not None and check.document is not None:
        line += f" → {check.document.designation}, {clause_name(check.found.clause)}, с. {check.found.page_number}"
    if check.replaced_by is not None:
        line += f" → replaced by {check.replaced_by.designation}"
        if check.replaced_clause is not None:
            line += f" ({clause_name(check.replaced_clause.clause)}, с. {check.replaced_clause.page_number})"
    if check.editions:
        line += f"; editions held: {', '.join(check.editions)}"
    if check.nearest:
        line += f"; nearest: {', '.join(check.nearest)}"
    if check.value_matches is not None:
        line += f"; value «{check.value}» {'matches' if check.value_matches else 'DOES NOT match'}"
        if check.clause_words:
            line += f"; the clause says: «{check.clause_words}»"
    return line


def render_citations(response: CitationsResponse) -> str:
    """Each citation a line (``citation_line``), the clause's text under a found one."""
    lines: list[str] = []
    for check in response.citations:
        lines.append(citation_line(check))
        if check.found is not None:
            lines.append(f"    {check.found.text}")
    if response.truncated:
        lines.append("… more citations than are checked in one call (50)")
    return "\n".join(lines) or "no citations found"


def clause_name(label: str) -> str:
    """«5.8» → «п. 5.8»; «Таблица 2» stays."""
    return f"п. {label}" if label[:1].isdigit() else label


def render_document(response: DocumentResponse) -> str:
    """A document opened: its title and edition, the chunk (clause, page, text), other editions, a comparison."""
    doc = response.document
    lines = [doc.title + (f" (replaced by {doc.superseded_by.designation})" if doc.superseded_by else "")]
    if response.chunk is not None:
        chunk = response.chunk
        lines.append(f"{chunk.chunk_id}: {clause_name(chunk.clause) if chunk.clause else ''} с. {chunk.page_number}")
        lines.append(chunk.text)
    for passage in response.passages or []:
        lines.append(f"{passage.chunk_id}: {clause_name(passage.clause) if passage.clause else ''} "
                     f"с. {passage.page_number}\n{passage.text}")
    if response.editions:
        lines.append("editions held: " + ", ".join(e.designation for e in response.editions))
    for edition in response.comparison or []:
        lines.append(f"— {edition.designation}, {clause_name(edition.clause.clause)}, с. {edition.clause.page_number}:"
                     f" {edition.clause.text}")
        if edition.difference is not None:
            lines.append(f"  changed: {edition.difference or '(same text)'}")
    return "\n".join(lines)
