"""Nothing one document lends another crosses groups: a public document titled only by its designation is not named
by a restricted document's references, and a public edition is not marked replaced (nor hidden from ``current_only``)
by a newer edition only ``legal`` may read; a ``legal`` reader's documents still lend each other. Through
``run_ingest`` with access rules and the search service, on a real node."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from tests.support.engine import drop_index_resources, product_settings

pytestmark = pytest.mark.integration
FF = "\f"
PUBLIC, LAWYER = Principal.of("reader", []), Principal.of("lawyer", ["legal"])

BARE = ("ГОСТ 88888-2001\n" + FF + "1 Область применения\n1.1 Настоящий стандарт распространяется на вентиляцию "
        "убежищ.\n4 Технические требования\n4.1 Воздуховоды убежищ выполняют из стали толщиной не менее 1 мм.\n")
SECRET = ("СВОД ПРАВИЛ\nСП 999.1325800.2023\nОБЪЕКТЫ ОСОБОГО НАЗНАЧЕНИЯ\nПравила проектирования\nИздание "
          "официальное\n" + FF + "1 Область применения\n1.1 Настоящий свод правил распространяется на объекты.\n"
          "2 Нормативные ссылки\nВ настоящем своде правил использованы нормативные ссылки на следующие документы:\n"
          "ГОСТ 88888-2001 Тайные требования к вентиляции бункера Хрустальный\n"
          "3 Требования\n3.1 Вентиляцию проектируют по ГОСТ 88888-2001.\n")
OLD = ("СВОД ПРАВИЛ\nСП 777.13330.2010\nКАБЕЛЬНЫЕ СООРУЖЕНИЯ\nПравила проектирования\nИздание официальное\n" + FF
       + "1 Область применения\n1.1 Настоящий свод правил распространяется на кабельные сооружения.\n"
       "5 Требования\n5.1 Кабельные каналы перекрывают плитами массой не более 70 кг.\n")
NEW = OLD.replace("777.13330.2010", "777.13330.2024").replace("не более 70 кг", "не более 50 кг")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[SearchService]:
    root: Path = tmp_path_factory.mktemp("lent")
    for folder, name, text in (("public", "ГОСТ 88888-2001.txt", BARE), ("legal", "СП 999.txt", SECRET),
                               ("public", "СП 777.13330.2010.txt", OLD), ("legal", "СП 777.13330.2024.txt", NEW)):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / name).write_text(text, encoding="utf-8")
    rules = root.parent / "lent-rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "legal/", "groups": ["legal"]}]}), encoding="utf-8")
    settings = product_settings(opensearch_url, access_rules=rules)
    settings.search.cache_ttl_s = 0
    assert not run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True).failed
    yield SearchService(settings, client, navec_embedder)
    drop_index_resources(client, settings.index)


def titles(service: SearchService, query: str, who: Principal, **more: object) -> list[str]:
    found = service.search({"query": query, "search_mode": "fulltext", "include_context": False, **more}, who)
    return [r.title for r in found.results]


def test_a_restricted_reference_names_no_public_document(service: SearchService) -> None:
    assert titles(service, "Хрустальный", PUBLIC) == []
    bare = service.search({"query": "воздуховоды убежищ", "search_mode": "fulltext"}, PUBLIC).results
    assert [r.title for r in bare] == ["ГОСТ 88888-2001"]


def test_a_restricted_newer_edition_marks_no_public_edition_as_replaced(service: SearchService) -> None:
    old = service.search({"query": "кабельные каналы плитами", "search_mode": "fulltext"}, PUBLIC).results
    assert [r.designation for r in old] == ["СП 777.13330.2010"] and old[0].superseded_by is None
    current = service.search({"query": "кабельные каналы плитами", "search_mode": "fulltext", "current_only": True},
                             PUBLIC).results
    assert [r.designation for r in current] == ["СП 777.13330.2010"]  # the newest edition this reader may read
    lawyer = service.search({"query": "кабельные каналы плитами", "search_mode": "fulltext"}, LAWYER).results
    assert {r.designation for r in lawyer} == {"СП 777.13330.2010", "СП 777.13330.2024"}


def test_a_title_lent_by_an_older_release_is_taken_back_by_the_next_run_even_with_nothing_changed(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    for folder, name, text in (("public", "ГОСТ 88888-2001.txt", BARE), ("legal", "СП 999.txt", SECRET)):
        (tmp_path / "a" / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / "a" / folder / name).write_text(text, encoding="utf-8")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "legal/", "groups": ["legal"]}]}), encoding="utf-8")
    settings = product_settings(opensearch_url, access_rules=rules)
    settings.search.cache_ttl_s = 0
    try:
        run_ingest(IngestOptions([tmp_path / "a"]), settings, client, navec_embedder, quiet=True)
        leaked = "ГОСТ 88888-2001 Тайные требования к вентиляции бункера Хрустальный"
        client.update_by_query(index=settings.index.alias, refresh=True, body={  # as an older release left it
            "query": {"term": {"designation": "ГОСТ 88888-2001"}},
            "script": {"source": "ctx._source.title = params.t", "params": {"t": leaked}}})
        service = SearchService(settings, client, navec_embedder)
        assert titles(service, "Хрустальный", PUBLIC) == [leaked]

        again = run_ingest(IngestOptions([tmp_path / "a"]), settings, client, navec_embedder, quiet=True)

        assert again.counts["skipped"] == 2 and again.counts["indexed"] == 0
        assert titles(service, "Хрустальный", PUBLIC) == []
    finally:
        drop_index_resources(client, settings.index)
