from __future__ import annotations

from pathlib import Path

import pytest

from ingest.chunk import chunk_blocks, tail_at_word
from ingest.parse import repair
from ingest.parse.model import Block
from ingest.parse.office import html_table_text
from ingest.parse.plain import parse_plain
from ingest.parse.repair import DocumentWords, join_broken_words
from ingest.parse.text import clean_text, looks_like_heading, merge_broken_blocks, page_blocks, strip_running_lines


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("5.2 Требования к бетону", True),
        ("1 Область применения", True),
        ("Приложение А Термины", True),
        ("ОБЩИЕ ПОЛОЖЕНИЯ", True),
        ("5.2 Бетон должен иметь прочность не ниже класса В25.", False),
        ("Обычное предложение без номера", False),
        ("4 Приказом Федерального агентства по техническому регулированию и метрологии от 30 ноября", False),
    ],
)
def test_looks_like_heading(line: str, heading: bool) -> None:
    assert looks_like_heading(line) is heading


def test_clean_text_joins_soft_hyphenated_words_and_dot_leaders() -> None:
    assert clean_text("стандар\ufffe\nтизации") == "стандартизации"
    assert clean_text("Раздел 1 . . . . . . 5") == "Раздел 1 … 5"


def test_a_compound_broken_at_a_line_end_joins_where_the_document_writes_it_whole() -> None:
    broken = "установку проти- \nвооткольной сетки"
    assert "проти-вооткольной" in clean_text(broken)  # the dictionary does not know the compound: alone, it stays
    words = DocumentWords([broken, "армирование противооткольной сеткой"])
    assert clean_text(broken, words) == "установку противооткольной сетки"


def test_two_dictionary_words_keep_their_hyphen_and_a_word_the_document_never_writes_stays_broken() -> None:
    pages = ["профиль лист-\nметалл", "листметалл по ГОСТ", "сетка проти-\nвооткольная"]
    words = DocumentWords(pages)
    assert clean_text(pages[0], words) == "профиль лист-металл"  # two words: the hyphen may be its own
    assert clean_text(pages[2], words) == "сетка проти-вооткольная"  # «противооткольная» is nowhere whole


@pytest.mark.parametrize(("text", "whole"), [
    ("сетка противооткольная.", True), ("(Противооткольная)", True), ("ПРОТИВООТКОЛЬНАЯ", True),
    ("противоёмкость", False), ("непротивооткольная сетка", False), ("противооткольнаяя", False), ("", False),
])
def test_a_word_counts_as_written_only_with_no_letter_either_side(text: str, whole: bool) -> None:
    assert DocumentWords([text]).writes("противооткольная") is whole


def test_ye_and_e_are_one_letter_to_the_document_witness() -> None:
    assert DocumentWords(["трёхслойной панели"]).writes("ТРЕХСЛОЙНОЙ")


@pytest.mark.parametrize(("text", "cleaned"), [
    ("испытаний в ис-\nпы-\nта-\nний", "испытаний в испытаний"),  # a narrow column: the whole is a word
    ("обо-\nзначе-\nние", "обозначение"),  # «значение» first, then «обозначение»
    ("забив-\nсжимаю-\nвыдерги", "забив-сжимаю-выдерги"),  # three column headers, not one word
])
def test_a_word_a_narrow_column_breaks_at_several_line_ends(text: str, cleaned: str) -> None:
    assert clean_text(text, DocumentWords([text])) == cleaned


def test_a_hostile_run_of_breaks_is_read_a_few_pieces_at_a_time() -> None:
    """Bounded work: a match holds at most eight pieces of a word, and a run of line breaks is read from its first
    break (the pattern never tries every split of it), so thousands of either cost linear time."""
    chain = "а-\n" * 5_000 + "б"
    assert max(len(repair._BREAK_RE.split(m[0])) for m in repair._HYPHEN_BREAK_RE.finditer(chain)) == 8
    assert join_broken_words("слово-" + "\n" * 50_000 + "1").startswith("слово-")


def test_a_document_of_many_breaks_is_read_for_its_words_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The witness is linear in the document: thousands of breaks the dictionary leaves, one read of its text."""
    reads: list[str] = []
    pattern = repair._LETTER_RUN_RE

    class Counting:
        def findall(self, text: str) -> list[str]:
            reads.append(text)
            return pattern.findall(text)

    monkeypatch.setattr(repair, "_LETTER_RUN_RE", Counting())
    pages = [" ".join(f"аб{n:c}-\nвг{n:c}" for n in range(0x430, 0x44f)) for _ in range(100)]
    words = DocumentWords(pages)
    cleaned = [clean_text(page, words) for page in pages]
    assert len(reads) == 1
    assert "абв-вгв" in cleaned[0]  # «абввгв» is not written whole: the break keeps its hyphen


def test_paragraphs_a_compound_is_broken_across_join_where_the_document_writes_it_whole() -> None:
    """DOCX exported from a typeset page: «проти-» ends a paragraph, «вооткольной …» opens the next."""
    blocks = [Block("10.4 Следует предусматривать установку проти-", 3), Block("вооткольной сетки.", 3),
              Block("9.16 Армирование противооткольной сеткой.", 4)]
    assert [b.text for b in merge_broken_blocks(blocks)] == [
        "10.4 Следует предусматривать установку противооткольной сетки.", "9.16 Армирование противооткольной сеткой."]
    alone = merge_broken_blocks(blocks[:2])  # nowhere whole, unknown to the dictionary: the hyphen stays
    assert [b.text for b in alone] == ["10.4 Следует предусматривать установку проти-вооткольной сетки."]


def test_a_text_file_finds_a_compound_by_the_spelling_its_other_pages_use(tmp_path: Path) -> None:
    path = tmp_path / "sp.txt"
    path.write_text("10.4 При толщине защитного слоя более 40 мм - установка проти- \nвооткольной сетки.\f"
                    "9.16 Армирование защитного слоя противооткольной сеткой.\n", encoding="utf-8")
    texts = [block.text for block in parse_plain(path).blocks]
    assert sum(text.count("противооткольной") for text in texts) == 2, texts


def test_running_headers_are_removed() -> None:
    words = ["бетон", "арматура", "сварка", "кровля", "фасад", "фундамент", "окна", "лестница"]
    pages = [f"ГОСТ 27772—2021\nраздел про {w}\nтекст о том, что {w} важен\nещё о {w}\n{i}"
             for i, w in enumerate(words, 1)]
    cleaned = strip_running_lines(pages)
    assert all("ГОСТ 27772" not in p for p in cleaned)
    assert all(f"раздел про {w}" in p and f"ещё о {w}" in p for w, p in zip(words, cleaned, strict=True))


def test_page_blocks_mark_headings() -> None:
    blocks = page_blocks("1 Область применения\nНастоящий стандарт\nраспространяется на прокат.", 3)
    assert [(b.kind, b.page) for b in blocks] == [("title", 3), ("text", 3)]
    assert blocks[1].text == "Настоящий стандарт распространяется на прокат."


def test_table_html_becomes_rows() -> None:
    html = "<table><tr><th>Марка</th><th>Класс</th></tr><tr><td>М350</td><td>В25</td></tr><tr><td></td></tr></table>"
    assert html_table_text(html) == "Марка | Класс\nМ350 | В25"


def test_chunks_fill_across_pages_and_start_at_headings_once_half_full() -> None:
    blocks = [Block("1 Общие положения", 1, "title"), Block("текст один. " * 30, 1),
              Block("продолжение на второй странице", 2), Block("2 Требования", 2, "title"), Block("требование", 2)]
    chunks = chunk_blocks(blocks, size=200, overlap=40)
    assert all(len(c.text) <= 200 + 40 + 1 for c in chunks)
    assert "\n2 Требования\n" in chunks[-1].text  # the heading joins a chunk that is not half full
    assert chunks[-1].clauses == ("1", "2") and chunks[0].clause == "1"
    assert chunks[0].section_title == "1 Общие положения"
    spanning = [c for c in chunks if c.page_end != c.page]
    assert spanning and all((c.page, c.page_end) == (1, 2) for c in spanning)
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_short_clauses_share_a_chunk_and_each_chunk_knows_its_clauses() -> None:
    blocks = [Block("5.2.1 Первое требование к стенам.", 3), Block("5.2.2 Второе требование.", 3),
              Block("5.2.3 Третье требование " + "к перекрытиям " * 40, 4), Block("Приложение Б (справочное)", 9,
                                                                                  "title"),
              Block("Таблица 4 — Значения", 9)]
    chunks = chunk_blocks(blocks, size=400, overlap=50)
    assert chunks[0].clauses[:3] == ("5.2.1", "5.2.2", "5.2.3") and chunks[0].clause == "5.2.1"
    assert chunks[1].clause == "5.2.3"  # continues the clause it starts in
    assert chunks[-1].clause == "Приложение Б" and chunks[-1].clauses == ("Приложение Б", "Таблица 4")


def test_overlap_carries_the_tail_of_a_full_chunk() -> None:
    chunks = chunk_blocks([Block("слово " * 100, 1)], size=200, overlap=50)
    assert len(chunks) > 1
    tail = tail_at_word(chunks[0].text, 50)
    assert chunks[1].text.startswith(tail)


def test_chunks_cut_at_spaces() -> None:
    chunks = chunk_blocks([Block("абв " * 100, 1)], 50, 0)
    assert all(len(c.text) <= 50 for c in chunks) and all(not c.text.endswith("аб") for c in chunks)


UNRULED = ("5.1 Размеры роликов указаны в таблице 1.\nТаблица 1 - Размеры цилиндрических роликов и масса роликов\n"
           "Размеры в миллиметрах\nD w Z-W s min s max\nМасса 1000 шт., кг\n3 3 0,1 0,4 0,16\n6 10 0,2 0,5 2,20\n"
           "6 12 0,2 0,5 2,64\nПримечание - Масса рассчитана для стали.")


def test_rows_of_numbers_stay_lines_of_a_table_led_by_their_column_headers() -> None:
    blocks = page_blocks(UNRULED, 7)
    kinds = [(b.kind, b.text) for b in blocks]
    assert kinds == [("text", "5.1 Размеры роликов указаны в таблице 1."),
                     ("text", "Таблица 1 - Размеры цилиндрических роликов и масса роликов"),
                     ("table", "Размеры в миллиметрах D w Z-W s min s max Масса 1000 шт., кг\n3 3 0,1 0,4 0,16\n"
                               "6 10 0,2 0,5 2,20\n6 12 0,2 0,5 2,64"),
                     ("text", "Примечание - Масса рассчитана для стали.")]
    [chunk] = chunk_blocks(blocks, 1000, 0)
    assert "\n6 10 0,2 0,5 2,20\n" in chunk.text  # a row is a line (a unit) of its own in the chunk


@pytest.mark.parametrize("line", ["5.2.1 Ширина марша не менее 1,05 м", "Пункты 4, 5 и 6", "2020", "1 2",
                                  "Таблица 3 — Значения 1, 2, 3 для расчёта"])
def test_prose_with_numbers_is_not_a_row(line: str) -> None:
    assert all(b.kind != "table" for b in page_blocks(line, 1))


def test_a_clause_number_on_a_line_of_its_own_opens_its_clause() -> None:
    page = ("допускаются системы индивидуального теплоснабжения.\n9.2.5\nДлину каждого отопительного прибора "
            "следует определять\nиз расчёта не менее 75 %.\n2.5\n3,5\n")
    texts = [b.text for b in page_blocks(page, 1)]
    assert any(t.startswith("9.2.5 Длину каждого") for t in texts)
    assert not any(t.startswith("2.5") for t in texts)  # a lone number before another number is a cell
    column = "Наименование показателя Номер пункта\n7.3\nОтклонение длины (высоты), ширины\n4.7\n7.2\nРазность\n4.8\n"
    assert not any(b.text.startswith(("7.3", "7.2")) for b in page_blocks(column, 1))  # a table's column


def test_a_clause_number_opening_many_pages_is_not_a_running_header() -> None:
    pages = [f"{n}.1.{n}\nТекст пункта {n} о требованиях.\nЕще строка.\nИ еще одна строка.\n{n}" for n in range(1, 9)]
    kept = strip_running_lines(pages)
    assert all(f"{n}.1.{n}" in text for n, text in enumerate(kept, 1))
    assert not any(text.rstrip().endswith(f"\n{n}") for n, text in enumerate(kept, 1))  # page numbers still go
