"""The demo sample ships in the repository: `make demo` (README command 1) ingests it from a clone alone."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.documents import REPO

SAMPLE = REPO / "demo" / "documents"


def test_the_demo_ingests_the_sample_kept_in_the_repository() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^demo:.*?(?=^\S|\Z)", makefile, re.M | re.S)
    assert target is not None and "ingest $(DOCS)" in target[0] and "evaluation.sample" not in target[0]
    assert re.search(r"^SAMPLE := demo/documents$", makefile, re.M) and re.search(r"^DOCS \?= \$\(SAMPLE\)$", makefile,
                                                                                  re.M)


def test_the_sample_is_small_and_holds_every_format_the_parsers_read() -> None:
    files = [p for p in SAMPLE.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) <= 10 * 1024 * 1024
    assert {p.suffix.lower() for p in files} >= {".pdf", ".docx", ".xlsx", ".txt"}
    encodings = {utf8(p) for p in files if p.suffix == ".txt"}
    assert encodings == {True, False}  # a UTF-8 text and a Windows-1251 one


def utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
