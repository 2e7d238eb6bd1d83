"""How the CLI cites a chunk: clause, pages, sheet."""

from __future__ import annotations

from typing import Any

from service.search.answer.models import (
    ChunkResult,
    DocumentResult,
    Edition,
    Facets,
    Pagination,
    SearchMeta,
    SearchResponse,
    Suggestions,
    Timings,
)
from service.search.answer.render import place, render_markdown, render_text


def chunk(**fields: Any) -> ChunkResult:
    return ChunkResult(chunk_id="a:1", chunk_index=1, text="t", relevance_score=1.0, **fields)


def test_a_chunk_is_cited_by_clause_and_pages() -> None:
    assert place(chunk(page_number=12, page_end=13, clause="5.2.3")) == "п. 5.2.3, с. 12–13"
    assert place(chunk(page_number=40, clause="Приложение Б")) == "Приложение Б, с. 40"
    assert place(chunk(page_number=2, page_label="Смета")) == "с. 2, «Смета»"


def test_a_replaced_edition_says_which_replaces_it_in_text_and_markdown() -> None:
    doc = DocumentResult(id="a", title="СП 134.13330.2012 Системы электросвязи", file_path="/x.txt", file_type="txt",
                         relevance_score=1.0, superseded_by=Edition(id="b", designation="СП 134.13330.2022"))
    meta = SearchMeta(query="q", total_results=1, route_used="bm25", timings=Timings(), facets=Facets(),
                      suggestions=Suggestions(), pagination=Pagination(page=1, limit=10, total_pages=1, has_more=False))
    response = SearchResponse(results=[doc], meta=meta)
    assert "заменён: СП 134.13330.2022" in render_text(response)
    assert "Заменён: СП 134.13330.2022" in render_markdown(response)


def test_a_passages_table_rows_stay_under_it_in_text_and_markdown() -> None:
    rows = chunk(clause="Таблица 1", page_number=3).model_copy(update={"text": "Таблица 1 — Размеры\n6 1 10\n8 2 13"})
    doc = DocumentResult(id="a", title="ГОСТ 1", file_path="/x.txt", file_type="txt", relevance_score=1.0,
                         context_chunks=[rows])
    meta = SearchMeta(query="q", total_results=1, route_used="bm25", timings=Timings(), facets=Facets(),
                      suggestions=Suggestions(), pagination=Pagination(page=1, limit=10, total_pages=1, has_more=False))
    response = SearchResponse(results=[doc], meta=meta)
    assert "Таблица 1 — Размеры\n     6 1 10\n     8 2 13" in render_text(response)
    assert "Таблица 1 — Размеры\n> 6 1 10\n> 8 2 13" in render_markdown(response)
