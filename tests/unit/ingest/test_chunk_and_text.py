from __future__ import annotations

import pytest

from ingest.chunk import chunk_blocks, split_long, tail_at_word
from ingest.parse.model import Block
from ingest.parse.office import html_table_text
from ingest.parse.text import clean_text, looks_like_heading, page_blocks, strip_running_lines


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
def test_looks_like_heading(line, heading):
    assert looks_like_heading(line) is heading


def test_clean_text_joins_soft_hyphenated_words_and_dot_leaders():
    assert clean_text("стандар\ufffe\nтизации") == "стандартизации"
    assert clean_text("Раздел 1 . . . . . . 5") == "Раздел 1 … 5"


def test_running_headers_are_removed():
    words = ["бетон", "арматура", "сварка", "кровля", "фасад", "фундамент", "окна", "лестница"]
    pages = [f"ГОСТ 27772—2021\nраздел про {w}\nтекст о том, что {w} важен\nещё о {w}\n{i}"
             for i, w in enumerate(words, 1)]
    cleaned = strip_running_lines(pages)
    assert all("ГОСТ 27772" not in p for p in cleaned)
    assert all(f"раздел про {w}" in p and f"ещё о {w}" in p for w, p in zip(words, cleaned, strict=True))


def test_page_blocks_mark_headings():
    blocks = page_blocks("1 Область применения\nНастоящий стандарт\nраспространяется на прокат.", 3)
    assert [(b.kind, b.page) for b in blocks] == [("title", 3), ("text", 3)]
    assert blocks[1].text == "Настоящий стандарт распространяется на прокат."


def test_table_html_becomes_rows():
    html = "<table><tr><th>Марка</th><th>Класс</th></tr><tr><td>М350</td><td>В25</td></tr><tr><td></td></tr></table>"
    assert html_table_text(html) == "Марка | Класс\nМ350 | В25"


def test_chunks_stay_within_pages_and_sections():
    blocks = [Block("1 Общие положения", 1, "title"), Block("текст один. " * 30, 1),
              Block("продолжение на второй странице", 2), Block("2 Требования", 2, "title"), Block("требование", 2)]
    chunks = chunk_blocks(blocks, size=200, overlap=40)
    assert {c.page for c in chunks} == {1, 2}
    assert all(len(c.text) <= 200 + 40 + 1 for c in chunks)
    assert chunks[-1].section_title == "2 Требования" and chunks[-1].text.startswith("2 Требования")
    assert chunks[0].section_title == "1 Общие положения"
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_overlap_carries_the_tail_of_a_full_chunk():
    chunks = chunk_blocks([Block("слово " * 100, 1)], size=200, overlap=50)
    assert len(chunks) > 1
    tail = tail_at_word(chunks[0].text, 50)
    assert chunks[1].text.startswith(tail)


def test_split_long_cuts_at_spaces():
    pieces = split_long("абв " * 100, 50)
    assert all(len(p) <= 50 for p in pieces) and all(not p.endswith("аб") for p in pieces)
