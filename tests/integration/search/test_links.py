"""Titles, references and editions across an archive, on a real node through ``run_ingest``: a second,
incremental ingest brings a newer edition and a citing document; the earlier documents are marked and named
without being re-parsed, and search, get_document and list_sources show the links."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from ingest.parse.titles import title_problems
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.answer.models import DocumentResult
from service.search.service import SearchService
from tests.support.engine import drop_index_resources, product_settings

ANYONE = Principal.of("t", [])
FF = "\f"

OLD = ("СВОД ПРАВИЛ\nСП 134.13330.2012\nСИСТЕМЫ ЭЛЕКТРОСВЯЗИ ЗДАНИЙ И СООРУЖЕНИЙ\nОсновные положения проектирования\n"
       "Издание официальное\n" + FF + "1 Область применения\n"
       "1.1 Настоящий свод правил распространяется на проектирование систем электросвязи зданий.\n"
       "5 Кабельные линии\n5.1 Кабельные линии электросвязи прокладывают в трубах и лотках из негорючих "
       "материалов, расстояние между кабельными линиями электросвязи и силовыми кабелями не менее 0,5 м.\n")
NEW = ("СВОД ПРАВИЛ\nСП 134.13330.2022\nСИСТЕМЫ ЭЛЕКТРОСВЯЗИ ЗДАНИЙ И СООРУЖЕНИЙ\nОсновные положения проектирования\n"
       "Издание официальное\n" + FF + "Предисловие\n4 ВЗАМЕН СП 134.13330.2012\n" + FF + "1 Область применения\n"
       "1.1 Настоящий свод правил распространяется на проектирование систем электросвязи зданий.\n"
       "5 Кабельные линии\n5.1 Кабельные линии электросвязи прокладывают в трубах и лотках из негорючих "
       "материалов, расстояние между кабельными линиями электросвязи и силовыми кабелями не менее 0,3 м.\n")
BARE = ("ГОСТ 51234-2010\n" + FF + "1 Область применения\n"
        "1.1 Настоящий стандарт распространяется на щиты распределительные для жилых зданий.\n"
        "4 Технические требования\n4.1 Щиты распределительные изготовляют со степенью защиты не ниже IP31.\n"
        "4.2 Щиты слаботочных систем размещают по СП 134.13330.\n")
CITING = ("СВОД ПРАВИЛ\nСП 777.1325800.2023\nЗДАНИЯ ЦЕНТРОВ ОБРАБОТКИ ДАННЫХ\nПравила проектирования\n"
          "Издание официальное\n" + FF + "1 Область применения\n"
          "1.1 Настоящий свод правил распространяется на здания центров обработки данных.\n"
          "2 Нормативные ссылки\n"
          "В настоящем своде правил использованы нормативные ссылки на следующие документы:\n"
          "ГОСТ 51234-2010 Щиты распределительные для жилых зданий. Общие технические условия\n"
          "СП 134.13330.2012 Системы электросвязи зданий и сооружений. Основные положения проектирования\n"
          "3 Термины и определения\n3.1 центр обработки данных: Здание для размещения серверов.\n"
          "5 Требования\n5.1 Системы электросвязи проектируют по СП 134.13330, щиты по ГОСТ 51234-2010.\n")


Archive = tuple[SearchService, dict[str | None, DocumentResult]]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[Archive]:
    root: Path = tmp_path_factory.mktemp("links")
    (root / "СП 134.13330.2012.txt").write_text(OLD, encoding="utf-8")
    (root / "ГОСТ 51234-2010.txt").write_text(BARE, encoding="utf-8")
    settings = product_settings(opensearch_url)
    settings.search.cache_ttl_s = 0
    assert not run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True).failed
    service = SearchService(settings, client, navec_embedder)
    before = _by_designation(service)
    (root / "СП 134.13330.2022.txt").write_text(NEW, encoding="utf-8")
    (root / "СП 777.1325800.2023.txt").write_text(CITING, encoding="utf-8")
    second = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    assert second.counts["indexed"] == 2 and second.counts["skipped"] == 2  # the first two are not re-parsed
    yield service, before
    drop_index_resources(client, settings.index)


def _all(service: SearchService) -> list[DocumentResult]:
    return service.search({"query": "распространяется", "operator": "OR", "search_mode": "fulltext",
                           "include_context": False}, ANYONE).results


def _by_designation(service: SearchService) -> dict[str | None, DocumentResult]:
    return {d.designation: d for d in _all(service)}


def test_a_later_citing_document_names_an_earlier_bare_title_without_re_parsing_it(archive: Archive) -> None:
    service, before = archive
    assert title_problems(before["ГОСТ 51234-2010"].title, "ГОСТ 51234-2010")  # its own pages name nothing clean
    after = _by_designation(service)["ГОСТ 51234-2010"]
    assert after.title == "ГОСТ 51234-2010 Щиты распределительные для жилых зданий. Общие технические условия"


def test_a_newer_edition_ingested_later_marks_the_older_one(archive: Archive) -> None:
    service, before = archive
    assert all(d.superseded_by is None for d in before.values())
    docs = _by_designation(service)
    old, new = docs["СП 134.13330.2012"], docs["СП 134.13330.2022"]
    assert old.superseded_by is not None and old.superseded_by.id == new.id
    assert old.superseded_by.designation == "СП 134.13330.2022" and new.superseded_by is None


def test_the_current_edition_ranks_first_unless_the_query_names_the_old_one(archive: Archive) -> None:
    service, _ = archive
    for mode in ("hybrid", "fulltext"):
        ranked = [r.designation for r in service.search(
            {"query": "расстояние между кабельными линиями электросвязи и силовыми кабелями",
             "search_mode": mode}, ANYONE).results]
        assert ranked.index("СП 134.13330.2022") < ranked.index("СП 134.13330.2012"), (mode, ranked)
    named = service.search({"query": "СП 134.13330.2012 кабельные линии электросвязи"}, ANYONE).results
    assert named[0].designation == "СП 134.13330.2012"
    current = service.search({"query": "кабельные линии электросвязи", "current_only": True}, ANYONE).results
    assert "СП 134.13330.2012" not in [r.designation for r in current] and current


@pytest.mark.parametrize(("cites", "expected"), [
    ("СП 134.13330", {"СП 777.1325800.2023", "ГОСТ 51234-2010"}),
    ("сп 134.13330.2012", {"СП 777.1325800.2023"}),
    ("СП 134.13330.2022", set()),
    ("ГОСТ 51234-2010", {"СП 777.1325800.2023"}),
])
def test_the_cites_filter_finds_the_documents_citing_a_designation(archive: Archive, cites: list[str],
                                                                   expected: Any) -> None:
    service, _ = archive
    response = service.search({"query": "здания", "operator": "OR", "cites": cites}, ANYONE)
    assert {r.designation for r in response.results} == expected
    assert response.meta.total_results == len(expected)


def test_get_document_lists_what_a_document_cites_and_what_cites_it(archive: Archive) -> None:
    service, _ = archive
    docs = _by_designation(service)
    citing = service.get_document(docs["СП 777.1325800.2023"].id, ANYONE)
    cited = {c.designation: c.id for c in citing.cites or []}
    assert cited == {"СП 134.13330.2012": docs["СП 134.13330.2012"].id, "ГОСТ 51234-2010": docs["ГОСТ 51234-2010"].id}
    bare = service.get_document(docs["ГОСТ 51234-2010"].id, ANYONE)  # no references section: its text's mentions
    assert {c.designation: c.id for c in bare.cites or []} == {"СП 134.13330": docs["СП 134.13330.2022"].id}
    old = service.get_document(docs["СП 134.13330.2012"].id, ANYONE)
    assert [c.designation for c in old.cited_by or []] == ["СП 777.1325800.2023"]  # by its edition only
    new = service.get_document(docs["СП 134.13330.2022"].id, ANYONE)
    assert [c.designation for c in new.cited_by or []] == ["ГОСТ 51234-2010"]  # «СП 134.13330» is the current
    assert old.document.superseded_by is not None
    assert service.get_document(docs["СП 134.13330.2022"].id, ANYONE).replaces == ["СП 134.13330.2012"]


def test_list_sources_reports_the_most_cited_designations(archive: Archive) -> None:
    service, _ = archive
    most = service.list_sources(ANYONE).most_cited
    assert most["ГОСТ 51234-2010"] == 1 and most["СП 134.13330.2012"] == 1


@pytest.fixture(scope="module")
def restricted(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
               navec_embedder: NavecEmbedder) -> Iterator[SearchService]:
    """The newer edition kept where only «legal» may read it; the older one and a citing document public."""
    import json

    root: Path = tmp_path_factory.mktemp("links-access")
    (root / "общие").mkdir()
    (root / "секретно").mkdir()
    (root / "общие" / "СП 134.13330.2012.txt").write_text(OLD, encoding="utf-8")
    (root / "общие" / "ГОСТ 51234-2010.txt").write_text(BARE, encoding="utf-8")
    (root / "секретно" / "СП 134.13330.2022.txt").write_text(NEW, encoding="utf-8")
    rules = root.parent / f"{root.name}-access.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "секретно/*", "groups": ["legal"]}]}), encoding="utf-8")
    settings = product_settings(opensearch_url, access_rules=rules)
    settings.search.cache_ttl_s = 0
    assert not run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True).failed
    yield SearchService(settings, client, navec_embedder)
    drop_index_resources(client, settings.index)


def test_a_newer_edition_some_reader_may_not_read_marks_nothing(restricted: SearchService) -> None:
    public, legal = ANYONE, Principal.of("l", ["legal"])
    seen = {p.name: _by_designation_as(restricted, p) for p in (public, legal)}
    assert "СП 134.13330.2022" not in seen["t"]
    # the public edition is not marked replaced by one a public reader may not read: not named, not by id
    assert seen["t"]["СП 134.13330.2012"].superseded_by is None
    old_doc = restricted.get_document(seen["t"]["СП 134.13330.2012"].id, public)
    assert old_doc.document.superseded_by is None
    # the price, documented in docs/security.md: a legal reader sees the public edition unmarked too
    assert seen["l"]["СП 134.13330.2012"].superseded_by is None and "СП 134.13330.2022" in seen["l"]
    # «СП 134.13330» without an edition names the newest edition the caller may read, never an unreadable one
    bare = seen["t"]["ГОСТ 51234-2010"].id
    assert {c.designation: c.id for c in restricted.get_document(bare, public).cites or []} == {
        "СП 134.13330": seen["t"]["СП 134.13330.2012"].id}
    assert {c.designation: c.id for c in restricted.get_document(bare, legal).cites or []} == {
        "СП 134.13330": seen["l"]["СП 134.13330.2022"].id}


def _by_designation_as(service: SearchService, principal: Principal) -> dict[str | None, DocumentResult]:
    return {d.designation: d for d in service.search({"query": "распространяется", "operator": "OR",
                                                      "search_mode": "fulltext", "include_context": False},
                                                     principal).results}


def test_and_finds_the_words_in_the_text_and_the_designation_in_the_title(archive: Archive) -> None:
    service, _ = archive
    for mode in ("fulltext", "hybrid"):
        found = service.search({"query": "прокладывают в трубах СП 134.13330.2022", "operator": "AND",
                                "search_mode": mode}, ANYONE).results
        assert [r.designation for r in found] == ["СП 134.13330.2022"], mode
        assert found[0].context_chunks and "прокладывают в трубах" in found[0].context_chunks[0].text
    missing = service.search({"query": "прокладывают в трубах СП 134.13330.2022 вентиляция", "operator": "AND"},
                             ANYONE)
    assert missing.meta.total_results == 0 and not missing.results
