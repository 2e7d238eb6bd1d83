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


def test_an_article_of_a_law_is_a_clause_and_its_numbered_parts_stay_in_it() -> None:
    blocks = [Block("Статья 89. Требования к эвакуационным путям", 12)]
    blocks += [Block(f"{n}. Часть статьи о путях эвакуации " + "текст " * 10, 12) for n in range(1, 15)]
    chunk = chunk_blocks(blocks, 5000, 100)[0]
    assert chunk.clause == "Статья 89" and {c for _, _, c in chunk.spans} == {"Статья 89"}


def test_flat_numbered_paragraphs_are_clauses_where_the_document_numbers_so() -> None:
    order = [Block(f"{n}. При работе конвейера номер {n} " + "слово " * 30, 1 + n // 10) for n in range(1190, 1202)]
    chunks = chunk_blocks(order, 1500, 100)
    clauses = [c for chunk in chunks for _, _, c in chunk.spans]
    assert "1197" in clauses and chunks[0].clause == "1190"
    for chunk in chunks:
        for offset, _, clause in chunk.spans:
            assert clause is not None and (offset == 0 or chunk.text[offset:].startswith(f"{clause}. "))


def test_a_numbered_list_inside_the_clauses_of_a_code_stays_in_its_clause() -> None:
    code = [Block(f"5.{n} Пункт свода правил " + "текст " * 10, 3) for n in range(1, 12)]
    code += [Block("1. Первый элемент перечня.", 3), Block("2. Второй элемент перечня.", 3)]
    chunks = chunk_blocks(code, 5000, 100)
    assert [c for _, _, c in chunks[-1].spans][-1] == "5.11"


def test_an_overlap_that_crosses_a_page_break_keeps_its_first_lines_on_their_own_page() -> None:
    """The carried tail of a chunk ending on page 27 can start on page 26: a passage quoting it cites 26."""
    blocks = [Block("4.3 Шарнирная опора " + "поворот образца в плоскости изгиба " * 20, 26),
              Block("Подвижная опора " + "смещение образца " * 120, 27)]
    chunks = chunk_blocks(blocks, 900, 250)
    crossing = next(c for c in chunks[1:] if len(c.spans) > 1)
    first, second = crossing.spans[0], crossing.spans[1]
    assert (first[0], first[1], first[2]) == (0, 26, "4.3") and crossing.page == 26
    assert second[1] == 27 and crossing.text[second[0]:].startswith("Подвижная опора")
    assert crossing.text[:second[0]].strip().endswith("изгиба")


def test_a_long_table_is_cut_between_rows_each_piece_led_by_its_header_and_labelled_by_its_number() -> None:
    header = "Обозначение | Диаметр, мм | Масса, кг"
    rows = [header] + [f"Ш-{i} | {10 + i} | {i * 0.37:.2f}" for i in range(200)]
    blocks = [Block("5.1 Текст перед таблицей. " * 30, 1), Block("Таблица 3 — Размеры шариков", 1, "title"),
              Block("\n".join(rows), 1, "table"), Block("После таблицы.", 2)]
    chunks = chunk_blocks(blocks, 2000, 250)
    tables = [c for c in chunks if "Ш-" in c.text]
    assert len(tables) >= 3 and all(c.clause == "Таблица 3" for c in tables)
    assert tables[0].text.startswith("Таблица 3 — Размеры шариков\n" + header)  # the caption goes with its rows
    assert all(c.text.startswith(header) for c in tables[1:])
    # every row whole, in one chunk
    for i in range(200):
        assert sum(f"Ш-{i} | {10 + i} |" in c.text for c in chunks) == 1
    assert "Таблица 3" not in chunks[0].clauses
