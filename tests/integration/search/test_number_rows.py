"""A table without ruling (a TXT render, a scan's text layer) through the shipped path on a real node: its rows
of numbers are stored one to a line under the lines naming their columns, and the passage that answers a
question on a row shows the rows one to a line, labelled with the table's number."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from tests.support.served import served_folder

pytestmark = pytest.mark.integration

ROWS = ["6 1 10 4,0", "8 1,25 13 5,3", "10 1,5 16 6,4", "12 1,75 18 7,5", "16 2 24 10", "20 2,5 30 12,5"]
PROSE = " ".join(f"Болты класса прочности {c} применяют в соединениях конструкций группы {g}."
                 for c, g in [("5.8", "А"), ("8.8", "Б"), ("10.9", "В"), ("12.9", "Г")] * 3)
TEXT = ("ГОСТ 99999-2099 Болты с шестигранной головкой опытные. Конструкция и размеры\n\n"
        "4 Конструкция и размеры\n\n4.1 Конструкция и размеры болтов должны соответствовать указанным в таблице 1. "
        + PROSE + "\n\nТаблица 1 — Размеры болтов, мм\nНоминальный диаметр резьбы d\nШаг резьбы P\n"
        "Размер под ключ S\nВысота головки k\n" + "\n".join(ROWS) + "\n\n4.2 Допускается изготовлять болты "
        "с уменьшенным размером под ключ по согласованию с потребителем. " + PROSE + "\n")
PUBLIC = Principal.of("t", [])


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[SearchService]:
    root = tmp_path_factory.mktemp("rows")
    (root / "ГОСТ 99999-2099.txt").write_text(TEXT, encoding="utf-8")
    with served_folder(root, opensearch_url, client, navec_embedder, 6, PROSE) as served:
        yield served


@pytest.mark.parametrize("mode", ["fulltext", "hybrid"])
def test_a_row_of_a_table_without_ruling_is_shown_one_to_a_line_under_its_table(service: SearchService,
                                                                                mode: str) -> None:
    response = service.search({"query": "размер под ключ болта с диаметром резьбы 12", "search_mode": mode,
                               "max_chunks": 1}, PUBLIC)
    top = response.results[0]
    assert top.designation == "ГОСТ 99999-2099"
    [passage] = top.context_chunks
    assert passage.clause == "Таблица 1"
    lines = passage.text.split("\n")
    assert "12 1,75 18 7,5" in lines  # the row a line of its own, not run into its neighbours
    assert "Размер под ключ S" in lines[0]  # led by the caption and the column names


def test_the_rows_are_stored_one_to_a_line_after_the_column_names(service: SearchService) -> None:
    response = service.search({"query": "размеры болтов таблица 1", "search_mode": "fulltext", "max_chunks": 1},
                              PUBLIC)
    document = service.get_document(response.results[0].id, PUBLIC, clause="Таблица 1")
    assert document.chunk is not None
    stored = document.chunk.text
    assert "Высота головки k\n" + "\n".join(ROWS) in stored
