"""The citation grammar, the pure decisions of a citation check, and a clause's difference across editions."""

from __future__ import annotations

from typing import Any

import pytest

from service.search.answer.models import CitedClause
from service.search.citations.check import (
    HEAD_CHARS,
    MAX_CANDIDATES,
    MAX_TARGETS,
    Checked,
    CitationChecker,
    Held,
    Resolution,
    build_documents_request,
    fit_texts,
    resolve,
    verdict_of,
)
from service.search.citations.clauses import Opened, build_clauses_request, clause_text, label_pattern, nearest_labels
from service.search.citations.editions import word_difference
from service.search.citations.grammar import Citation, find_citations, numbers_of, pointer_label
from service.search.citations.wording import clause_words, wording_matches, words_in_order
from service.search.documents import clause_label


@pytest.mark.parametrize(("text", "designation", "clause", "value"), [
    ("СП 54.13330.2016, п. 5.8", "СП 54.13330.2016", "5.8", None),
    ("п.5.8 СП 54.13330", "СП 54.13330", "5.8", None),
    ("табл. 2 ГОСТ 13579-2018", "ГОСТ 13579-2018", "Таблица 2", None),
    ("СНиП 2.01.07-85*, пункт 10.1", "СНиП 2.01.07-85", "10.1", None),
    ("приложение б СП 20.13330.2016", "СП 20.13330.2016", "Приложение Б", None),
    ("ГОСТ 27772-2021 Таблица А.1", "ГОСТ 27772-2021", "Таблица А.1", None),
    ("согласно таблице 5.1 СП 22.13330.2016", "СП 22.13330.2016", "Таблица 5.1", None),
    ("СП 1.13130.2020 (п. 4.2.19)", "СП 1.13130.2020", "4.2.19", None),
    ("СП 54.13330.2016, п. 5.8: не менее 2,7 м. Далее", "СП 54.13330.2016", "5.8", "не менее 2,7 м"),
    ("СП 54.13330.2016, п. 5.8 — «2,7»", "СП 54.13330.2016", "5.8", "2,7"),
    ("в соответствии с СП 1.13130.2020", "СП 1.13130.2020", None, None),
    ("СП 379.1325800.2018, п. 6.3.3: «категории «одна звезда» — не менее 25 %»", "СП 379.1325800.2018", "6.3.3",
     "категории «одна звезда» — не менее 25 %"),
    # a clause number without «п.»: after a comma, a space or in parentheses; an appendix's clause
    ("СП 1.13130.2020, 4.2.19", "СП 1.13130.2020", "4.2.19", None),
    ("ГОСТ 27772-2021 4.2", "ГОСТ 27772-2021", "4.2", None),
    ("СП 1.13130.2020 (4.2.19) требует", "СП 1.13130.2020", "4.2.19", None),
    ("СП 20.13330.2016, Б.2", "СП 20.13330.2016", "Б.2", None),
    ("СП 1.13130.2020 4.2.19: не менее 0,8 м", "СП 1.13130.2020", "4.2.19", "не менее 0,8 м"),
    ("см. 4.2.19 СП 1.13130.2020", "СП 1.13130.2020", "4.2.19", None),  # before it, inside a line
    ("4.2.19 СП 1.13130.2020 устанавливает", "СП 1.13130.2020", None, None),  # at a line's start: a clause's label
    ("СП 1.13130.2020, п. 4.2.19а", "СП 1.13130.2020", "4.2.19а", None),  # read whole, never as «4.2.19»
    # not a clause: a quantity, a date, a decimal, a page
    ("СП 54.13330.2016 2.7 м", "СП 54.13330.2016", None, None),
    ("СП 1.13130.2020 01.03.2021", "СП 1.13130.2020", None, None),
    ("СП 20.13330.2016 1,5 кПа", "СП 20.13330.2016", None, None),
    ("ГОСТ 5264-80 С. 16", "ГОСТ 5264-80", None, None),
])
def test_a_citation_is_read_in_the_forms_engineers_write(text: str, designation: str, clause: str | None,
                                                          value: str | None) -> None:
    [citation] = find_citations(text)
    assert (citation.designation, citation.clause, citation.value) == (designation, clause, value)


def test_citations_are_read_in_order_each_with_its_own_pointer() -> None:
    found = find_citations("См. п.5.8 СП 54.13330 и табл. 2 ГОСТ 13579-2018; СП 1.13130.2020 п. 4.2.19: 1,2 м; "
                           "ГОСТ 10180-2012")
    assert [(c.designation, c.clause, c.value) for c in found] == [
        ("СП 54.13330", "5.8", None), ("ГОСТ 13579-2018", "Таблица 2", None),
        ("СП 1.13130.2020", "4.2.19", "1,2 м"), ("ГОСТ 10180-2012", None, None)]
    assert found[0].cited == "п.5.8 СП 54.13330"
    # a pointer right before a designation is its own; the one after it then opens the next citation
    assert [(c.designation, c.clause) for c in find_citations("п. 4.2.99 СП 1.13130.2020, табл. 1 ГОСТ 27772-2021")] \
        == [("СП 1.13130.2020", "4.2.99"), ("ГОСТ 27772-2021", "Таблица 1")]


def test_a_range_keeps_its_first_and_last_clause_and_a_text_is_read_up_to_its_bound() -> None:
    [ranged] = find_citations("пп. 4.2.19–4.2.21 СП 1.13130.2020")
    assert (ranged.clause, ranged.clause_end) == ("4.2.19", "4.2.21")
    assert len(find_citations("ГОСТ 10180-2012; " * 60, limit=50)) == 50
    assert pointer_label("пункт", "5.2.3") == ("5.2.3", None)


WIDTH = ("4.2.19 Ширина эвакуационных выходов должна быть, как правило, не менее 0,8 м. Из технических помещений "
         "допускается предусматривать эвакуационные выходы шириной не менее 0,6 м.")


@pytest.mark.parametrize(("value", "clause", "quoted", "matches"), [
    ("не менее 2,7 м", "должна быть не менее 2,7 м, а в других — не менее 2,5 м", False, True),
    ("2.7", "не менее 2,7 м", False, True),
    ("не менее 3,0 м", "не менее 2,7 м", False, False),
    ("1 000 м3", "объемом до 1000 м3", False, True),
    ("не допускается", "Размещение квартир в подвальных этажах не допускается.", False, True),
    ("допускается при согласовании", "Размещение квартир в подвальных этажах не допускается.", False, False),
    # a bound flipped: the number is the clause's, the bound is not
    ("не более 0,8 м", WIDTH, False, False),
    ("≥ 0,8 м", WIDTH, False, True),
    ("0,8 м", WIDTH, False, True),
    # the modality flipped
    ("не допускается предусматривать выходы шириной 0,6 м", WIDTH, False, False),
    ("допускается предусматривать выходы шириной 0,6 м", WIDTH, False, True),
    # a quote is the clause's words in order (case, «ё», spaces aside; an ellipsis skips)
    ("Ширина эвакуационных выходов должна быть, как правило, не менее 0,8 м", WIDTH, True, True),
    ("ширина  эвакуационных выходов … не менее 0,8 м", WIDTH, True, True),
    ("Ширина эвакуационных выходов должна быть, как правило, не более 0,8 м", WIDTH, True, False),
    ("Ширина выходов должна быть не менее 0,8 м", WIDTH, True, False),
    # a bound is a word of its own: «разворот 90°» is no «от 90»
    ("не более 90°", "Выполняют разворот 90° на каждом марше.", False, True),
    # a clause's own label is no number of it: «7.3.1» does not hold an unbounded «1»
    ("не менее 1 %", "7.3.1 Размеры образцов определяют с погрешностью не более 1 %.", False, False),
])
def test_a_stated_value_matches_when_its_numbers_bounds_modality_and_quoted_words_are_the_clauses(
        value: str, clause: str, quoted: bool, matches: bool) -> None:
    assert wording_matches(value, clause, quoted) is matches


def test_a_value_that_does_not_match_is_shown_beside_the_clauses_own_sentence() -> None:
    assert clause_words("не более 0,8 м", WIDTH) == ("4.2.19 Ширина эвакуационных выходов должна быть, как правило, "
                                                    "не менее 0,8 м.")
    assert clause_words("не более 0,6 м", WIDTH) == ("Из технических помещений допускается предусматривать "
                                                    "эвакуационные выходы шириной не менее 0,6 м.")
    assert clause_words("12 м", WIDTH) is None
    assert words_in_order("эвакуиру-\nющихся людей", "число эвакуирующихся людей") is True


def test_a_designation_inside_a_quoted_value_is_part_of_the_value() -> None:
    quote = "Испытания следует проводить по ГОСТ 20.57.406"
    [citation] = find_citations(f"ГОСТ 16442-80, п. 5.1: «{quote}»; ГОСТ 1-2000")[:1]
    assert (citation.designation, citation.value) == ("ГОСТ 16442-80", quote)
    assert [c.designation for c in find_citations("ГОСТ 16442-80, п. 5.1: «по ГОСТ 20.57.406»; ГОСТ 1-2000")] == [
        "ГОСТ 16442-80", "ГОСТ 1-2000"]


def test_a_quote_is_read_as_quoted_and_checked_as_words() -> None:
    [quoted] = find_citations("СП 1.13130.2020, п. 4.2.19: «Ширина эвакуационных выходов … не более 0,8 м»")
    [plain] = find_citations("СП 1.13130.2020, п. 4.2.19: не более 0,8 м")
    assert (quoted.quoted, plain.quoted) == (True, False)
    checked = verdict_of(Checked(quoted, Resolution(None, ARCHIVE[2]),
                                 Opened(CitedClause(clause="4.2.19", text=WIDTH, page_number=10, chunk_id="d:1"),
                                        WIDTH)))
    assert (checked.verdict, checked.value_matches) == ("found", False)
    assert checked.clause_words is not None and "не менее 0,8 м" in checked.clause_words


def test_numbers_compare_with_a_comma_or_a_point_and_without_thousands_spaces() -> None:
    assert numbers_of("2,7 и 1 200 и 0.5") == ["2.7", "1200", "0.5"]


def held(doc_id: str, designation: str, edition: int | None, superseded_by: str | None = None,
         replaces: tuple[str, ...] = (), title: str | None = None) -> Held:
    family = designation.rsplit(".", 1)[0] if designation.startswith("СП") and edition else \
        designation.rsplit("-", 1)[0] if edition else designation
    return Held(doc_id, designation, family, edition, title or designation, superseded_by, replaces)


ARCHIVE = [held("old", "СП 134.13330.2012", 2012, superseded_by="new"), held("new", "СП 134.13330.2022", 2022),
           held("sp54", "СП 54.13330.2016", 2016, replaces=("СНиП 31-01-2003",)),
           held("gost", "ГОСТ 51234-2010", 2010)]


@pytest.mark.parametrize(("designation", "verdict", "document", "replaced_by"), [
    ("СП 134.13330.2022", None, "new", None),
    ("СП 134.13330", None, "new", None),  # without an edition: the current one
    ("СП 134.13330.2012", "superseded", "old", "new"),
    ("СП 134.13330.2009", "superseded", None, "new"),  # an edition older than every one held
    ("СП 134.13330.2030", "edition_not_found", None, None),
    ("СНиП 31-01-2003", "superseded", None, "sp54"),  # «Актуализированная редакция СНиП 31-01-2003»
    ("ГОСТ 99999-2010", "document_not_found", None, None),
])
def test_the_document_decides_first(designation: str, verdict: str | None, document: str | None,
                                    replaced_by: str | None) -> None:
    resolution = resolve(Citation(designation, designation, "5.1"), ARCHIVE)
    assert resolution.verdict == verdict
    assert (resolution.document.doc_id if resolution.document else None) == document
    assert (resolution.replaced_by.doc_id if resolution.replaced_by else None) == replaced_by


def test_an_edition_not_held_names_the_editions_that_are() -> None:
    resolution = resolve(Citation("x", "СП 134.13330.2030"), ARCHIVE)
    assert resolution.editions == ["СП 134.13330.2012", "СП 134.13330.2022"]


def test_two_documents_of_one_designation_with_other_titles_are_ambiguous_without_a_clause() -> None:
    archive = [held("a", "ГОСТ 1-2000", 2000, title="ГОСТ 1-2000 Болты"),
               held("b", "ГОСТ 1-2000", 2000, title="ГОСТ 1-2000 Гайки"),
               held("c", "ГОСТ 1-2000", 2000, title="ГОСТ 1-2000 Болты")]  # a copy of «a»
    resolution = resolve(Citation("ГОСТ 1-2000", "ГОСТ 1-2000"), archive)
    assert [c.doc_id for c in resolution.candidates] == ["a", "b"]
    assert verdict_of(Checked(Citation("ГОСТ 1-2000", "ГОСТ 1-2000"), resolution)).verdict == "ambiguous"


def shown(clause: str) -> Opened:
    return Opened(CitedClause(clause=clause, text="5.8 не менее 2,7 м", page_number=14, chunk_id="d:3"),
                  "5.8 Высота жилых комнат должна быть не менее 2,7 м")


@pytest.mark.parametrize(("opened", "verdict", "matches"), [(True, "found", True), (False, "clause_not_found", None)])
def test_the_clause_decides_when_the_document_does_not(opened: bool, verdict: str, matches: bool | None) -> None:
    citation = Citation("СП 54.13330.2016, п. 5.8: 2,7 м", "СП 54.13330.2016", "5.8", value="2,7 м")
    checked = Checked(citation, Resolution(None, ARCHIVE[2]), shown("5.8") if opened else None,
                      labels=["5.7", "5.9", "5.10", "6", "5.8.1"])
    check = verdict_of(checked)
    assert (check.verdict, check.value_matches) == (verdict, matches)
    assert check.nearest == (None if opened else ["5.7", "5.8.1", "5.9", "5.10", "6"])


def test_the_nearest_labels_are_the_clauses_siblings_first_in_document_order() -> None:
    labels = ["5.2.1", "5.2.2", "5.2.3", "5.3", "7.1", "5.2.10", "5.2.11"]
    assert nearest_labels("5.2.9", labels) == ["5.2.1", "5.2.2", "5.2.3", "5.2.10", "5.2.11"]
    assert nearest_labels("Таблица 9", ["Таблица 1", "Таблица 8", "Таблица 10"]) == [
        "Таблица 1", "Таблица 8", "Таблица 10"]


@pytest.mark.parametrize(("clause", "pattern"), [("5.2.9", r"5\.2(\..*)?"), ("17", "[0-9]+"),
                                                 ("Таблица 9", "Таблица .*"), ("Таблица А.3", r"Таблица А(\..*)?"),
                                                 ("Приложение Я", "Приложение .*")])
def test_the_labels_near_a_clause_are_asked_by_a_pattern_of_its_parent(clause: str, pattern: str) -> None:
    assert label_pattern(clause) == pattern


def test_two_requests_carry_the_access_filter_and_one_aggregation_a_target() -> None:
    citations = [Citation("x", "СП 54.13330.2016", "5.8"), Citation("y", "СП 20.13330")]
    documents = build_documents_request(citations, ["public"], 60)
    assert {"terms": {"access_groups": ["public"]}} in documents["query"]["bool"]["filter"]
    assert {"prefix": {"replaces": "СП 20.13330."}} in documents["query"]["bool"]["should"]
    clauses = build_clauses_request([("c0_0", "d1", "5.8"), ("r0", "d2", "5.8")], ["public"])
    assert {"terms": {"access_groups": ["public"]}} in clauses["query"]["bool"]["filter"]
    assert set(clauses["aggs"]) == {"c0_0", "r0"} and clauses["size"] == 0


def hit(text: str, spans: list[dict[str, Any]], index: int = 0) -> dict[str, Any]:
    return {"_source": {"chunk_id": f"d:{index}", "chunk_index": index, "text": text, "spans": spans,
                        "page_number": spans[0]["p"] if spans else None}}


def test_a_clauses_text_keeps_its_subclauses_and_stops_at_the_next_clause() -> None:
    text = "5.7 Другое. 5.8 Высота не менее 2,7 м. 5.8.1 В мансардах 2,3 м. 5.9 Следующий."
    spans = [{"o": text.index(c + " "), "p": 13 if c == "5.7" else 14, "c": c} for c in ("5.7", "5.8", "5.8.1", "5.9")]
    body, page = clause_text([hit(text, spans)], "5.8", 4000)
    assert body == "5.8 Высота не менее 2,7 м. 5.8.1 В мансардах 2,3 м. " and page == 14


def test_a_clause_running_into_the_next_chunk_is_read_on_without_the_overlap_twice() -> None:
    first = "4.1 Начало пункта, который продолжается на следующей странице и дальше"
    second = "который продолжается на следующей странице и дальше, до конца. 4.2 Другой."
    body, _ = clause_text([hit(first, [{"o": 0, "p": 3, "c": "4.1"}]),
                           hit(second, [{"o": 0, "p": 4, "c": "4.1"}, {"o": second.index("4.2"), "p": 4, "c": "4.2"}],
                               1)],
                          "4.1", 4000)
    assert body == "4.1 Начало пункта, который продолжается на следующей странице и дальше, до конца. "


@pytest.mark.parametrize(("typed", "label"), [("п. 4.2.19", ("4.2.19", None)), ("табл. 2", ("Таблица 2", None)),
                                              ("приложение б", ("Приложение Б", None)), ("5.8", ("5.8", None)),
                                              ("пп. 4.2.19–4.2.21", ("4.2.19", "4.2.21"))])
def test_a_clause_as_typed_to_get_document_is_labelled_as_chunks_are(typed: str, label: tuple[str, str | None]
                                                                     ) -> None:
    assert clause_label(typed) == label


def test_the_difference_marks_changed_words_and_numbers() -> None:
    old = "расстояние между кабельными линиями и силовыми кабелями не менее 0,5 м в любом случае"
    new = "расстояние между кабельными линиями и силовыми кабелями не менее 0,3 м в любом случае"
    difference, numbers = word_difference(old, new)
    assert "[-0,5-] {+0,3+}" in difference and numbers == ["0,5 → 0,3"]
    assert word_difference(old, old) == ("", [])


def test_the_further_clauses_of_a_citation_to_the_end_of_its_sentence_cite_the_same_document() -> None:
    found = find_citations("СП 54.13330.2016, пп. 5.8 и 5.9: 2,5 м; СП 20.13330.2016, п. 10.1 (п. 10.2: 0,7). "
                           "Далее п. 7.1 без документа.")
    assert [(c.designation, c.clause, c.value) for c in found] == [
        ("СП 54.13330.2016", "5.8", None), ("СП 54.13330.2016", "5.9", "2,5 м"),
        ("СП 20.13330.2016", "10.1", None), ("СП 20.13330.2016", "10.2", "0,7")]


class Recorder:
    """An engine stand-in for the checker: the documents request answered with ``documents``, every clauses
    request with no clause found; each request kept."""

    def __init__(self, documents: list[dict[str, Any]]) -> None:
        self.documents = documents
        self.requests: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        if "aggs" in body:
            return {"aggregations": {key: {} for key in body["aggs"]}}
        return {"hits": {"hits": [{"_source": d} for d in self.documents]}}


def shared_designation(copies: int) -> list[dict[str, Any]]:
    """``copies`` public files of one designation, each of another title (a planted flood)."""
    return [{"doc_id": f"d{i}", "designation": "ГОСТ 1-2000", "family": "ГОСТ 1", "edition": 2000,
             "title": f"ГОСТ 1-2000 Документ {i}"} for i in range(copies)]


def test_a_designation_two_hundred_files_share_is_checked_in_its_first_candidates_and_counted() -> None:
    engine = Recorder(shared_designation(200))
    citations = [Citation(f"ГОСТ 1-2000, п. {i + 1}", "ГОСТ 1-2000", f"{i + 1}") for i in range(50)]
    checked, _ = CitationChecker(engine, 600).check(citations, ("public",))
    targets = [len(r["aggs"]) for r in engine.requests if "aggs" in r]
    assert sum(targets) == 50 * MAX_CANDIDATES and max(targets) <= MAX_TARGETS
    check = verdict_of(checked[0])
    assert check.verdict == "ambiguous" and len(check.candidates or []) == MAX_CANDIDATES and check.matching == 200


def test_identical_citations_are_checked_once() -> None:
    engine = Recorder(shared_designation(3))
    citations = [Citation("ГОСТ 1-2000, п. 5", "ГОСТ 1-2000", "5")] * 50
    checked, _ = CitationChecker(engine, 600).check(citations, ("public",))
    assert len(engine.requests) == 2 and len(engine.requests[1]["aggs"]) == 3
    assert len({verdict_of(c).model_dump_json() for c in checked}) == 1 and len(checked) == 50


def test_twenty_citations_of_twenty_documents_are_two_requests() -> None:
    engine = Recorder([{"doc_id": f"d{i}", "designation": f"ГОСТ {i}-2000", "family": f"ГОСТ {i}", "edition": 2000,
                        "title": f"ГОСТ {i}-2000"} for i in range(20)])
    citations = [Citation(f"ГОСТ {i}-2000, п. 5", f"ГОСТ {i}-2000", "5") for i in range(20)]
    CitationChecker(engine, 600).check(citations, ("public",))
    assert len(engine.requests) == 2


def test_clause_texts_share_the_answers_budget_the_first_citations_whole() -> None:
    checks = [verdict_of(Checked(Citation(f"c{i}", "СП 54.13330.2016", "5.8"), Resolution(None, ARCHIVE[2]),
                                 Opened(CitedClause(clause="5.8", text="Слово " * 100, chunk_id=f"d:{i}"), "")))
              for i in range(50)]
    whole = len(checks[0].found.text) if checks[0].found else 0
    cut = fit_texts(checks, 20 * whole)
    assert cut == 30
    assert all(c.found is not None and len(c.found.text) == whole for c in checks[:20])
    assert all(c.found is not None and len(c.found.text) <= HEAD_CHARS + 2 for c in checks[20:])
