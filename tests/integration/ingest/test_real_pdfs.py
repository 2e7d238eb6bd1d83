"""Real PDFs as archives keep them (``shared/data/real_files``): a font without a Unicode map, a shifted
alphabet, cp1251 read as Latin-1, a fake text layer over page images, a pure scan, a truncated file. Each is
parsed by the code the ingest workers run (pages taken out of the real files where a whole one would only
cost time), and through `stroidok ingest` on a real node: nothing is indexed as garbage, and a page nothing
reads is reported as unread."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from opensearchpy import OpenSearch

import ingest.parse.pdf as pdf_parser
from ingest.parse import ParseOptions, parse_file
from ingest.parse.layer import judge
from ingest.parse.model import ParsedDocument
from ingest.parse.pdf import PdfOptions
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.errors import ParseError
from service.search.service import SearchService
from tests.support.crash import REPO, ingest_env
from tests.support.documents import SHARED, requires_shared
from tests.support.engine import drop_index_resources, product_settings

pytestmark = [pytest.mark.integration, requires_shared]

REAL = SHARED / "real_files"
NO_UNICODE_MAP = REAL / "gost_mechanical/801-78.pdf"
SHIFTED_ALPHABET = REAL / "office_and_scans/ukodeksrf.pdf"
CP1251_AS_LATIN1 = REAL / "gost_mechanical/52545.1-2006.pdf"
FAKE_LAYER = REAL / "gost_mechanical/3722-81.pdf"
FAKE_LAYER_TITLE = REAL / "gost_mechanical/20889-88.pdf"
PURE_SCAN = REAL / "gost_mechanical/8752-79.pdf"
TRUNCATED = REAL / "gost_mechanical/5721-75.pdf"
SIDEWAYS_SCAN = REAL / "gost_mechanical/520-89.pdf"
WORD_TABLES = REAL / "office_and_scans/pr14tz_v5_2007_03_01.docx"
BORN_DIGITAL_TABLES = REAL / "gost_standards/gost-8.417-2024.pdf"  # ruled tables, a two-level header (p. 9)


def pages_of(sources: list[tuple[Path, int]], target: Path) -> Path:
    """A PDF of the given 0-based pages of real files, in that order (the pages' objects copied unchanged)."""
    out = pdfium.PdfDocument.new()
    for source, index in sources:
        pdf = pdfium.PdfDocument(str(source))
        out.import_pages(pdf, [index])
        pdf.close()
    out.save(str(target))
    out.close()
    return target


def page_texts(parsed: ParsedDocument) -> dict[int, str]:
    texts: dict[int, str] = {}
    for block in parsed.blocks:
        texts[block.page] = texts.get(block.page, "") + "\n" + block.text
    return texts


def dictionary_words(parsed: ParsedDocument) -> list[int]:
    texts = page_texts(parsed)
    return [judge(texts.get(page, "")).known for page in range(1, parsed.page_count + 1)]


def test_a_font_without_a_unicode_map_is_read_by_ocr_not_indexed_as_symbols(tmp_path: Path) -> None:
    raw = pdfium.PdfDocument(str(NO_UNICODE_MAP))[2].get_textpage().get_text_range()
    assert len(raw) > 1000 and judge(raw).garbage  # the layer is long, and it is glyph numbers
    parsed = parse_file(pages_of([(NO_UNICODE_MAP, 2), (NO_UNICODE_MAP, 3)], tmp_path / "p.pdf"))
    assert parsed.ocr_pages == 2 and not parsed.unread_pages
    assert min(dictionary_words(parsed)) >= 30
    assert not any(judge(text).garbage for text in page_texts(parsed).values())


def test_a_shifted_alphabet_is_repaired_and_the_dictionary_confirms_it() -> None:
    parsed = parse_file(SHIFTED_ALPHABET)
    assert parsed.repaired_pages == 2 and parsed.ocr_pages == 0
    text = " ".join(page_texts(parsed).values())
    assert "Уголовный кодекс Российской Федерации" in " ".join(text.split())
    assert min(dictionary_words(parsed)) >= 30


def test_cp1251_read_as_latin1_is_repaired(tmp_path: Path) -> None:
    parsed = parse_file(pages_of([(CP1251_AS_LATIN1, 1), (CP1251_AS_LATIN1, 5)], tmp_path / "p.pdf"))
    assert parsed.repaired_pages == 2 and parsed.ocr_pages == 0
    assert "МЕТОДЫ ИЗМЕРЕНИЯ ВИБРАЦИИ" in " ".join(page_texts(parsed).values())
    assert not any("Ã" in text or "Î" in text for text in page_texts(parsed).values())


def test_a_fake_layer_over_page_images_is_read_by_ocr(tmp_path: Path) -> None:
    """Title pages whose only text is a few unrelated words («квартиры московская область», 27 characters:
    too many for the old «fewer than 20 characters» rule) over a full-page image."""
    parsed = parse_file(pages_of([(FAKE_LAYER_TITLE, 0), (FAKE_LAYER, 4)], tmp_path / "p.pdf"))
    assert parsed.ocr_pages == 2
    texts = page_texts(parsed)
    assert "квартиры московская область" not in texts[1] and "ГОСТ" in texts[1]
    assert dictionary_words(parsed)[0] >= 15 and dictionary_words(parsed)[1] >= 30


def test_a_pure_scan_is_read_by_ocr(tmp_path: Path) -> None:
    parsed = parse_file(pages_of([(PURE_SCAN, 2)], tmp_path / "p.pdf"))
    assert parsed.ocr_pages == 1 and dictionary_words(parsed)[0] >= 30


def test_a_scan_set_sideways_is_read_turned(tmp_path: Path) -> None:
    """A table page scanned sideways: upright, tesseract reads mirrored nonsense («OloHHeeeMA … эн иинэвэо»)."""
    parsed = parse_file(pages_of([(SIDEWAYS_SCAN, 12)], tmp_path / "p.pdf"))
    assert parsed.ocr_pages == 1 and not parsed.unread_pages
    assert dictionary_words(parsed)[0] >= 30


def test_a_word_table_longer_than_a_chunk_keeps_its_header_row_in_every_chunk() -> None:
    from ingest.chunk import chunk_blocks

    parsed = parse_file(WORD_TABLES)
    table = max((b for b in parsed.blocks if b.kind == "table"), key=lambda b: len(b.text))
    header, rows = table.text.split("\n")[0], table.text.split("\n")[1:]
    assert len(table.text) > 2000  # longer than a chunk
    holding = [c for c in chunk_blocks(parsed.blocks, 2000, 250) if any(r in c.text for r in rows)]
    assert len(holding) >= 2 and all(c.text.startswith(header) or ("\n" + header) in c.text for c in holding)
    assert all(sum(r in c.text for c in holding) >= 1 for r in rows)  # no row lost or cut


def test_a_born_digital_pdf_table_is_rows_under_one_header_naming_every_column(tmp_path: Path) -> None:
    parsed = parse_file(pages_of([(BORN_DIGITAL_TABLES, 8)], tmp_path / "table.pdf"))
    tables = [b for b in parsed.blocks if b.kind == "table"]
    assert len(tables) == 1
    lines = tables[0].text.split("\n")
    # a two-level header, «Обозначение единицы» over «международное | русское», flattened into one row
    assert lines[0] == ("Величина: Наименование | Величина: Обозначение размерности | Наименование единицы | "
                        "Обозначение единицы: международное | Обозначение единицы: русское")
    assert "Волновое число | L-1 | метр в минус первой степени | т“1 | м-1" in lines
    assert len(lines) == 14
    texts = [b.text for b in parsed.blocks if b.kind != "table"]
    assert any(t.startswith("Таблица 2 — Примеры производных единиц СИ") for t in texts)  # the caption stays
    assert not any("квадратный метр" in t for t in texts)  # the cells are in the table only, not repeated as text


def test_a_frame_of_paragraphs_is_not_taken_for_a_table(tmp_path: Path) -> None:
    """A page whose clauses are drawn in boxes (an OCR layer over a scan of 18829-2017): one column of
    paragraphs, left to the text layer."""
    parsed = parse_file(pages_of([(REAL / "gost_mechanical/18829-2017.pdf", 22)], tmp_path / "boxes.pdf"))
    assert not [b for b in parsed.blocks if b.kind == "table"]
    assert any("Термостат для выдержки образцов" in b.text for b in parsed.blocks)


def test_a_question_on_a_pdf_table_cell_is_answered_by_its_row_under_the_header(
        tmp_path: Path, client: OpenSearch, opensearch_url: str, navec_embedder: NavecEmbedder) -> None:
    """Through the ingest and search_documents on a real node: the passage for a cell's question shows the
    table's header row, then the cell's row, one to a line."""
    folder = tmp_path / "docs"
    folder.mkdir()
    pages_of([(BORN_DIGITAL_TABLES, i) for i in range(7, 11)], folder / "ГОСТ 8.417-2024.pdf")
    settings = product_settings(opensearch_url)
    settings.search.cache_ttl_s = 0
    try:
        assert not run_ingest(IngestOptions([folder]), settings, client, navec_embedder, quiet=True).failed
        answer = SearchService(settings, client, navec_embedder).search(
            {"query": "обозначение единицы удельного объема"}, Principal.of("t", []))
        row = "Удельный объем | L3M\"1 | кубический метр на килограмм | т3 • кд-1 | М'3 • кг-1"
        header = ("Величина: Наименование | Величина: Обозначение размерности | Наименование единицы | "
                  "Обозначение единицы: международное | Обозначение единицы: русское")
        holding = [c for c in answer.results[0].context_chunks if row in c.text.split("\n")]
        assert len(holding) == 1, [c.text for c in answer.results[0].context_chunks]
        lines = holding[0].text.split("\n")
        assert header in lines[:lines.index(row)], holding[0].text
        assert holding[0].page_number == 2  # the fragment's page 2 is the standard's page 9
    finally:
        drop_index_resources(client, settings.index)


def test_a_truncated_file_fails_with_its_reason() -> None:
    with pytest.raises(ParseError, match="not a readable PDF"):
        parse_file(TRUNCATED)


def test_a_page_ocr_cannot_read_either_is_reported_unread_and_left_out(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf_parser, "ocr_page", lambda *_: "\x12\x13'\x16(\x12\x15)*(+*,\x04#" * 30)
    parsed = parse_file(pages_of([(NO_UNICODE_MAP, 2), (SHIFTED_ALPHABET, 0)], tmp_path / "p.pdf"))
    assert parsed.unread_pages == [1] and parsed.repaired_pages == 1
    assert set(page_texts(parsed)) == {2} and any("unread" in w for w in parsed.warnings)


def test_a_file_no_page_of_which_reads_fails_saying_so(tmp_path: Path) -> None:
    options = ParseOptions(pdf=PdfOptions(ocr="never"))
    with pytest.raises(ParseError, match="2 of 2 pages unread"):
        parse_file(pages_of([(NO_UNICODE_MAP, 2), (NO_UNICODE_MAP, 3)], tmp_path / "p.pdf"), options)


def test_ingest_reports_unread_pages_and_indexes_no_garbage(tmp_path: Path, client: OpenSearch, alias: str,
                                                            opensearch_url: str) -> None:
    """`stroidok ingest --ocr never` of a file with a glyph-number page and a shifted-alphabet page: the second
    is repaired and indexed, the first reported unread (outcome, registry, `ingest status`), nothing of it
    indexed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    pages_of([(NO_UNICODE_MAP, 2), (SHIFTED_ALPHABET, 0)], folder / "смешанный.pdf")
    env = ingest_env(opensearch_url, alias, STROIDOK_INDEX_SHARDS="1")
    done = subprocess.run([sys.executable, "-m", "service.cli", "ingest", str(folder), "--ocr", "never", "--json"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)["files"][0]
    assert outcome["status"] == "indexed" and outcome["unread"] == [1]
    client.indices.refresh(index=alias)
    chunks = [h["_source"] for h in client.search(index=alias, body={"size": 50, "_source": ["text", "page_number"]})
              ["hits"]["hits"]]
    assert chunks and {c["page_number"] for c in chunks} == {2}
    assert not any(judge(c["text"]).garbage for c in chunks)
    status = subprocess.run([sys.executable, "-m", "service.cli", "ingest", "status", "--json"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    summary = json.loads(status.stdout)
    assert summary["repaired_pages"] == 1
    assert [(Path(u["file_path"]).name, u["unread_pages"]) for u in summary["unread"]] == [("смешанный.pdf", [1])]
