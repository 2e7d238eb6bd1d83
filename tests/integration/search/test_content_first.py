"""Content first: a norm's foreword, scope, references and terms name its subject in the question's words more often
than the clause that answers, yet the answering clause is shown first; a question that asks for the foreword or a
term's definition still gets it. The section kinds come from the ingest (``section_kind``), page numbers never reach
the text. On a real node, through ``search_documents`` with its defaults."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from tests.integration.search.test_inside_document import FILLER, _filler
from tests.support.served import served_pages

ANSWER = "Ширина эвакуационных выходов из помещений должна быть не менее 1,2 м."
TERM = ("ширина эвакуационного выхода: Наименьшее расстояние в свету в проеме эвакуационного выхода, по которому "
        "определяют ширину эвакуационных выходов из помещений.")
PAGES = [
    "СП 996.1325800.2099 Эвакуационные выходы опытные. Правила проектирования\n",
    "Предисловие\nСведения о своде правил\n1 РАЗРАБОТАН институтом эвакуационных выходов: ширина эвакуационных "
    "выходов, ширина дверей эвакуационных выходов и ширина путей к эвакуационным выходам изучены авторами.\n"
    "2 ВНЕСЕН Техническим комитетом по стандартизации\nС. 2 СП 996.1325800.2099\n",
    "1 Область применения\nНастоящий свод правил распространяется на ширину эвакуационных выходов, ширину "
    "эвакуационных выходов из помещений и ширину эвакуационных выходов из зданий.\n"
    "2 Нормативные ссылки\nСП 1.13130.2020 Эвакуационные пути и выходы: ширина эвакуационных выходов\n",
    "3 Термины и определения\n3.1 " + TERM + "\n",
    "5 Требования\n5.1 " + ANSWER + "\n" + _filler(7, 12),
]
PUBLIC = Principal.of("t", [])


@pytest.fixture(scope="module")
def norm(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
         navec_embedder: NavecEmbedder) -> Iterator[tuple[SearchService, OpenSearch]]:
    with served_pages(tmp_path_factory.mktemp("content"), {"СП 996.txt": PAGES}, opensearch_url, client,
                      navec_embedder, FILLER) as service:
        yield service, client


def _passages(service: SearchService, query: str) -> list[tuple[str | None, str]]:
    first = service.search({"query": query}, PUBLIC).results[0]
    assert first.designation == "СП 996.1325800.2099"
    return [(c.clause, " ".join(c.text.split())) for c in first.context_chunks]


def test_the_chunks_carry_their_section_kinds(norm: tuple[SearchService, OpenSearch]) -> None:
    service, client = norm
    body = {"size": 20, "query": {"term": {"designation": "СП 996.1325800.2099"}}, "sort": ["chunk_index"],
            "_source": ["section_kind", "text"]}
    hits = client.search(index=service.settings.index.alias, body=body)["hits"]["hits"]
    kinds = [h["_source"].get("section_kind") for h in hits if h["_source"]["text"].strip()]
    assert kinds[1:] == ["foreword", "scope", "references", "terms", None]
    assert not any("С. 2" in h["_source"]["text"] for h in hits)  # a line of page numbers never reaches the text


def test_the_answering_clause_comes_before_the_front_matter(norm: tuple[SearchService, OpenSearch]) -> None:
    clause, text = _passages(norm[0], "ширина эвакуационных выходов")[0]
    assert (clause, ANSWER in text) == ("5.1", True)


def test_a_question_for_a_terms_definition_gets_it(norm: tuple[SearchService, OpenSearch]) -> None:
    passages = _passages(norm[0], "что такое ширина эвакуационного выхода")
    assert passages[0][0] == "3.1" and TERM in passages[0][1]


def test_a_question_about_the_foreword_gets_it(norm: tuple[SearchService, OpenSearch]) -> None:
    passages = _passages(norm[0], "кем разработан свод правил о ширине эвакуационных выходов")
    assert passages[0][1].startswith(("Предисловие", "1 РАЗРАБОТАН"))
