"""A whole document's citations as pure functions: each with its page and line, each distinct one checked once, a
batch at most ``MAX_CITATIONS``, and the summary by verdict."""

from __future__ import annotations

from service.search.answer.models import CitationCheck
from service.search.citations.document import (
    distinct_batches,
    document_pages,
    key_of,
    placed_checks,
    placed_citations,
    summary_of,
)
from service.search.citations.grammar import MAX_CITATIONS

PAGES = [(1, "Общие данные.\nПо СП 1.13130.2020, 4.2.19 и ГОСТ 27772-2021 4.2."),
         (3, "Таблица нагрузок.\n\nСП 20.13330.2016, п. 10.1: 1,5 кПа\nСП 1.13130.2020, 4.2.19")]


def test_every_citation_is_placed_on_its_page_and_line() -> None:
    placed = placed_citations(PAGES)
    assert [(p.page, p.line, p.citation.designation, p.citation.clause) for p in placed] == [
        (1, 2, "СП 1.13130.2020", "4.2.19"), (1, 2, "ГОСТ 27772-2021", "4.2"),
        (3, 3, "СП 20.13330.2016", "10.1"), (3, 4, "СП 1.13130.2020", "4.2.19")]
    assert len(placed_citations(PAGES, limit=3)) == 3


def test_a_repeated_citation_is_checked_once_and_batches_are_bounded() -> None:
    placed = placed_citations(PAGES)
    assert [[c.cited for c in batch] for batch in distinct_batches(placed)] == [
        ["СП 1.13130.2020, 4.2.19", "ГОСТ 27772-2021 4.2", "СП 20.13330.2016, п. 10.1: 1,5 кПа"]]
    many = placed_citations([(n, f"ГОСТ {1000 + n}-2010, п. 4.{n % 7}") for n in range(1, 131)])
    assert [len(b) for b in distinct_batches(many)] == [MAX_CITATIONS, MAX_CITATIONS, 30]


def test_each_place_carries_its_check_and_the_summary_counts_verdicts_and_wrong_values() -> None:
    placed = placed_citations(PAGES)
    checks = {key_of(p.citation): CitationCheck(cited=p.citation.cited, verdict="found",
                                                designation=p.citation.designation, clause=p.citation.clause,
                                                value=p.citation.value,
                                                value_matches=False if p.citation.value else None)
              for p in placed}
    checks[key_of(placed[1].citation)] = CitationCheck(cited="x", verdict="document_not_found",
                                                       designation="ГОСТ 27772-2021")
    listed = placed_checks(placed, checks)
    assert [(c.page, c.line, c.cited, c.verdict) for c in listed][1] == (1, 2, "ГОСТ 27772-2021 4.2",
                                                                         "document_not_found")
    assert summary_of(listed) == {"found": 3, "document_not_found": 1, "value_mismatch": 1}


def test_an_indexed_documents_pages_come_from_its_chunks_each_overlap_read_once() -> None:
    first = "Раздел 1. По СП 1.13130.2020, 4.2.19 ширина не менее 0,8 м. Далее по ГОСТ 27772-2021 сталь С245."
    second = first[-45:] + " Раздел 2. Нагрузки по СП 20.13330.2016, п. 10.1."
    pages = document_pages([{"text": first, "spans": [{"o": 0, "p": 1}, {"o": 60, "p": 2}], "page_number": 1},
                            {"text": second, "spans": [{"o": 0, "p": 2}, {"o": 60, "p": 3}], "page_number": 2}])
    assert [p for p, _ in pages] == [1, 2, 3]
    assert "".join(t for _, t in pages).count("ГОСТ 27772-2021") == 1  # the overlap is not read twice
    assert [(p.page, p.citation.designation) for p in placed_citations(pages)] == [
        (1, "СП 1.13130.2020"), (2, "ГОСТ 27772-2021"), (3, "СП 20.13330.2016")]
