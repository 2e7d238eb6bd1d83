"""A question naming a document («СП 997.1325800 число котлов …») gets that document first, though another norm
holds the question's words more often; unnamed, the other norm keeps its place. On a real node, through
``search_documents`` with its defaults."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from tests.integration.search.test_inside_document import FILLER, _filler
from tests.support.served import served_pages

NAMED = "Число котлов в автономном источнике теплоты должно быть не менее трех."
NAMED_PAGES = [
    "СП 997.1325800.2099 Инженерные системы опытных зданий\n",
    "6 Теплоснабжение\n6.2 " + NAMED + "\n" + _filler(3, 10),
]
OTHER_PAGES = [
    "СП 998.1325800.2099 Котельные опытные\n",
    "4 Котлы\n4.1 Число котлов котельной, число котлов резервных и число котлов автономного источника теплоты "
    "определяют расчетом. Котлы автономного источника теплоты размещают в котельной.\n"
    "4.2 Число котлов в автономном источнике теплоты и котлов котельной выбирают по числу котлов проекта.\n"
    + _filler(5, 10),
]
PUBLIC = Principal.of("t", [])


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[SearchService]:
    documents = {"СП 997.txt": NAMED_PAGES, "СП 998.txt": OTHER_PAGES}
    with served_pages(tmp_path_factory.mktemp("named"), documents, opensearch_url, client, navec_embedder,
                      FILLER) as served:
        yield served


def _designations(service: SearchService, query: str) -> list[str | None]:
    return [d.designation for d in service.search({"query": query}, PUBLIC).results[:2]]


def test_unnamed_the_norm_holding_the_words_more_often_is_first(service: SearchService) -> None:
    assert _designations(service, "число котлов в автономном источнике теплоты") == [
        "СП 998.1325800.2099", "СП 997.1325800.2099"]


def test_the_document_a_question_names_is_first_with_its_clause(service: SearchService) -> None:
    for query in ("СП 997.1325800 число котлов в автономном источнике теплоты",
                  "число котлов в автономном источнике теплоты по СП 997.1325800.2099"):
        first = service.search({"query": query}, PUBLIC).results[0]
        assert first.designation == "СП 997.1325800.2099", query
        assert first.context_chunks[0].clause == "6.2" and NAMED in " ".join(first.context_chunks[0].text.split())
