"""What a requirement sets, and how it is cited, on a real node: a code whose two clauses share the query's words
(one states the figure), an order numbered flat and a law with articles, ingested through ``run_ingest`` and
searched through ``SearchService`` with its defaults."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.answer.models import ChunkResult
from service.search.service import SearchService
from service.settings import Settings
from tests.support.engine import drop_index_resources, product_settings

ANYONE = Principal.of("t", [])
PAUSE = "Прочие положения раздела о материалах отделки и о порядке приемки выполненных работ заказчиком. " * 8
CODE = ("СП 998.1325800.2099 Лестницы зданий. Правила проектирования\n\f"
        "6 Лестницы\n6.1 Уклон лестничных маршей на путях эвакуации принимают по таблице 4.\n" + PAUSE + "\n"
        "7 Эвакуация\n7.1 Уклон лестничных маршей на путях эвакуации должен быть не более 1:2, ширина марша не "
        "менее 1,05 м.\n")
# paragraphs apart, as a DOCX or a TXT export gives them (text.py does not split a PDF line at «1197.»)
ORDER = "Приказ об утверждении правил безопасности при ведении горных работ\n\f" + "\n\n".join(
    f"{n}. " + ("При установке на ленточном конвейере барабанной сбрасывающей тележки предусматривают проходы "
                "с обеих сторон конвейера." if n == 1197 else f"Требование номер {n} к оборудованию рудника.")
    for n in range(1190, 1202))
LAW = ("Технический регламент о требованиях пожарной безопасности\n\f"
       "Статья 88. Требования к частям зданий\n1. Части зданий разделяют противопожарными преградами.\n"
       "Статья 89. Требования пожарной безопасности к эвакуационным путям\n"
       "1. Эвакуационные пути в зданиях должны обеспечивать безопасную эвакуацию людей.\n"
       "2. Высота эвакуационных выходов в свету должна быть не менее 1,9 метра.\n")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[tuple[Settings, SearchService]]:
    root = tmp_path_factory.mktemp("requirements")
    for name, text in {"СП 998.txt": CODE, "Приказ 505.txt": ORDER, "Закон 123.txt": LAW}.items():
        (root / name).write_text(text, encoding="utf-8")
    settings = product_settings(opensearch_url)
    settings.search.cache_ttl_s = 0
    assert not run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True).failed
    yield settings, SearchService(settings, client, navec_embedder)
    drop_index_resources(client, settings.index)


def _passages(service: SearchService, query: str, name: str) -> list[ChunkResult]:
    results = service.search({"query": query}, ANYONE).results
    return next(r.context_chunks for r in results if r.file_path.endswith(name))


def test_of_two_clauses_with_the_same_words_the_one_stating_the_figure_is_shown_first_under_its_own_label(
        archive: tuple[Settings, SearchService]) -> None:
    # which signal decides is tested on the ranker itself (tests/unit/search/test_ranker.py); here the whole path,
    # and the label: the clause that answers («7.1»), not the section heading above it («7 Эвакуация»)
    _, service = archive
    question = "максимальный уклон лестничных маршей на путях эвакуации"
    first = _passages(service, question, "СП 998.txt")[0]
    assert first.clause == "7.1" and first.text.startswith("7.1") and "не более 1:2" in first.text


def test_a_flat_numbered_order_cites_its_own_paragraph(archive: tuple[Settings, SearchService]) -> None:
    _, service = archive
    first = _passages(service, "проходы у конвейера с барабанной сбрасывающей тележкой", "Приказ 505.txt")[0]
    assert first.clause == "1197" and first.text.startswith("1197. При установке")


def test_a_law_cites_the_article_its_numbered_parts_belong_to(archive: tuple[Settings, SearchService]) -> None:
    _, service = archive
    first = _passages(service, "высота эвакуационных выходов в свету", "Закон 123.txt")[0]
    assert first.clause == "Статья 89" and "не менее 1,9 метра" in first.text
