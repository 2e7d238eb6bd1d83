from __future__ import annotations

from ingest.chunk import chunk_blocks
from ingest.parse.model import Block


def test_spans_say_where_in_a_chunk_each_clause_and_page_begins() -> None:
    blocks = [Block("5 Общие требования", 3, "title"), Block("5.1 Первый пункт " + "слово " * 40, 3),
              Block("5.2 Второй пункт " + "текст " * 30, 4), Block("продолжение на странице пять", 5)]
    for chunk in chunk_blocks(blocks, 2000, 100):
        assert chunk.spans[0][0] == 0 and (chunk.spans[0][1], chunk.spans[0][2]) == (chunk.page, chunk.clause)
        for (offset, _, clause), (_, _, before) in zip(chunk.spans[1:], chunk.spans, strict=False):
            if clause != before:
                assert clause is not None and chunk.text[offset:].startswith(clause)
        assert [(p, c) for _, p, c in chunk.spans] == [(3, "5"), (3, "5.1"), (4, "5.2"), (5, "5.2")]


def test_a_chunk_continued_from_the_previous_one_starts_in_the_clause_it_carries() -> None:
    blocks = [Block("7.1 Пункт " + "длинный текст " * 200, 9), Block("7.2 Следующий пункт", 10)]
    chunks = chunk_blocks(blocks, 600, 100)
    assert len(chunks) > 2
    for chunk in chunks[1:-1]:
        assert chunk.spans[0] == (0, 9, "7.1")
    assert chunks[-1].spans[-1][2] == "7.2" and chunks[-1].text[chunks[-1].spans[-1][0]:].startswith("7.2")
