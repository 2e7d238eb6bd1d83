"""Parsing real files with the network cut off (``unshare -n``): no hidden download can pass.

Each file is parsed by ``python -m ingest.parse`` in a fresh network namespace with no route out; a
parser that tried to fetch a model would fail or return nothing, and the known sentences would be
missing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.documents import (
    DOCX_DIR,
    GOST_JSON,
    GOST_PDF,
    TXT_TEXT,
    make_scanned_pdf,
    make_txt,
    make_xlsx,
    requires_shared,
)

pytestmark = [pytest.mark.integration, requires_shared]

DOCX_SENTENCES = {
    "ВСП 22-02-07": ("толщина металла кровли составляет не менее 0,5 мм", 2),
    "Постановление_Правительства": ("обоснование особенностей определения сметной стоимости строительных работ", 2),
    "Приказ-Ростехнадзора": ("Разрешение на применение керосинорезов должен давать технический руководитель", 1),
    "СП 69.13330.2016": ("Субподрядными шахтостроительными организациями должна соблюдаться преемственность", 2),
    "СП 91.13330.2012": ("избегать расположения выработок в зонах крупных тектонических нарушений", 3),
}


def parse_offline(path: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "DO_NOT_TRACK": "1", "UNSTRUCTURED_DISABLE_NOTICE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(["unshare", "-n", sys.executable, "-m", "ingest.parse", str(path), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def page_of(parsed: dict[str, Any], sentence: str) -> set[int]:
    return {b["page"] for b in parsed["blocks"] if sentence in b["text"]}


def test_network_is_really_cut_inside_the_namespace() -> None:
    probe = "import socket; socket.create_connection(('127.0.0.1', 9), timeout=2)"
    done = subprocess.run(["unshare", "-n", sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode != 0
    assert "Network is unreachable" in done.stderr or "Connection refused" in done.stderr


@pytest.mark.parametrize("prefix", sorted(DOCX_SENTENCES))
def test_original_docx_parses_offline_with_known_sentence_on_its_page(prefix: str) -> None:
    (path,) = [p for p in DOCX_DIR.glob("*.docx") if p.name.startswith(prefix)]
    sentence, page = DOCX_SENTENCES[prefix]
    parsed = parse_offline(path)
    assert page_of(parsed, sentence) == {page}
    assert any(b["kind"] == "table" for b in parsed["blocks"]) or prefix.startswith("Постановление")


def test_xlsx_sheets_become_labelled_pages_with_readable_rows(tmp_path: Path) -> None:
    parsed = parse_offline(make_xlsx(tmp_path / "смета.xlsx"))
    rows = {(b["page"], b["page_label"]): b["text"] for b in parsed["blocks"]}
    assert "Устройство монолитной железобетонной фундаментной плиты | м3 | 120" in rows[(1, "Смета")]
    assert "Бетон тяжелый класса прочности В25 | W6 F150" in rows[(2, "Материалы")]


@pytest.mark.parametrize("encoding", ["utf-8", "cp1251"])
def test_txt_parses_offline_in_either_encoding(tmp_path: Path, encoding: str) -> None:
    parsed = parse_offline(make_txt(tmp_path / f"записка-{encoding}.txt", encoding))
    text = " ".join(b["text"] for b in parsed["blocks"])
    assert "Продолжительность строительства жилого дома составляет четырнадцать месяцев." in text
    assert "Ёмкость противопожарного резервуара" in text
    assert text.count(" ") >= TXT_TEXT.count(" ") - 3


def test_image_only_pdf_is_read_by_russian_ocr(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "скан.pdf", pages=2)
    parsed = parse_offline(path)
    assert parsed["ocr_pages"] == 2
    text = " ".join(b["text"] for b in parsed["blocks"] if b["page"] == 2)
    assert "Бетонирование ростверка выполнено" in text
    assert "освидетельствования скрытых работ" in " ".join(b["text"] for b in parsed["blocks"] if b["page"] == 1)


def test_image_only_pdf_without_ocr_is_an_error_not_an_empty_document(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "скан.pdf")
    env = {**os.environ, "DO_NOT_TRACK": "1"}
    done = subprocess.run(["unshare", "-n", sys.executable, "-m", "ingest.parse", str(path), "--ocr", "never"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "PARSE_ERROR"


def _words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.lower().replace("ё", "е")))


def similarity(a: str, b: str) -> float:
    """Weighted Jaccard of the two pages' word bags."""
    left, right = _words(a), _words(b)
    return sum((left & right).values()) / max(1, sum((left | right).values()))


@pytest.mark.parametrize(("pdf_parser", "worst_page"), [("pdfium", 0.25), ("unstructured", 0.1)])
def test_gost_pdf_pages_match_the_reference_text(pdf_parser: str, worst_page: float) -> None:
    """Each PDF page against the reference JSON of the same standard (paginated one or two pages
    earlier: the JSON lacks the blank page and the correction sheet). unstructured's ``fast``
    strategy garbles the table pages 14-22 (similarity ~0.12), hence its lower floor."""
    reference = [p["page_content"] for p in json.loads(GOST_JSON.read_text())["pages"]]
    parsed = parse_offline(GOST_PDF, "--ocr", "never", "--pdf-parser", pdf_parser)
    assert parsed["page_count"] == 38
    figures = {}
    for page in range(1, 39):
        text = " ".join(b["text"] for b in parsed["blocks"] if b["page"] == page)
        if len(text) < 200:
            continue
        window = range(max(0, page - 4), min(len(reference), page + 1))
        figures[page] = max(similarity(text, reference[j]) for j in window)
    print("page similarity:", {p: round(s, 2) for p, s in figures.items()})
    assert len(figures) >= 30
    assert sorted(figures.values())[len(figures) // 2] >= 0.8, figures
    assert min(figures.values()) >= worst_page, figures
    assert sum(s >= 0.6 for s in figures.values()) >= 0.75 * len(figures), figures
