from __future__ import annotations

from ingest.chunk import chunk_blocks
from ingest.parse.model import Block
from ingest.parse.text import clean_text, page_blocks, page_role

CONTENTS = """ГОСТ 111—2014
Содержание
1 Область применения........................................ 1
2 Нормативные ссылки........................................ 1
3 Термины и определения.....................................2
4 Классификация, основные параметры и размеры .............. 2"""

COVER = """МЕЖГОСУДАРСТВЕННЫЙ СТАНДАРТ
ГОСТ
25809
2019
СМЕСИТЕЛИ И КРАНЫ ВОДОРАЗБОРНЫЕ
Типы и основные размеры
Издание официальное
Москва
Стандартинформ
2019"""

IMPRINT = """Редактор Г.Н. Симонова
Сдано в набор 07.12.2021. Подписано в печать 28.12.2021. Формат 60х84 1/8. Гарнитура Ариал.
Усл. печ. л. 0,93. Уч-изд. л. 0,74."""

FIRST_PAGE = """СТЕКЛО ЛИСТОВОЕ БЕСЦВЕТНОЕ
Технические условия
Дата введения — 2016—04—01
1 Область применения
Настоящий стандарт распространяется на бесцветное листовое стекло.
Издание официальное"""


def test_contents_cover_and_imprint_pages_are_recognised_and_content_is_not() -> None:
    assert page_role(clean_text(CONTENTS)) == "contents"
    assert page_role(clean_text(COVER)) == "imprint"
    assert page_role(clean_text(IMPRINT)) == "imprint"
    assert page_role(clean_text(FIRST_PAGE)) is None  # the first page of a standard carries the banner too
    assert page_role(clean_text("5.1 Толщина защитного слоя … не менее 20 мм.\nПримечание.")) is None


def test_a_long_page_with_the_banner_is_content() -> None:
    assert page_role(clean_text("Издание официальное\n" + "Текст требований к бетону. " * 60)) is None


def test_every_block_of_a_contents_page_carries_its_role_and_starts_its_own_chunk() -> None:
    blocks = page_blocks(CONTENTS,
                         3) + page_blocks("1 Область применения\nНастоящий стандарт распространяется на стекло.", 4)
    assert {b.role for b in blocks if b.page == 3} == {"contents"} and {b.role for b in blocks if b.page == 4} == {None}
    chunks = chunk_blocks(blocks, size=2000, overlap=100)
    assert [c.role for c in chunks] == ["contents", None]
    assert "Настоящий стандарт" in chunks[1].text and "Настоящий стандарт" not in chunks[0].text


def test_a_contents_page_never_sets_the_clause_or_heading_of_the_body_after_it() -> None:
    blocks = [
        Block("Содержание", 3, "title", role="contents"),
        Block("Приложение Г (обязательное) Схема условных обозначений", 3, "title", role="contents"),
        Block("Поправка к ГОСТ 27772—2021: таблица согласования дополнена.", 4),
        Block("1 Область применения", 5, "title"),
        Block("Настоящий стандарт распространяется на прокат.", 5),
    ]
    # the correction sheet and the scope are sections of their own kinds: each starts a chunk
    _, correction, scope = chunk_blocks(blocks)
    assert correction.section_title is None and (correction.kind, scope.kind) == ("correction", "scope")
    assert [(page, clause) for _, page, clause in correction.spans] == [(4, None)]
    assert [(page, clause) for _, page, clause in scope.spans] == [(5, "1")]
