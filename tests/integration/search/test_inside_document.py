"""A call inside one document ranks every chunk of it: the answering clause is found there though sixty chunks
of the same document repeat the question's words more often (the engine's best 40 would not hold it). Through
``search_documents`` with ``path`` and through ``get_document`` with ``query``, on a real node."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.errors import InvalidQuery, NotFound
from service.search.answer.models import ChunkResult
from service.search.service import SearchService
from tests.support.served import served_folder

ANSWER = "Работа струйных вентиляторов при пожаре должна продолжаться не менее 2 ч при температуре 400 °С."
QUESTION = "продолжительность работы струйных вентиляторов при температуре пожара"
FILLER = "Проектная документация выполняется с учетом требований заказчика и условий эксплуатации здания. "
SUBJECTS = ["кровли", "фасада", "фундамента", "перекрытия", "лестницы", "подвала", "чердака", "тамбура", "пандуса",
            "балкона", "лоджии", "витража", "колонны", "ригеля", "стены", "перегородки", "окна", "двери"]


def _filler(n: int, sentences: int) -> str:
    """Prose of other words, each page its own (a page repeating another's lines would be taken for a running
    header and repaired away)."""
    return " ".join(f"Конструкция {SUBJECTS[(n + i) % len(SUBJECTS)]} и {SUBJECTS[(n * 7 + i * 3) % len(SUBJECTS)]} "
                    f"описывается в разделе проекта {SUBJECTS[(n * 5 + i) % len(SUBJECTS)]}." for i in range(sentences))


def _distractor(n: int) -> str:
    """A clause repeating the question's words, stating nothing."""
    return (f"6.{n} Струйные вентиляторы {SUBJECTS[n % len(SUBJECTS)]} размещают под перекрытием. Работа струйных "
            f"вентиляторов при температуре пожара у {SUBJECTS[(n + 3) % len(SUBJECTS)]} согласуется с работой "
            f"вентиляторов дымоудаления. Работа струйных вентиляторов при температуре воздуха у "
            f"{SUBJECTS[(n + 5) % len(SUBJECTS)]} контролируется. Струйные вентиляторы при пожаре включаются "
            "автоматически. ") + _filler(n, 14)


PAGES = ["СП 998.1325800.2099 Системы струйной вентиляции опытные. Правила проектирования\n",
         *(_distractor(n) for n in range(1, 61)),
         "8 Требования к оборудованию\n8.4 " + ANSWER + "\n" + _filler(99, 16)]


@pytest.fixture(scope="module")
def norm(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
         navec_embedder: NavecEmbedder) -> Iterator[tuple[SearchService, str]]:
    root = tmp_path_factory.mktemp("inside")
    path = root / "СП 998.txt"
    path.write_text("\f".join(PAGES), encoding="utf-8")
    with served_folder(root, opensearch_url, client, navec_embedder, 8, FILLER) as service:
        yield service, str(path)


PUBLIC = Principal.of("t", [])


def _answering(chunks: list[ChunkResult]) -> list[ChunkResult]:
    return [c for c in chunks if ANSWER[:60] in " ".join(c.text.split())]


def test_the_document_has_more_chunks_than_a_default_call_ranks(norm: tuple[SearchService, str]) -> None:
    service, _ = norm
    sources = service.list_sources(PUBLIC)
    assert sources.total_chunks - 8 > 60  # the premise: over 40 chunks outscore the answer on its words


@pytest.mark.parametrize("mode", ["fulltext", "hybrid"])
def test_a_call_inside_one_file_shows_the_answering_clause_among_all_its_chunks(
        norm: tuple[SearchService, str], mode: str) -> None:
    service, path = norm
    response = service.search({"query": QUESTION, "path": [path], "max_chunks": 10, "search_mode": mode}, PUBLIC)
    [document] = response.results
    [shown] = _answering(document.context_chunks)
    assert (shown.clause, shown.page_number) == ("8.4", len(PAGES))


def test_get_document_with_a_query_returns_its_best_passages_labelled(norm: tuple[SearchService, str]) -> None:
    service, path = norm
    doc_id = service.search({"query": QUESTION, "path": [path], "limit": 1}, PUBLIC).results[0].id
    answer = service.get_document(f"{doc_id}:3", PUBLIC, query=QUESTION)  # a chunk id names its document
    assert answer.document.id == doc_id and answer.chunk is None and answer.document.context_chunks == []
    assert answer.passages is not None and 0 < len(answer.passages) <= 10
    [shown] = _answering(answer.passages)
    assert (shown.clause, shown.page_number) == ("8.4", len(PAGES))
    assert all(p.chunk_id.startswith(doc_id + ":") for p in answer.passages)


def test_get_document_with_a_query_nothing_matches_gives_the_document_without_passages(
        norm: tuple[SearchService, str]) -> None:
    service, path = norm
    doc_id = service.search({"query": QUESTION, "path": [path], "limit": 1}, PUBLIC).results[0].id
    answer = service.get_document(doc_id, PUBLIC, query="зюзюкабра")
    assert answer.passages == [] and answer.document.id == doc_id


def test_get_document_with_a_query_holds_the_access_filter_and_the_contract(
        norm: tuple[SearchService, str]) -> None:
    service, path = norm
    doc_id = service.search({"query": QUESTION, "path": [path], "limit": 1}, PUBLIC).results[0].id
    with pytest.raises(NotFound):
        service.get_document("f" * 20, PUBLIC, query=QUESTION)
    with pytest.raises(InvalidQuery):
        service.get_document(doc_id, PUBLIC, query=QUESTION, clause="8.4")
    with pytest.raises(InvalidQuery):
        service.get_document(doc_id, PUBLIC, query="м" * 501)


def test_a_document_found_by_meaning_alone_still_shows_passages_inside_it(norm: tuple[SearchService, str]) -> None:
    service, path = norm
    doc_id = service.search({"query": QUESTION, "path": [path], "limit": 1}, PUBLIC).results[0].id
    answer = service.get_document(doc_id, PUBLIC, query="вытяжка дыма")  # no word of it in the document's text
    assert answer.passages, "its chunks nearest in meaning are shown"
    assert not any("**" in p.text for p in answer.passages)  # nothing matched word for word
