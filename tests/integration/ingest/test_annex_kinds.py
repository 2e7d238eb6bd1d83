"""An annex read for its kind, through the shipped path (a real norm as a TXT file → run_ingest → the index and a
search on a real node): СП 266.1325800's «Приложение А (справочное) Основные буквенные обозначения величин» is a
list of symbols over several OCR'd pages, tagged as such to its end (a kind the search weighs down unless the
question asks for it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch, helpers

from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from service.settings import Settings
from tests.support.documents import SHARED, requires_shared
from tests.support.engine import drop_index_resources, ingest_norms, product_settings

pytestmark = [pytest.mark.integration, requires_shared]
NAME = "Свод правил 266.1325800.2016"


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
             navec_embedder: NavecEmbedder) -> Iterator[tuple[SearchService, Settings]]:
    settings = product_settings(opensearch_url)
    ingest_norms(SHARED, [NAME], tmp_path_factory.mktemp("annex"), settings, client, navec_embedder)
    settings.search.cache_ttl_s = 0
    yield SearchService(settings, client, navec_embedder), settings
    drop_index_resources(client, settings.index)


def test_an_annex_of_symbols_is_abbreviations_to_its_end(ingested: tuple[SearchService, Settings],
                                                         client: OpenSearch) -> None:
    _, settings = ingested
    chunks = [h["_source"] for h in helpers.scan(client, index=settings.index.alias,
                                                 query={"_source": ["clause", "section_kind", "chunk_index", "text"]})]
    opening = min((c["chunk_index"] for c in chunks if c["text"].startswith("Приложение А (справочное) Основные букв")),
                  default=None)
    assert opening is not None, "the annex's change of kind starts a chunk"
    annex = sorted((c["chunk_index"], c.get("section_kind")) for c in chunks
                   if c.get("clause") == "Приложение А" and c["chunk_index"] >= opening)
    assert len(annex) >= 4, annex  # the list runs over several pages
    assert {kind for _, kind in annex} == {"abbreviations"}, annex

