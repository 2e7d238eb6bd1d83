"""Section kinds at ingest and page furniture left out of the text."""

from __future__ import annotations

import pytest

from ingest.chunk import chunk_blocks
from ingest.parse.model import Block
from ingest.parse.text import is_page_mark, strip_running_lines
from ingest.sections import heading_kind, next_kind
from service.search.dsl.sections import ASIDE, aside_for


@pytest.mark.parametrize(("text", "kind"), [
    ("2 Нормативные ссылки", "references"),
    ("Предисловие", "foreword"),
    ("Введение", "foreword"),
    ("4 ВВЕДЕН ВПЕРВЫЕ", "foreword"),
    ("1 РАЗРАБОТАН Акционерным обществом «НИЦ «Строительство» " + "и другими " * 20, "foreword"),
    ("3 Термины и определения", "terms"),
    ("1 Область применения", "scope"),
    ("4 Обозначения и сокращения", "abbreviations"),
    ("Основные буквенные обозначения величин", "abbreviations"),
    ("Приложение А (справочное) Основные буквенные обозначения величин", "abbreviations"),
    ("(справочное) Основные буквенные обозначения", "abbreviations"),
    ("Приложение Б (обязательное) Термины и определения", "terms"),
    ("Приложение В (обязательное) Расчет пожарного риска", None),
    ("Библиография", "bibliography"),
    ("Поправка к ГОСТ 31996-2012 Кабели силовые", "correction"),
    ("Изменение № 1 к СП 1.13130.2020", "amendment"),
    ("5.2 Разработан проект организации строительства", None),
    ("Введение в эксплуатацию системы допускается после проверки", None),
    ("4 Общие положения", None),
    ("Содержание\n1 Область применения … 1\n2 Нормативные ссылки … 2", "contents"),
])
def test_heading_kind(text: str, kind: str | None) -> None:
    assert heading_kind(text) == kind


def test_a_long_paragraph_opening_with_a_heading_word_is_no_heading() -> None:
    assert heading_kind("Сокращения " + "слово " * 40, heading=False) is None
    assert heading_kind("Сокращения", heading=False) == "abbreviations"
    # a numbered heading run into its first paragraph still opens its section
    assert heading_kind("1 Область применения 1.1 Настоящий свод правил " + "слово " * 40, heading=False) == "scope"


def test_an_annex_of_symbols_run_into_its_list_is_abbreviations_not_requirements() -> None:
    block = ("Приложение А (справочное) Основные буквенные обозначения величин Усилия, коэффициенты работы от внешних "
             "нагрузок и воздействий Ys - коэффициент условия работы анкера; Yi коэффициент условий работы пояса")
    kind, number = next_kind(None, None, block, False)
    assert kind == "abbreviations"
    # its list runs over pages whose numbers an OCR layer reads as a clause («1 0 6»): the kind holds
    assert next_kind(kind, number, "1 0 6 температурных воздействий и усадки бетона", False) == (kind, number)
    assert next_kind(kind, number, "Приложение Б (обязательное) Расчет упоров", True) == ("annex", None)
    # the next appendix ends it even run into its first paragraph (a long block, not a heading)
    assert next_kind(kind, number, "Приложение Б (обязательное) Расчет упоров " + "слово " * 40, False) == \
        ("annex", None)
    # the title on a line of its own after «Приложение А» holds the same way
    kind, number = next_kind("annex", None, "Основные буквенные обозначения", True)
    assert next_kind(kind, number, "5.1 Rb - расчетное сопротивление бетона", False) == ("abbreviations", number)
    # outside an annex a numbered clause after a list of abbreviations is a requirement again
    assert next_kind("abbreviations", "4", "5.1 Ригели следует проектировать", False) == (None, None)


def test_an_annex_of_worked_examples_is_an_example_to_the_next_appendix() -> None:
    block = ("Приложение Ж (справочное) Пример расчета реверсивной системы струйной вентиляции Ж.1 Исходные данные: "
             "автостоянка высотой 3 м, площадь 2400 м2 " + "слово " * 30)
    kind, number = next_kind("annex", None, block, False)
    assert kind == "example"
    # its steps are numbered and state values: the kind holds through them, to the next appendix
    assert next_kind(kind, number, "2 Температура газов 400 °С, время работы не менее 2 ч", False) == (kind, number)
    assert next_kind(kind, number, "Приложение И (обязательное) Методика испытаний", True) == ("annex", None)
    # the title on a line of its own after «Приложение Ж (справочное)»
    assert next_kind("annex", None, "Примеры конструктивных решений", True)[0] == "example"


def test_a_colophon_or_an_amendment_sheet_after_an_annex_of_examples_ends_it() -> None:
    # ГОСТ 25192-2012: the sheet of its Change № 1 follows the annex of examples, and restates clause 2.11
    kind, number = next_kind("annex", None, "Примеры уточняющих наименований типов (видов) бетонов", True)
    assert next_kind(kind, number, "УДК 691.32:620.17:006.354 МКС 91.100.30 Ключевые слова: бетоны", False) == \
        (None, None)  # the colophon after its last annex ends it, and what follows is no example's
    sheet = "Изменение № 1 ГОСТ 25192— 2012 Бетоны. Классификация и общие технические требования"
    kind, number = next_kind(kind, number, sheet, False)
    assert kind == "amendment"
    assert next_kind(kind, number, "2.11 По морозостойкости бетоны подразделяют на бетоны:", False) == (None, None)
    assert next_kind(None, None, "Изменение № 3 к СП 118.13330.2022 «СНиП 31-06-2009»", True)[0] == "amendment"


def test_an_example_in_a_clauses_own_text_is_that_clauses() -> None:
    assert next_kind(None, "5.2", "Пример условного обозначения кирпича: КР-р-по 250x120x65", True) == (None, "5.2")
    assert next_kind("references", "2", "Пример — ГОСТ 530-2012", True) == ("references", "2")


def test_a_foreword_item_number_holds_no_section() -> None:
    kind, number = next_kind("foreword", None, "1 ИСПОЛНИТЕЛИ - ЗАО «ИСЗС-Консалт»", False)
    assert (kind, number) == ("foreword", None)
    assert next_kind(kind, number, "1.2 Настоящий свод правил не распространяется на котельные", False) == \
        (None, None)


def test_a_kind_holds_until_the_next_top_level_section() -> None:
    assert next_kind(None, None, "2 Нормативные ссылки", True) == ("references", "2")
    assert next_kind("references", "2", "ГОСТ 12.1.004-91 Система стандартов безопасности", False) == \
        ("references", "2")
    assert next_kind("terms", "3", "3.1 ригель: Горизонтальный элемент", False) == ("terms", "3")
    assert next_kind("terms", "3", "4.1 Ригели следует проектировать", False) == (None, None)
    assert next_kind("abbreviations", "3.2", "3.20 Ригели следует проектировать", False) == (None, None)
    assert next_kind("foreword", None, "Приложение А (обязательное)", True) == ("annex", None)
    assert next_kind("foreword", None, "Содержание\n1 Область применения … 1", False) == ("contents", None)
    assert next_kind("contents", None, "5 Требования … 12", False) == ("contents", None)


def test_chunks_carry_the_kind_in_effect_where_they_start() -> None:
    blocks = [Block("Предисловие", 1, "title"), Block("Цели и принципы стандартизации установлены " * 5, 1),
              Block("4 ВВЕДЕН ВПЕРВЫЕ", 1),
              Block("1 Область применения", 2, "title"), Block("Настоящий стандарт распространяется " * 5, 2),
              Block("2 Нормативные ссылки", 2, "title"), Block("ГОСТ 10180 Бетоны. Методы " * 5, 2),
              Block("5 Требования", 3, "title"), Block("5.1 Ширина выхода должна быть не менее 1,2 м. " * 5, 3),
              Block("Приложение А", 4, "title"), Block("Таблица А.1 " * 20, 4)]
    chunks = chunk_blocks(blocks, size=300, overlap=0)
    kinds = [(c.text.split()[0], c.kind) for c in chunks]
    assert kinds == [("Предисловие", "foreword"), ("1", "scope"), ("2", "references"), ("5", None),
                     ("Приложение", "annex")]


@pytest.mark.parametrize(("line", "mark"), [
    ("С. 16 ГОСТ 5264-80", True), ("ГОСТ 5 2 6 4 -8 0 С. 17", True), ("С. 25 С. 26", True), ("Стр. 5", True),
    ("ГОСТ 12.1.004-91 Система стандартов", False), ("С. 16 см. рисунок 3", False), ("ГОСТ 31996-2012", False),
])
def test_page_marks(line: str, mark: bool) -> None:
    assert is_page_mark(line) is mark


def test_page_marks_leave_the_page_wherever_they_are() -> None:
    pages = ["5.1 Текст первой страницы\nС. 16 ГОСТ 5264-80\nТаблица 27", "ГОСТ 5 2 6 4 -8 0 С. 17\n5.2 Текст"]
    assert strip_running_lines(pages) == ["5.1 Текст первой страницы\nТаблица 27", "5.2 Текст"]


def test_a_query_asking_for_front_matter_keeps_it() -> None:
    assert aside_for(["ширина эвакуационных выходов"]) == ASIDE
    assert "references" not in aside_for(["на какие нормативные ссылки опирается СП 1.13130"])
    assert "foreword" not in aside_for(["кем разработан ГОСТ 31996"])
    assert "abbreviations" not in aside_for(["что означает сокращение КФС"])
    assert "terms" in aside_for(["расстояние между оросителями в высотном стеллажном складе"])
    assert "terms" not in aside_for(["что такое высотный стеллажный склад"])
    assert "terms" not in aside_for(["определение термина «эвакуационный выход»"])
    assert "example" in aside_for(["время работы струйных вентиляторов при пожаре"])
    assert "example" not in aside_for(["пример расчета струйной вентиляции автостоянки"])
