"""Words a hyphen breaks at a line's end, through the shipped path (a real norm as a TXT file → run_ingest → a
search on a real node): a compound the dictionary does not know is found in the clause that breaks it, because
the same document writes it whole elsewhere."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from tests.support.documents import SHARED, requires_shared
from tests.support.engine import drop_index_resources, ingest_norms, product_settings

pytestmark = [pytest.mark.integration, requires_shared]
NAME = "Свод правил 468.1325800.2019"  # its п. 10.4 reads «установку проти-⏎вооткольной сетки» (page 44)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[SearchService]:
    settings = product_settings(opensearch_url)
    ingest_norms(SHARED, [NAME], tmp_path_factory.mktemp("repair"), settings, client, navec_embedder)
    settings.search.cache_ttl_s = 0
    yield SearchService(settings, client, navec_embedder)
    drop_index_resources(client, settings.index)


def test_the_clause_that_breaks_a_compound_is_found_by_the_whole_word(service: SearchService) -> None:
    source = (SHARED / "construction_ru" / "russian_construction_standards" / "metadata" / f"{NAME}.json").read_text(
        encoding="utf-8")
    assert "проти- \\nвооткольной" in source and "противооткольной" in source  # broken once, whole elsewhere
    response = service.search({"query": "противооткольной сетки", "search_mode": "fulltext", "max_chunks": 5},
                              Principal.of("tester", []))
    passages = [c for r in response.results for c in r.context_chunks]
    clause = [c for c in passages if c.clause == "10.4"]
    assert clause, [(c.clause, c.text[:80]) for c in passages]
    assert "противооткольной сетки" in clause[0].text and clause[0].page_number == 44
