"""Ruled PDF tables as rows under one header (pure logic of ingest/parse/tables.py), and how a passage opening
inside a table shows its header (service/search/answer/passages.py)."""

from __future__ import annotations

from ingest.parse.tables import flat_header, header_rows, read_table, table_lines
from service.search.answer.passages import Span, choose_passage, term_weights, unmark
from service.search.answer.text import passage_text, table_header

# pdfplumber's rows of a two-level header: None is a cell covered by a merged one
TWO_LEVEL: list[list[str | None]] = [
    ["Величина", None, "Наименование\nединицы", "Обозначение единицы", None],
    ["Наименование", "Обозначение\nразмерности", None, "между\u00ad\nнародное", "русское"],
    ["Площадь", "L2", "квадратный метр", "m2", "м2"],
    ["Скорость", "LT-1", "метр в секунду", "m s-1", "м с-1"],
]


def test_a_two_level_header_is_flattened_into_one_row_naming_every_column() -> None:
    assert header_rows(TWO_LEVEL) == 2
    assert flat_header(TWO_LEVEL[:2]) == ["Величина: Наименование", "Величина: Обозначение размерности",
                                          "Наименование единицы", "Обозначение единицы: международное",
                                          "Обозначение единицы: русское"]
    assert table_lines(TWO_LEVEL)[1][1:] == ["Площадь | L2 | квадратный метр | m2 | м2",
                                          "Скорость | LT-1 | метр в секунду | m s-1 | м с-1"]


def test_numbers_under_a_merged_first_cell_head_their_columns() -> None:
    rows: list[list[str | None]] = [["Показатель", "Значение при мощности, кВт", None], [None, "18", "25"],
                                    ["Колея, мм", "1090", "1340"]]
    assert table_lines(rows)[1] == ["Показатель | Значение при мощности, кВт: 18 | Значение при мощности, кВт: 25",
                                 "Колея, мм | 1090 | 1340"]


def test_a_title_row_over_the_whole_table_is_its_caption_not_a_header() -> None:
    rows: list[list[str | None]] = [["", "Таблица 6 Размеры в мм", None, None], ["Обозначение", "d", "D", "b"],
                                    ["М-10", "10", "22", "7"], ["М-12", "12", "24", "7"]]
    assert table_lines(rows) == ("Таблица 6 Размеры в мм", ["Обозначение | d | D | b", "М-10 | 10 | 22 | 7",
                                                            "М-12 | 12 | 24 | 7"])


def test_cells_read_reversed_are_not_a_table() -> None:
    header = ["Диаметр цилиндра", "Предельное отклонение", "Применяемость", "Справочная масса"]
    rows: list[list[str | None]] = [[f"{i}0", "±0,1", "1", "2"] for i in range(1, 5)]
    reversed_cells: list[list[str | None]] = [[text[::-1] for text in header], *rows] * 2
    assert read_table(reversed_cells) is None


def test_one_column_or_paragraphs_in_frames_are_not_tables() -> None:
    column: list[list[str | None]] = [["Д.3.2 Термостат для выдержки образцов"], ["Д.3.3 Толщиномер ТР-10"]]
    assert read_table(column) is None
    paragraph = "Помещают образцы между пластинами струбцины и затягивают болты до соприкосновения. " * 3
    assert read_table([["Д.4.2 " + paragraph, "Д.4.3 " + paragraph], ["Д.5.1 " + paragraph,
                                                                      "Д.5.2 " + paragraph]]) is None
    assert read_table(TWO_LEVEL) is not None


TABLE = ("Таблица 2 — Единицы\nВеличина | Обозначение единицы\nПлощадь | м2\nОбъем | м3\n"
         + "\n".join(f"Величина {i} | ед{i}" for i in range(40)) + "\nУдельный объем | м3/кг\nТекст после\nтаблицы.")


def test_a_passage_opening_inside_a_table_shows_the_header_row_first() -> None:
    row = TABLE.index("Удельный объем")
    span = table_header(TABLE, row)
    assert span is not None and TABLE[span[0]:span[1]] == "Величина | Обозначение единицы"
    assert table_header(TABLE, TABLE.index("Величина | Обозначение")) is None  # it starts with the header
    assert table_header(TABLE, TABLE.index("Текст после")) is None
    chunk = unmark(TABLE.replace("Удельный объем", "\ue000Удельный\ue001 \ue000объем\ue001")
                   .replace("Обозначение единицы", "\ue000Обозначение\ue001 \ue000единицы\ue001"))
    passage = choose_passage(chunk, [Span(0, 1, "Таблица 2")], term_weights([chunk]), 200)
    lines = passage.text.split("\n")
    assert lines[0] == "Величина | Обозначение единицы" and "Удельный объем | м3/кг" in lines


def test_table_rows_stay_one_to_a_line_and_wrapped_prose_joins() -> None:
    assert passage_text("Текст до\nпереноса.\nА | Б\n1 | 2\nПосле") == "Текст до переноса.\nА | Б\n1 | 2\nПосле"


def test_rows_of_numbers_stay_one_to_a_line_under_their_joined_caption_and_header() -> None:
    raw = "Таблица 1 — Размеры, мм\nДиаметр d Шаг P\nРазмер S\n6 1 10\n8 1,25 13\nПосле таблицы\nтекст."
    shown = "Таблица 1 — Размеры, мм Диаметр d Шаг P Размер S\n6 1 10\n8 1,25 13\nПосле таблицы текст."
    assert passage_text(raw) == shown
