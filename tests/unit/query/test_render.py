"""How the CLI cites a chunk: clause, pages, sheet."""

from __future__ import annotations

from service.query.models import ChunkResult
from service.render import place


def chunk(**fields) -> ChunkResult:
    return ChunkResult(chunk_id="a:1", chunk_index=1, text="t", relevance_score=1.0, **fields)


def test_a_chunk_is_cited_by_clause_and_pages():
    assert place(chunk(page_number=12, page_end=13, clause="5.2.3")) == "п. 5.2.3, с. 12–13"
    assert place(chunk(page_number=40, clause="Приложение Б")) == "Приложение Б, с. 40"
    assert place(chunk(page_number=2, page_label="Смета")) == "с. 2, «Смета»"
