"""The search tiers' small controlled corpus: 28 documents of five kinds (one readable by the legal group
only), ingested once per package through the product's own ingest path."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from evaluation.sample import render_pdf
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.embedders.navec import NavecEmbedder
from service.settings import Settings
from tests.support.engine import drop_index_resources, product_settings

FILES = {
    "нормы/пожарная-безопасность.txt": ("2024-03-15", "Пожарная безопасность зданий. Эвакуационные пути и выходы "
                                        "должны обеспечивать безопасную эвакуацию людей при пожаре. Ширина "
                                        "эвакуационного выхода не менее 1,2 м."),
    "нормы/бетон.docx": ("2024-05-10", "Контроль прочности бетона. Испытание контрольных образцов бетона на сжатие "
                         "проводят в возрасте 28 суток по ГОСТ 10180-2012."),
    "сметы/смета.xlsx": ("2025-01-20", "Устройство монолитной фундаментной плиты из бетона класса В25"),
    "нормы/сварка.pdf": ("2025-02-05", "Сварка стальных конструкций. Монтажный стык выполняется ручной дуговой "
                         "сваркой электродами типа Э50А. Контроль качества сварных швов ультразвуком."),
    "секретно/договор.txt": ("2024-03-20", "Секретный договор подряда. Пожарная безопасность объекта обеспечивается "
                             "подрядчиком. Гидрофобизатор кремнийорганический марки ГКЖ."),
}
INSULATION_DOCS = 24
ACCESS_RULES = {"rules": [{"pattern": "секретно/*", "groups": ["legal"]}]}


def write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".txt":
        path.write_text(text, encoding="utf-8")
    elif path.suffix == ".docx":
        import docx

        document = docx.Document()
        document.add_paragraph(text)
        document.save(str(path))
    elif path.suffix == ".xlsx":
        from openpyxl import Workbook

        book = Workbook()
        book.active.title = "Смета"
        book.active.append(["Работа", "Ед."])
        book.active.append([text, "м3"])
        book.save(path)
    elif path.suffix == ".pdf":
        render_pdf([text, "Приложение А. Таблица сварочных материалов."], path, "Сварка")


def set_date(path: Path, day: str) -> None:
    stamp = datetime.fromisoformat(day + "T12:00:00").timestamp()
    os.utime(path, (stamp, stamp))


@pytest.fixture(scope="package")
def search_corpus(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
                  navec_embedder: NavecEmbedder) -> Iterator[tuple[Path, Settings]]:
    root = tmp_path_factory.mktemp("search-corpus")
    for name, (day, text) in FILES.items():
        write_file(root / name, text)
        set_date(root / name, day)
    for i in range(INSULATION_DOCS):
        path = root / "утеплители" / f"утеплитель-{i:02d}.txt"
        write_file(path, f"Теплоизоляция наружных стен минераловатными плитами, вариант {i}. "
                         f"Толщина утеплителя {100 + i} мм, плотность {30 + i} кг/м3. " * (1 + i % 3))
        set_date(path, f"2024-{1 + i % 12:02d}-10")
    rules = root.parent / f"{root.name}-access.json"
    rules.write_text(json.dumps(ACCESS_RULES), encoding="utf-8")
    settings = product_settings(opensearch_url, access_rules=rules)
    report = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    assert not report.failed, [o.line() for o in report.outcomes if o.status == "failed"]
    yield root, settings
    drop_index_resources(client, settings.index)


@pytest.fixture(scope="package")
def corpus_settings(search_corpus: tuple[Path, Settings]) -> Settings:
    return search_corpus[1]
