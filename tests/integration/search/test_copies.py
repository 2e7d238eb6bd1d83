"""One document once: the same file kept in several folders is one result listing every path the caller may
read, counted once in totals, facets and list_sources (a real node, ingested through ``run_ingest``)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.answer.models import DocumentResult
from service.search.service import SearchService
from service.search.vectors import read_coverage
from tests.support.engine import drop_index_resources, product_settings

GOST = ("ГОСТ 27772-2021 Прокат для строительных стальных конструкций. Общие технические условия.\n"
        "5.1 Прокат изготовляют из стали марок С255, С345 и С390 с гарантированной свариваемостью.\n")
FOLDERS = ("проект-А/нормы", "проект-Б/нормы", "секретно/архив")
PUBLIC, LEGAL = Principal.of("p", []), Principal.of("l", ["legal"])


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
           navec_embedder: NavecEmbedder,
           ) -> Iterator[SearchService]:
    root = tmp_path_factory.mktemp("copies")
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True)
        (root / folder / "GOST_27772-2021.txt").write_text(GOST, encoding="utf-8")
    for i in range(6):
        (root / "прочее" / f"док-{i}.txt").parent.mkdir(exist_ok=True)
        (root / "прочее" / f"док-{i}.txt").write_text(f"Бетонные работы, вариант {i}. Прокат арматуры {i}.",
                                                       encoding="utf-8")
    rules = root.parent / f"{root.name}-access.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "секретно/*", "groups": ["legal"]}]}), encoding="utf-8")
    settings = product_settings(opensearch_url, access_rules=rules)
    settings.search.cache_ttl_s = 0
    report = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    assert not report.failed
    yield SearchService(settings, client, navec_embedder)
    drop_index_resources(client, settings.index)


def _paths(result: DocumentResult) -> list[str]:
    return [c.file_path for c in result.copies] if result.copies else [result.file_path]


def test_a_file_and_its_copies_are_one_result_listing_every_readable_path(copies: SearchService) -> None:
    response = copies.search({"query": "прокат стальных конструкций марки стали С345"}, LEGAL)
    gost = [r for r in response.results if "27772" in r.title]
    assert len(gost) == 1
    paths = _paths(gost[0])
    assert len(paths) == 3 and {p.rsplit("/", 3)[-3] for p in paths} == {"проект-А", "проект-Б", "секретно"}
    assert gost[0].file_path in paths and len({c.id for c in gost[0].copies or []}) == 3


def test_a_principal_who_may_read_fewer_paths_sees_only_those(copies: SearchService) -> None:
    gost = [r for r in copies.search({"query": "прокат стальных конструкций"}, PUBLIC).results if "27772" in r.title]
    assert len(gost) == 1 and all("секретно" not in p for p in _paths(gost[0])) and len(_paths(gost[0])) == 2


def test_copies_count_once_in_totals_facets_and_sources(copies: SearchService) -> None:
    for principal, documents in ((PUBLIC, 7), (LEGAL, 7)):
        response = copies.search({"query": "прокат", "operator": "OR", "search_mode": "fulltext"}, principal)
        assert response.meta.total_results == len(response.results) == documents
        assert response.meta.facets.document_types == {"txt": documents}
        sources = copies.list_sources(principal)
        assert sources.total_documents == documents and sources.document_types == {"txt": documents}


def test_the_callers_coverage_says_when_a_content_they_may_read_is_kept_at_two_paths(
        copies: SearchService, client: OpenSearch) -> None:
    alias = copies.settings.index.alias
    public, everyone = read_coverage(client, alias, ["public"]), read_coverage(client, alias, ["public", "legal"])
    gost = copies.search({"query": "прокат стальных конструкций"}, LEGAL).results
    shared = next(r for r in gost if "27772" in r.title)
    assert public.copies == everyone.copies and public.copies is not None and len(public.copies) == 1
    assert public.shared([None, "other", *public.copies]) == sorted(public.copies) and shared.copies
    assert read_coverage(client, alias, ["nobody"]).copies == frozenset()
