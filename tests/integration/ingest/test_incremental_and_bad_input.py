"""Re-runs are cheap and exact; bad files are reported, never indexed empty, never stop the batch."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from opensearchpy import OpenSearch

from ingest.discover import document_id
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from ingest.report import RunReport
from service.embedders.navec import NavecEmbedder
from service.settings import Settings
from tests.support.documents import GOST_PDF, make_scanned_pdf, requires_shared
from tests.support.engine import drop_index_resources, product_settings

pytestmark = [pytest.mark.integration, requires_shared]

PARAGRAPH = "Раздел {n}. Требования к устройству монолитных бетонных конструкций номер {n} и контролю прочности.\n\n"


def write_doc(path: Path, paragraphs: int, marker: str) -> Path:
    path.write_text(f"{marker}\n\n" + "".join(PARAGRAPH.format(n=i) * 8 for i in range(paragraphs)), encoding="utf-8")
    return path


def phrase_hits(client: OpenSearch, alias: str, phrase: str) -> int:
    return int(client.count(index=alias, body={"query": {"match_phrase": {"text": phrase}}})["count"])


def chunks_of(client: OpenSearch, alias: str, path: Path) -> int:
    return int(client.count(index=alias, body={"query": {"term": {"doc_id": document_id(path)}}})["count"])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3):
        write_doc(root / f"doc{i}.txt", 6, f"маркерный текст документа {i}")
    return root


def ingest(root: Path, settings: Settings, client: OpenSearch, embedder: Any, **options: Any) -> RunReport:
    return run_ingest(IngestOptions([root], **options), settings, client, embedder, quiet=True)


def test_unchanged_rerun_parses_and_embeds_nothing(folder: Path, settings: Settings, client: OpenSearch,
                                                   navec_embedder: NavecEmbedder) -> None:
    first = ingest(folder, settings, client, navec_embedder)
    assert first.counts["indexed"] == 3

    again = ingest(folder, settings, client, navec_embedder)

    assert again.counts == {"skipped": 3}
    # nothing parsed, embedded or written; the links are settled on every run (a registry scan, nothing re-parsed)
    assert again.timings.keys() == {"parse", "embed", "index", "links"}
    assert (again.timings["parse"], again.timings["embed"], again.timings["index"]) == (0.0, 0.0, 0.0)


def test_editing_one_file_reindexes_only_that_file(folder: Path, settings: Settings, client: OpenSearch,
                                                   navec_embedder: NavecEmbedder) -> None:
    ingest(folder, settings, client, navec_embedder)
    write_doc(folder / "doc1.txt", 6, "совершенно новая редакция документа")

    report = ingest(folder, settings, client, navec_embedder)

    assert report.counts == {"indexed": 1, "skipped": 2}
    assert [Path(o.path).name for o in report.outcomes if o.status == "indexed"] == ["doc1.txt"]
    alias = settings.index.alias
    assert phrase_hits(client, alias, "совершенно новая редакция документа") == 1
    assert phrase_hits(client, alias, "маркерный текст документа 1") == 0


def test_a_shorter_new_version_leaves_no_stale_chunks(folder: Path, settings: Settings, client: OpenSearch,
                                                      navec_embedder: NavecEmbedder) -> None:
    ingest(folder, settings, client, navec_embedder)
    before = chunks_of(client, settings.index.alias, folder / "doc2.txt")
    write_doc(folder / "doc2.txt", 1, "короткая редакция")

    report = ingest(folder, settings, client, navec_embedder)

    (outcome,) = [o for o in report.outcomes if o.status == "indexed"]
    after = chunks_of(client, settings.index.alias, folder / "doc2.txt")
    assert after == outcome.chunks < before


def test_deleting_a_file_removes_its_chunks(folder: Path, settings: Settings, client: OpenSearch,
                                            navec_embedder: NavecEmbedder) -> None:
    ingest(folder, settings, client, navec_embedder)
    assert chunks_of(client, settings.index.alias, folder / "doc0.txt") > 0
    (folder / "doc0.txt").unlink()

    report = ingest(folder, settings, client, navec_embedder)

    assert report.counts == {"deleted": 1, "skipped": 2}
    assert chunks_of(client, settings.index.alias, folder / "doc0.txt") == 0
    assert client.count(index=settings.index.files_index)["count"] == 2


class DropsTheIndex:
    """navec, but the chunk index is deleted (by an operator, another process) while the first batch embeds."""

    def __init__(self, real: Any, client: OpenSearch, alias: str) -> None:
        self.real, self.identity, self.client, self.alias = real, real.identity, client, alias

    def embed_documents(self, texts: list[str]) -> Any:
        if self.client.indices.exists_alias(name=self.alias):
            self.client.indices.delete(index=list(self.client.indices.get_alias(name=self.alias)))
        return self.real.embed_documents(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_chunks_written_after_the_index_vanished_fail_and_create_no_stray_index(folder: Path, settings: Settings,
                                                                                client: OpenSearch,
                                                                              navec_embedder: NavecEmbedder) -> None:
    """A write to the alias after its index was deleted must fail (reported), never auto-create a plain index
    of that name with guessed mappings, where the chunks would be unsearchable and block the next setup."""
    report = ingest(folder, settings, client, DropsTheIndex(navec_embedder, client, settings.index.alias))

    assert report.counts.get("failed") == 3 and "indexed" not in report.counts
    assert not client.indices.exists(index=settings.index.alias)


def test_dry_run_changes_nothing(folder: Path, settings: Settings, client: OpenSearch,
                                 navec_embedder: NavecEmbedder) -> None:
    report = ingest(folder, settings, client, navec_embedder, dry_run=True)
    assert report.counts == {"planned": 3}
    assert client.count(index=settings.index.alias)["count"] == 0


def make_docx_bomb(path: Path) -> None:
    """A valid DOCX whose 1.4 MB zip holds a 360 MB document.xml (refused before it is expanded)."""
    import docx

    base = path.with_suffix(".base.docx")
    document = docx.Document()
    document.add_paragraph("x")
    document.save(str(base))
    paragraph = ("<w:p><w:r><w:t>" + "бетон " * 2000 + "</w:t></w:r></w:p>") * 100
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bomb:
        for item in source.infolist():
            if item.filename != "word/document.xml":
                bomb.writestr(item, source.read(item.filename))
                continue
            with bomb.open("word/document.xml", "w", force_zip64=True) as xml:
                xml.write(b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                          b"<w:body>")
                for _ in range(300):
                    xml.write(paragraph.encode())
                xml.write(b"</w:body></w:document>")
    base.unlink()


def make_bad_files(root: Path) -> dict[str, str]:
    """Corrupt inputs of several kinds; values are words the failure reason must contain."""
    (root / "truncated.pdf").write_bytes(GOST_PDF.read_bytes()[:5000])
    with pikepdf.open(GOST_PDF) as pdf:
        pdf.save(root / "encrypted.pdf", encryption=pikepdf.Encryption(user="secret", owner="secret"))
    (root / "empty.txt").write_bytes(b"")
    (root / "garbage.docx").write_bytes(os.urandom(4096))
    make_docx_bomb(root / "bomb.docx")
    return {"truncated.pdf": "not a readable PDF", "encrypted.pdf": "password", "empty.txt": "no text found",
            "garbage.docx": "not a ZIP archive", "bomb.docx": "zip bomb"}


def test_corrupt_files_are_reported_and_the_rest_indexed(folder: Path, opensearch_url: str, client: OpenSearch,
                                                         navec_embedder: NavecEmbedder) -> None:
    bad = make_bad_files(folder)
    settings = product_settings(opensearch_url, file_memory_mb=1024,
                                file_timeout_s=60)
    try:
        report = ingest(folder, settings, client, navec_embedder)
        outcomes = {Path(o.path).name: o for o in report.outcomes}
        assert {n for n, o in outcomes.items() if o.status == "indexed"} == {"doc0.txt", "doc1.txt", "doc2.txt"}
        for name, word in bad.items():
            assert outcomes[name].status == "failed", outcomes[name]
            assert outcomes[name].reason and word in outcomes[name].reason
        assert client.count(index=settings.index.files_index)["count"] == 3
    finally:
        drop_index_resources(client, settings.index)


def test_a_file_over_the_time_cap_is_stopped_and_reported(tmp_path: Path, opensearch_url: str, client: OpenSearch,
                                                          navec_embedder: NavecEmbedder) -> None:
    root = tmp_path / "slow"
    root.mkdir()
    make_scanned_pdf(root / "long-scan.pdf", pages=24)
    write_doc(root / "quick.txt", 2, "быстрый документ")
    # OCR reads a clean synthetic page in ~0.7 s now: 24 pages against a 5 s cap, no per-page allowance
    settings = product_settings(opensearch_url, file_timeout_s=5, page_timeout_s=0)
    try:
        report = ingest(root, settings, client, navec_embedder)
        outcomes = {Path(o.path).name: o for o in report.outcomes}
        assert outcomes["quick.txt"].status == "indexed"
        assert outcomes["long-scan.pdf"].status == "failed"
        assert "longer than 5s" in outcomes["long-scan.pdf"].reason
    finally:
        drop_index_resources(client, settings.index)


def test_cli_exits_non_zero_when_a_file_failed(folder: Path, settings: Settings, opensearch_url: str) -> None:
    (folder / "empty.txt").write_bytes(b"")
    env = {**os.environ, "OPENSEARCH_URL": opensearch_url, "STROIDOK_INDEX_ALIAS": settings.index.alias,
           "DO_NOT_TRACK": "1"}
    done = subprocess.run([sys.executable, "-m", "service.cli", "ingest", str(folder)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "3 indexed" in done.stdout and "1 failed" in done.stdout
    assert "failed: no text found" in done.stdout
