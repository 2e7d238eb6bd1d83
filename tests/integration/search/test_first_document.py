"""The first call reads its first document whole: the answering clause is shown among that document's passages
though twenty chunks of the same document repeat the question's words more often than it does (a document's best
chunks by the legs, what every other document's passages are chosen among, would not hold it). On a real node,
through ``search_documents`` with its defaults."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.answer.models import DocumentResult
from service.search.service import SearchService
from tests.integration.search.test_inside_document import ANSWER, FILLER, QUESTION, _distractor, _filler
from tests.support.served import served_pages

DISTRACTORS = 20
PAGES = ["СП 997.1325800.2099 Системы струйной вентиляции опытные. Правила проектирования\n",
         *(_distractor(n) for n in range(1, DISTRACTORS + 1)),
         "8 Требования к оборудованию\n8.4 " + ANSWER + "\n" + _filler(99, 16)]
PUBLIC = Principal.of("t", [])


@pytest.fixture(scope="module")
def norm(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
         navec_embedder: NavecEmbedder) -> Iterator[SearchService]:
    with served_pages(tmp_path_factory.mktemp("first"), {"СП 997.txt": PAGES}, opensearch_url, client,
                      navec_embedder, FILLER) as service:
        yield service


def _first(service: SearchService, mode: str) -> DocumentResult:
    response = service.search({"query": QUESTION, "search_mode": mode}, PUBLIC)
    first = response.results[0]
    assert first.designation == "СП 997.1325800.2099"
    return first


def _answering(document: DocumentResult) -> list[tuple[str | None, int | None]]:
    return [(c.clause, c.page_number) for c in document.context_chunks if ANSWER[:60] in " ".join(c.text.split())]


@pytest.mark.parametrize("mode", ["fulltext", "hybrid"])
def test_the_first_call_shows_the_answering_clause_of_its_first_document(norm: SearchService, mode: str) -> None:
    assert _answering(_first(norm, mode)) == [("8.4", len(PAGES))]


@pytest.mark.parametrize("mode", ["fulltext", "hybrid"])
def test_the_first_document_chosen_among_its_best_chunks_alone_would_not_show_it(norm: SearchService,
                                                                                  mode: str) -> None:
    """The premise: read as every other document is (``first_document_chunks`` 0), its best chunks by the legs
    are the distractors."""
    norm.settings.search.first_document_chunks = 0
    try:
        assert _answering(_first(norm, mode)) == []
    finally:
        norm.settings.search.first_document_chunks = type(norm.settings.search)().first_document_chunks
