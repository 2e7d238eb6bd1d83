"""Citations checked on a real node, on an archive ingested through ``run_ingest``: every verdict, the stated
value, two engine requests for twenty citations, a document opened by designation and clause, a clause compared
across editions — and what a reader may not read never decides a verdict (a restricted newer edition does not
supersede a public one for a public reader, a restricted document is not found)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.errors import InvalidQuery, NotFound
from service.search.service import SearchService
from tests.integration.search.test_chunks_request import query_phases, shards
from tests.integration.search.test_links import NEW, OLD
from tests.support.archives import ingest_archive
from tests.support.engine import drop_index_resources

PUBLIC = Principal.of("t", [])
LEGAL = Principal.of("l", ["legal"])
FF = "\f"

GOST = ("ГОСТ 51234-2010\nЩИТЫ РАСПРЕДЕЛИТЕЛЬНЫЕ ДЛЯ ЖИЛЫХ ЗДАНИЙ\nОбщие технические условия\n" + FF
        + "1 Область применения\n1.1 Настоящий стандарт распространяется на щиты распределительные для жилых "
        "зданий.\n4 Технические требования\n4.1 Щиты распределительные изготовляют со степенью защиты не ниже "
        "IP31.\n4.2 Масса щита не должна превышать 25 кг.\n4.3 Щиты окрашивают порошковыми красками.\n" + FF
        + "Таблица 1 — Степени защиты щитов\nМесто установки | Степень защиты\nКоридор | IP31\nПодвал | IP54\n"
        + FF + "Приложение А\n(обязательное)\nСхемы щитов\nА.1 Схема щита этажного приведена на рисунке А.1.\n")
GOST_NEW = GOST.replace("51234-2010", "51234-2020").replace("не ниже IP31", "не ниже IP41")
REVISION = ("СВОД ПРАВИЛ\nСП 560.1325800.2024\nЭЛЕКТРОТЕХНИЧЕСКИЕ УСТРОЙСТВА\nАктуализированная редакция СНиП "
            "3.05.06-85\nИздание официальное\n" + FF + "Предисловие\nДата введения 2024-06-01\nИздание с "
            "Изменением № 1\n" + FF + "1 Область применения\n1.1 Настоящий свод правил "
            "распространяется на монтаж электротехнических устройств.\n3 Кабельные линии\n3.1 Кабели прокладывают "
            "с запасом по длине не менее 1 %.\n")
WITHDRAWN = ("ГОСТ 5180-2015\nУтратил силу в Российской Федерации с 01.01.2021\nГРУНТЫ\nМетоды лабораторного "
             "определения физических характеристик\n" + FF + "1 Область применения\n1.1 Настоящий стандарт "
             "распространяется на грунты.\n4 Общие положения\n4.1 Образцы грунта хранят не более 3 сут.\n")
SECRET = ("СВОД ПРАВИЛ\nСП 990.1325800.2024\nЗАЩИЩЕННЫЕ ПОМЕЩЕНИЯ\nИздание официальное\n" + FF
          + "1 Область применения\n1.1 Настоящий свод правил распространяется на защищенные помещения.\n"
          "5 Требования\n5.1 Двери защищенных помещений выполняют толщиной не менее 50 мм.\n")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[SearchService]:
    root: Path = tmp_path_factory.mktemp("citations")
    files = {"общие/СП 134.13330.2012.txt": OLD, "общие/СП 134.13330.2022.txt": NEW,
             "общие/ГОСТ 51234-2010.txt": GOST, "общие/СП 560.1325800.2024.txt": REVISION,
             "общие/ГОСТ 5180-2015.txt": WITHDRAWN,
             "секретно/ГОСТ 51234-2020.txt": GOST_NEW, "секретно/СП 990.1325800.2024.txt": SECRET}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    settings = ingest_archive(root, opensearch_url, client, navec_embedder)
    yield SearchService(settings, client, navec_embedder)
    drop_index_resources(client, settings.index)


def verdicts(service: SearchService, text: str, principal: Principal = PUBLIC) -> list[tuple[str, str]]:
    return [(c.cited, c.verdict) for c in service.check_citations({"text": text}, principal).citations]


def test_every_verdict_in_the_order_cited(archive: SearchService) -> None:
    text = ("По СП 134.13330.2022, п. 5.1 расстояние не менее 0,3 м; п. 9.9 СП 134.13330.2022 не бывает. "
            "СП 134.13330.2012 п. 5.1 заменен, СП 134.13330.2030 п. 5.1 не издан. Монтаж — по СНиП 3.05.06-85, "
            "пункт 3.1. Табл. 1 ГОСТ 51234-2010 и приложение А ГОСТ 51234-2010; ГОСТ 99999-2010.")
    assert verdicts(archive, text) == [
        ("СП 134.13330.2022, п. 5.1", "found"), ("п. 9.9 СП 134.13330.2022", "clause_not_found"),
        ("СП 134.13330.2012 п. 5.1", "superseded"), ("СП 134.13330.2030 п. 5.1", "edition_not_found"),
        ("СНиП 3.05.06-85, пункт 3.1", "superseded"), ("Табл. 1 ГОСТ 51234-2010", "found"),
        ("приложение А ГОСТ 51234-2010", "found"), ("ГОСТ 99999-2010", "document_not_found")]


def test_what_each_verdict_carries(archive: SearchService) -> None:
    found, missing, replaced, edition, revised = archive.check_citations({"text": (
        "СП 134.13330.2022, п. 5.1: не менее 0,3 м. СП 134.13330.2022 п. 5.9. СП 134.13330.2012, п. 5.1: 0,5 м. "
        "СП 134.13330.2030 п. 5.1. СНиП 3.05.06-85, пункт 3.1")}, PUBLIC).citations
    assert found.found is not None and found.found.text.startswith("5.1 Кабельные линии") and found.value_matches
    assert found.document is not None and found.found.chunk_id.startswith(str(found.document.id))
    assert missing.nearest == ["5", "5.1"] or "5.1" in (missing.nearest or [])
    assert replaced.replaced_by is not None and replaced.replaced_by.designation == "СП 134.13330.2022"
    assert replaced.replaced_clause is not None and "0,3 м" in replaced.replaced_clause.text
    assert replaced.value_matches is True  # 0,5 м is what the edition cited says
    assert edition.editions == ["СП 134.13330.2012", "СП 134.13330.2022"]
    assert revised.replaced_by is not None and revised.replaced_by.designation == "СП 560.1325800.2024"


def test_a_stated_value_the_clause_does_not_hold_is_said(archive: SearchService) -> None:
    [check] = archive.check_citations({"text": "ГОСТ 51234-2010, п. 4.2: не более 40 кг"}, PUBLIC).citations
    assert (check.verdict, check.value_matches) == ("found", False)


def test_twenty_citations_cost_two_engine_requests(archive: SearchService, client: OpenSearch) -> None:
    cited = [*(f"СП 134.13330.2022 п. 5.{i}" for i in range(8)), *(f"ГОСТ 51234-2010 п. 4.{i}" for i in range(8)),
             "СНиП 3.05.06-85 п. 3.1", "ГОСТ 99999-2010", "СП 134.13330.2012 п. 5.1", "табл. 1 ГОСТ 51234-2010"]
    text = "; ".join(cited)
    index = next(iter(client.indices.get_alias(name=archive.settings.index.alias)))
    before = query_phases(client, index)
    assert len(archive.check_citations({"text": text}, PUBLIC).citations) == 20
    assert query_phases(client, index) - before == 2 * shards(client, index)


def test_what_a_reader_may_not_read_decides_nothing(archive: SearchService) -> None:
    text = "ГОСТ 51234-2010, п. 4.1; ГОСТ 51234-2020 п. 4.1; СП 990.1325800.2024 п. 5.1"
    assert [v for _, v in verdicts(archive, text, PUBLIC)] == ["found", "edition_not_found", "document_not_found"]
    public = archive.check_citations({"text": text}, PUBLIC).citations
    assert public[1].editions == ["ГОСТ 51234-2010"]  # the restricted edition is not named
    assert [v for _, v in verdicts(archive, text, LEGAL)] == ["superseded", "found", "found"]


def test_get_document_opens_a_clause_by_designation_the_current_edition_without_one(archive: SearchService) -> None:
    opened = archive.get_document(None, PUBLIC, clause="п. 5.1", designation="СП 134.13330")
    assert opened.document.designation == "СП 134.13330.2022"
    assert opened.chunk is not None and "не менее 0,3 м" in opened.chunk.text
    assert [e.designation for e in opened.editions or []] == ["СП 134.13330.2012"]
    table = archive.get_document(None, PUBLIC, clause="табл. 1", designation="ГОСТ 51234-2010")
    assert table.chunk is not None and "Степени защиты щитов" in table.chunk.text


@pytest.mark.parametrize(("designation", "clause", "says"), [
    ("СП 134.13330.2022", "9.9", "nearest"), ("ГОСТ 99999-2010", None, "no ГОСТ 99999-2010"),
    ("СП 990.1325800.2024", None, "no СП 990.1325800.2024"), ("СНиП 3.05.06-85", None, "СП 560.1325800.2024")])
def test_get_document_by_designation_says_why_it_cannot_open_it(archive: SearchService, designation: str,
                                                               clause: str | None, says: str) -> None:
    with pytest.raises(NotFound) as refused:
        archive.get_document(None, PUBLIC, clause=clause, designation=designation)
    assert says in refused.value.message


def test_a_clause_compared_across_editions_marks_the_changed_number(archive: SearchService) -> None:
    opened = archive.get_document(None, PUBLIC, clause="5.1", designation="СП 134.13330.2022", compare=True)
    assert [e.designation for e in opened.comparison or []] == ["СП 134.13330.2012", "СП 134.13330.2022"]
    newer = (opened.comparison or [])[1]
    assert newer.changed_numbers == ["0,5 → 0,3"] and "[-0,5-] {+0,3+}" in (newer.difference or "")


def test_designation_and_id_together_are_refused(archive: SearchService) -> None:
    with pytest.raises(InvalidQuery):
        archive.get_document("0" * 20, PUBLIC, designation="СП 134.13330")


def test_status_as_the_documents_state_it_and_never_otherwise(archive: SearchService) -> None:
    revised, withdrawn, plain = archive.check_citations({"text": (
        "СП 560.1325800.2024 п. 3.1; ГОСТ 5180-2015 п. 4.1; ГОСТ 51234-2010 п. 4.1")}, PUBLIC).citations
    assert revised.document is not None and (revised.document.introduced, revised.document.amendments) == (
        "2024-06-01", ["Изменение № 1"])
    assert withdrawn.document is not None and withdrawn.document.withdrawn == (
        "Утратил силу в Российской Федерации с 01.01.2021")
    assert plain.document is not None and (plain.document.introduced, plain.document.amendments,
                                           plain.document.withdrawn) == (None, None, None)
    opened = archive.get_document(None, PUBLIC, designation="ГОСТ 5180-2015")
    assert opened.document.withdrawn == withdrawn.document.withdrawn


def test_list_sources_names_the_editions_replaced_each_reader_may_see(archive: SearchService) -> None:
    assert archive.list_sources(PUBLIC).replaced == {"СП 134.13330.2012": "СП 134.13330.2022"}


@pytest.mark.parametrize("clause", ["x <.1", "п. @.2", 'табл. "А.1'])
def test_a_clause_holding_a_regular_expressions_operators_is_only_not_found(archive: SearchService,
                                                                           clause: str) -> None:
    with pytest.raises(NotFound):
        archive.get_document(None, PUBLIC, clause=clause, designation="ГОСТ 51234-2010")


NOTE_PAGES = ["Пояснительная записка. Раздел 1. Общие данные.\nПроект выполнен по ГОСТ 51234-2010, п. 4.1: «Щиты "
              "распределительные изготовляют со степенью защиты не выше IP31».",
              "Раздел 2. Электроснабжение.\nКабели прокладывают по СП 560.1325800.2024 3.1 с запасом.\nЩиты по ГОСТ "
              "51234-2010, п. 4.9.",
              "Раздел 3. Перечень норм.\nСНиП 3.05.06-85; ГОСТ 5180-2015, п. 4.1: не более 3 сут; "
              "СП 999.1325800.2030.\nЩиты повторно по ГОСТ 51234-2010, п. 4.9."]
#: (page, line, as cited, verdict, value_matches) of every citation above, as a public reader gets them
NOTE_EXPECTED = [(1, 2, "ГОСТ 51234-2010", "4.1", "found", False),
                 (2, 2, "СП 560.1325800.2024", "3.1", "found", None),
                 (2, 3, "ГОСТ 51234-2010", "4.9", "clause_not_found", None),
                 (3, 2, "СНиП 3.05.06-85", None, "superseded", None), (3, 2, "ГОСТ 5180-2015", "4.1", "found", True),
                 (3, 2, "СП 999.1325800.2030", None, "document_not_found", None),
                 (3, 3, "ГОСТ 51234-2010", "4.9", "clause_not_found", None)]


def write_note(path: Path) -> Path:
    """The note as a DOCX (a page break Word renders before each page's first line) or a PDF (a page a page)."""
    if path.suffix == ".pdf":
        from evaluation.sample import render_pdf

        return render_pdf(NOTE_PAGES, path, "Записка")
    import docx
    from docx.oxml import OxmlElement

    document = docx.Document()
    for number, page in enumerate(NOTE_PAGES):
        for first, line in zip([True] + [False] * 9, page.split("\n"), strict=False):
            run = document.add_paragraph().add_run(line)
            if number and first:
                run._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    document.save(str(path))
    return path


@pytest.mark.parametrize("suffix", [".docx", ".pdf"])
def test_a_whole_document_has_every_citation_checked_with_its_page(archive: SearchService, tmp_path: Path,
                                                                   suffix: str) -> None:
    from ingest.cited import read_pages

    pages = read_pages(write_note(tmp_path / f"записка{suffix}"), archive.settings)
    seen: list[tuple[int, int]] = []
    reply = archive.check_pages("записка", pages, PUBLIC, progress=lambda done, total: seen.append((done, total)))
    got = [(c.page, c.designation, c.clause, c.verdict, c.value_matches) for c in reply.citations]
    assert got == [(page, d, clause, verdict, value) for page, _, d, clause, verdict, value in NOTE_EXPECTED]
    if suffix == ".docx":  # a PDF's text layer runs a page's lines together
        assert [(c.page, c.line) for c in reply.citations] == [(p, line) for p, line, *_ in NOTE_EXPECTED]
    assert reply.summary == {"found": 3, "clause_not_found": 2, "superseded": 1, "document_not_found": 1,
                             "value_mismatch": 1}
    assert reply.pages == 3 and seen == [(6, 6)]  # the repeated citation is checked once
    flipped = next(c for c in reply.citations if c.value_matches is False)
    assert flipped.clause_words is not None and "не ниже IP31" in flipped.clause_words


def test_an_indexed_document_is_checked_whole_by_id_for_a_reader_who_may_read_it(archive: SearchService) -> None:
    revision = archive.get_document(None, PUBLIC, designation="СП 560.1325800.2024").document.id
    reply = archive.check_citations({"document_id": revision}, PUBLIC)
    assert reply.file == "СП 560.1325800.2024.txt" and reply.pages == 3 and reply.summary
    # the title page names the СНиП it actualises (page 1, line 4), which is superseded by this document itself
    snip = next(c for c in reply.citations if c.designation == "СНиП 3.05.06-85")
    assert (snip.page, snip.line, snip.verdict) == (1, 4, "superseded")
    assert all(c.page is not None and c.line is not None for c in reply.citations)
    secret = archive.get_document(None, LEGAL, designation="СП 990.1325800.2024").document.id
    with pytest.raises(NotFound):
        archive.check_citations({"document_id": secret}, PUBLIC)
    assert archive.check_citations({"document_id": secret}, LEGAL).file == "СП 990.1325800.2024.txt"
    with pytest.raises(InvalidQuery):
        archive.check_citations({"document_id": secret, "text": "СП 1.13130"}, LEGAL)
