"""Pure parts of references, editions and archive titles: what a document cites, replaces and is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.links import Entry, may_lend, plan_links
from ingest.parse.model import Block
from ingest.parse.references import (
    amendment_numbers,
    document_references,
    introduced_date,
    reference_names,
    replaced_designations,
    withdrawn_stamp,
)
from ingest.parse.titles import title_problems
from service.search.citations.designations import find_designations, parse_designation


@pytest.mark.parametrize(("designation", "family", "edition"), [
    ("СП 63.13330.2018", "СП 63.13330", 2018),
    ("СП 63.13330", "СП 63.13330", None),
    ("СНиП 52-01-2003", "СНиП 52-01", 2003),
    ("СНиП 2.02.01-83", "СНиП 2.02.01", 1983),
    ("СНиП II-26-76", "СНиП II-26", 1976),
    ("ГОСТ 464-79", "ГОСТ 464", 1979),
    ("ГОСТ Р 53195.4-2010", "ГОСТ Р 53195.4", 2010),
    ("СП 52-105-2009", "СП 52-105", 2009),
])
def test_a_designation_resolves_to_one_family_and_edition(designation: str, family: str | None,
                                                          edition: int | None) -> None:
    parsed = parse_designation(designation)
    assert (parsed.family, parsed.edition) == (family, edition)


def test_designations_are_found_as_printed_and_normalized() -> None:
    text = "по СНиП II-26-76, Свод правил 63.13330.2018 и ГОСТ Р 53195.4—2010; ГОСТ 10180— 2012"
    assert find_designations(text) == ["СНиП II-26-76", "СП 63.13330.2018", "ГОСТ Р 53195.4-2010", "ГОСТ 10180-2012"]


def test_a_references_section_names_each_designation_it_lists() -> None:
    section = ("В настоящем своде правил использованы нормативные ссылки на следующие документы: ГОСТ 27751—2014 "
               "Надежность строительных конструкций и оснований. Основные положения ГОСТ Р 53780—2010 (ЕН 81-1:1998) "
               "Лифты. Общие требования безопасности СП 1.13130.2009 Системы противопожарной защиты. Эвакуационные "
               "пути и выходы (с изменением № 1) СП 20.13330.2016 Нагрузки и воздействия. Актуализированная редакция "
               "СНиП 2.01.07-85*")
    names = reference_names(section)
    assert names["ГОСТ 27751-2014"] == "Надежность строительных конструкций и оснований. Основные положения"
    assert names["ГОСТ Р 53780-2010"] == "Лифты. Общие требования безопасности"
    assert names["СП 1.13130.2009"] == "Системы противопожарной защиты. Эвакуационные пути и выходы"
    assert names["СП 20.13330.2016"] == "Нагрузки и воздействия"


def test_what_a_document_replaces_comes_from_its_front_matter_not_its_reference_list() -> None:
    front = ("СВОД ПРАВИЛ СП 22.13330.2016 ОСНОВАНИЯ ЗДАНИЙ И СООРУЖЕНИЙ Актуализированная редакция СНиП 2.02.01-83* "
             "Издание официальное 4 ВЗАМЕН ГОСТ 14782-76, ГОСТ 22368-77 в части ...")
    assert replaced_designations(front, "СП 22.13330.2016") == ["СНиП 2.02.01-83", "ГОСТ 14782-76", "ГОСТ 22368-77"]
    listing = "СП 20.13330.2016 Нагрузки и воздействия. Актуализированная редакция СНиП 2.01.07-85*"
    assert replaced_designations(listing, "СП 22.13330.2016") == []
    assert replaced_designations("ВЗАМЕН ГОСТ 2 4 05-80 и взамен электродов типа Э42", "ГОСТ 2405-88") == []


def test_a_letter_spaced_title_page_says_what_it_actualises() -> None:
    # the title page as a scan's text layer spaces it out; its designation repeats on every page (stripped from the
    # blocks as a running line), so only the head holds it next to «Актуализированная редакция»
    head = ("С В О Д П Р А В И Л\nСП 109.13330.2012\nХОЛОДИЛЬНИКИ\n"
            "А к т у а л и з и р о в а н н а я  р е д а к ц и я\nСНиП 2.11.02-87\nИздание официальное")
    blocks = [Block("СВОД ПРАВИЛ", 1), Block("Актуализированная редакция СНиП 2.11.02-87 Издание официальное", 1),
              Block("1 Область применения", 3, "title")]
    assert document_references(blocks, head, "СП 109.13330.2012").replaces == ["СНиП 2.11.02-87"]
    assert document_references(blocks[2:], "В з а м е н  ГОСТ 10180-90", "ГОСТ 10180-2012").replaces == [
        "ГОСТ 10180-90"]


def test_a_document_cites_what_its_references_section_lists() -> None:
    blocks = [Block("Предисловие. Цели установлены в ГОСТ 1.0-2015", 2),
              Block("1 Область применения", 3, "title"),
              Block("Настоящий свод правил (СП 54.13330) применяют с СП 1.13130 и ГОСТ 27751-2014.", 3),
              Block("2 Нормативные ссылки", 3, "title"),
              Block("ГОСТ 27751-2014 Надежность строительных конструкций и оснований СП 1.13130.2009 Системы "
                    "противопожарной защиты СП 28.13330.2017 «СНиП 2.03.11—85 Защита строительных конструкций от "
                    "коррозии» (с изменениями № 1, № 2)", 3),
              Block("3 Термины", 4, "title")]
    links = document_references(blocks, "СП 54.13330.2016 Актуализированная редакция СНиП 31-01-2003",
                                "СП 54.13330.2016")
    assert links.cites == ["ГОСТ 27751-2014", "СП 1.13130.2009", "СП 28.13330.2017"]
    assert links.replaces == ["СНиП 31-01-2003"]
    assert links.names == {"ГОСТ 27751-2014": "Надежность строительных конструкций и оснований",
                           "СП 1.13130.2009": "Системы противопожарной защиты",
                           "СП 28.13330.2017": "Защита строительных конструкций от коррозии",
                           "СНиП 2.03.11-85": "Защита строительных конструкций от коррозии"}  # the quoted one


def test_without_a_references_section_a_document_cites_what_its_body_names_but_not_its_own_family_or_preface() -> None:
    blocks = [Block("Предисловие. Цели установлены в ГОСТ 1.0-2015", 2),
              Block("1 Область применения", 3, "title"),
              Block("Настоящий свод правил (СП 54.13330) применяют с СП 1.13130 и ГОСТ 27751-2014. По СП 1.13130.2009 "
                    "определяют пути эвакуации.", 3)]
    links = document_references(blocks, "", "СП 54.13330.2016")
    assert links.cites == ["ГОСТ 27751-2014", "СП 1.13130.2009"]  # the undated mention is that edition


@pytest.mark.parametrize(("title", "designation", "problems"), [
    ("СП 42.13330.2016", "СП 42.13330.2016", ["bare"]),
    ("СП 34.13330.2012 Авто м о бильны е дороги", "СП 34.13330.2012", ["letter_split"]),
    ("СП 31-107-2004 вязаный жакет", "СП 31-107-2004", ["boilerplate"]),
    ("СНиП 2.02.01-83 приказом по НИИОСП им Герсеванова", "СНиП 2.02.01-83", ["boilerplate"]),
    ("СП 121.13330.2019 Аэродромы", "СП 121.13330.2019", []),
    ("Постановление от 16 февраля 2008 г. N 87 О составе разделов", None, []),
    ("ГОСТ 948-2016 Перемычки железобетонные для здании с кирпичными стенами", "ГОСТ 948-2016", []),
])
def test_the_title_checker(title: str, designation: str, problems: list[str]) -> None:
    assert title_problems(title, designation) == problems


def _entry(doc_id: str, designation: str, title: str = "", replaces: tuple[str, ...] = (),
           names: tuple[tuple[str, str], ...] = ()) -> Entry:
    return Entry(doc_id, designation, title or f"{designation} Название документа", replaces, names)


def test_the_newest_edition_of_a_family_or_one_that_says_so_supersedes() -> None:
    entries = [_entry("old", "СП 134.13330.2012"), _entry("new", "СП 134.13330.2022"),
               _entry("snip", "СНиП 2.02.01-83"), _entry("sp22", "СП 22.13330.2016", replaces=("СНиП 2.02.01-83",)),
               _entry("copy", "СП 134.13330.2022")]
    plan = plan_links(entries)
    assert plan["old"].superseded_by in ("new", "copy") and plan["old"].superseded_by_designation == "СП 134.13330.2022"
    assert plan["snip"].superseded_by == "sp22"
    assert plan["new"].superseded_by is None and plan["sp22"].superseded_by is None


def test_an_imperfect_title_takes_the_name_the_archive_cites_it_by_and_a_clean_one_stays() -> None:
    entries = [_entry("bare", "СП 42.13330.2016", title="СП 42.13330.2016"),
               _entry("a", "СП 1.1", names=(("СП 42.13330.2016", "Градостроительство. Планировка и застройка"),)),
               _entry("b", "СП 1.2", names=(("СП 42.13330.2011", "Градостроительство. Планировка и застройка"),
                                            ("СП 1.1", "Другое имя"))),
               _entry("c", "СП 1.3", names=(("СП 42.13330", "вязаный жакет"),))]
    plan = plan_links(entries)
    assert plan["bare"].title == "СП 42.13330.2016 Градостроительство. Планировка и застройка"
    assert plan["a"].title == "СП 1.1 Название документа"  # clean: kept, whatever others call it


def _in(entry: Entry, *groups: str) -> Entry:
    return Entry(entry.doc_id, entry.designation, entry.title, entry.replaces, entry.cited_names, frozenset(groups))


def test_a_restricted_document_names_no_public_one_and_a_public_one_names_any() -> None:
    bare = _in(_entry("bare", "ГОСТ 88888-2001", title="ГОСТ 88888-2001"), "public")
    secret = _in(_entry("s", "СП 1.1", names=(("ГОСТ 88888-2001", "Тайные требования к вентиляции бункера"),)),
                 "legal")
    assert plan_links([bare, secret])["bare"].title == "ГОСТ 88888-2001"
    shared = _in(_entry("p", "СП 1.2", names=(("ГОСТ 88888-2001", "Открытые требования к вентиляции"),)), "public")
    assert plan_links([bare, secret, shared])["bare"].title == "ГОСТ 88888-2001 Открытые требования к вентиляции"
    legal_bare = _in(bare, "legal")
    assert plan_links([legal_bare, secret])["bare"].title.endswith("Тайные требования к вентиляции бункера")


def test_a_restricted_newer_edition_marks_no_public_edition_as_replaced() -> None:
    old = _in(_entry("old", "СП 777.13330.2010"), "public")
    mid = _in(_entry("mid", "СП 777.13330.2016"), "public")
    new = _in(_entry("new", "СП 777.13330.2024"), "legal")
    assert plan_links([old, new])["old"].superseded_by is None
    assert plan_links([old, mid, new])["old"].superseded_by == "mid"  # the newest every reader of it may read
    assert plan_links([_in(old, "legal"), new])["old"].superseded_by == "new"


@pytest.mark.parametrize(("source", "receiver", "lent"), [
    ({"public"}, {"public"}, True), ({"public"}, {"legal"}, True), ({"legal"}, {"public"}, False),
    ({"legal"}, {"legal"}, True), ({"legal", "hr"}, {"legal"}, True), ({"legal"}, {"legal", "hr"}, False),
    ({"legal"}, {"public", "legal"}, False), (set(), {"legal"}, False),
])
def test_a_document_lends_only_what_every_reader_of_the_receiver_may_read(source: set[str], receiver: set[str],
                                                                           lent: bool) -> None:
    assert may_lend(frozenset(source), frozenset(receiver)) is lent


@pytest.mark.parametrize(("head", "file", "title"), [
    ("МЕЖГОСУДАРСТВЕННЫЙ СТАНДАРТ\nГОСТ\n2 5 1 2 9 -\n2020\nГРУН ТО ВКА  ГФ-021\nТехнические условия\n"
     "Издание официальное",
     "ГОСТ 25129-2020.txt", "ГОСТ 25129-2020 Грунтовка ГФ-021. Технические условия"),
    ("УТВЕРЖДЕН\nСВОД ПРАВИЛ\nСП 226Л326000.2014 Электроснабжение нетяговых потребителей\nМосква",
     "Свод правил 226.1326000.2014.txt", "СП 226.1326000.2014 Электроснабжение нетяговых потребителей"),
    ("Система нормативных документов в строительстве\nСВОД ПРАВИЛ ПО ПРОЕКТИРОВАНИЮ\nИ СТРОИТЕЛЬСТВУ\n"
     "АРХИТЕКТУРНО-ПЛАНИРОВОЧНЫЕ\nРЕШЕНИЯ МНОГОКВАРТИРНЫХ\nЖИЛЫХ ЗДАНИЙ\nСП 31-107-2004\nИЗДАНИЕ ОФИЦИАЛЬНОЕ\n"
     "вязаный жакетСП 31-107-2004", "Свод правил 31-107-2004.txt",
     "СП 31-107-2004 Архитектурно-планировочные решения многоквартирных жилых зданий"),
    ("ГОСТ\n25809\n2019\nСМЕСИТЕЛИ И КРАНЫ ВОДОРАЗБОРНЫЕ\nТипы и основные размеры\nИздание официальное\n"
     "ГОСТ 25809—2019\nПредисловие\nЦели, основные принципы и общие правила проведения работ установлены",
     "ГОСТ 25809-2019.txt", "ГОСТ 25809-2019 Смесители и краны водоразборные. Типы и основные размеры"),
    ("ГОСТ \r\n27772—\r\n2021\r\nПРОКАТ ДЛЯ СТРОИТЕЛЬНЫХ \r\nСТАЛЬНЫХ КОНСТРУКЦИЙ\r\nОбщие технические условия\r\n"
     "Издание официальное", "GOST_27772-2021.pdf",
     "ГОСТ 27772-2021 Прокат для строительных стальных конструкций. Общие технические условия"),
])
def test_a_title_page_read_through_ocr_spacing_misreading_and_old_layouts(head: str, file: str, title: str) -> None:
    from pathlib import Path

    from ingest.parse.titles import identify

    assert identify(head, None, Path(file)).title == title


def test_a_list_of_quoted_entries_is_read_and_a_quoted_snip_after_a_misread_entry_is_no_entry() -> None:
    section = ('В настоящем своде правил использованы нормативные ссылки на следующие документы: "ГОСТ 14202-69. '
               'Трубопроводы промышленных предприятий. Опознавательная окраска"; "ГОСТ 18188-72. Растворители марок '
               '645, 646"; CП 20.13330.2016 «СНиП 2.01.07-85* Нагрузки и воздействия» (с изменениями № 1, № 2)')
    blocks = [Block("1 Область применения", 1, "title"), Block("2 Нормативные ссылки", 1, "title"),
              Block(section, 1), Block("3 Термины", 2, "title")]
    links = document_references(blocks, "", "СП 485.1311500.2020")
    assert links.cites == ["ГОСТ 14202-69", "ГОСТ 18188-72"]
    assert links.names["ГОСТ 14202-69"] == "Трубопроводы промышленных предприятий. Опознавательная окраска"


def test_a_document_whose_pages_give_only_boilerplate_is_titled_by_its_designation_alone(tmp_path: Path) -> None:
    from ingest.parse import parse_file

    path = tmp_path / "Свод правил 327.1325800.2017.txt"
    path.write_text("СП 327.1325800.2017\nII\nПредисловие\nСведения о своде правил\n1 ИСПОЛНИТЕЛЬ – АО «НИЦ» – "
                    "Центральный научно-исследова-\nтельский институт строительных конструкций им. В.А. Кучеренко\n"
                    "\f1 Область применения\n1.1 Настоящий свод правил распространяется на здания.\n", encoding="utf-8")
    assert parse_file(path).title == "СП 327.1325800.2017"


@pytest.mark.parametrize(("front", "introduced"), [
    ("Дата введения — 2013—07—01", "2013-07-01"), ("Дата введения 2017-12-01", "2017-12-01"),
    ("Дата введения\n01.07.2015", "2015-07-01"), ("Дата введения 2017-13-01", None), ("Введен впервые", None),
    ("Дата введения 24 января 2023 года", "2023-01-24"), ("Дата введения 01.01.82", "1982-01-01"),
    ("Дата введения \uf02d 2018\uf02d05–15", "2018-05-15")])
def test_the_date_a_document_says_it_came_into_force(front: str, introduced: str | None) -> None:
    assert introduced_date(front) == introduced


def test_the_amendments_a_document_names_in_order_once_each() -> None:
    assert amendment_numbers("Издание с Изменениями № 1,2, 3; … Изменение № 3 к СП 118.13330") == [
        "Изменение № 1", "Изменение № 2", "Изменение № 3"]
    assert amendment_numbers("Введен впервые") == []


def test_withdrawn_only_as_the_document_stamps_itself_on_its_first_page() -> None:
    assert withdrawn_stamp("ГОСТ 5180-2015\nУтратил силу в Российской Федерации с 01.01.2021. Грунты") == \
        "Утратил силу в Российской Федерации с 01.01.2021"
    # a standard's boilerplate about the standards it cites is not its own status, nor is a stamp deep inside
    assert withdrawn_stamp("Если ссылочный стандарт отменен без замены, то положение …") is None
    assert withdrawn_stamp("Текст. " * 200 + "Утратил силу") is None


def test_the_introduction_date_after_a_contents_page_that_names_the_scope() -> None:
    contents = [Block("1 Область применения … 1", 1, "text"), Block("2 Нормативные ссылки … 1", 1, "text")]
    title_page = [Block("СП 426.1325800.2018 Design rules", 3, "text"), Block("Дата введения – 2019–05–30", 3, "text")]
    body = [Block("1 Область применения", 4, "title"), Block("1.1 Настоящий свод правил распространяется", 4, "text")]
    links = document_references([*contents, *title_page, *body], "СВОД ПРАВИЛ", "СП 426.1325800.2018")
    assert links.introduced == "2019-05-30"
    assert introduced_date("Дата введения установлена с 01.01.86") == "1986-01-01"
