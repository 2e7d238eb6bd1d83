"""PDF text through pypdfium2 (fast, the default) or unstructured; pages without language through repair or OCR.

Every page's text layer is judged by its content (``ingest.parse.layer``), not its length. A page whose
layer is not language — glyph numbers from a font without a Unicode map, cp1251 read as Latin-1, an
alphabet shifted by a constant — is repaired where the fault is known and the dictionary confirms the
repair, and read by OCR otherwise. A page with (almost) no text but an image is a scan; a page whose images
cover most of it and whose layer holds few dictionary words is a scan under a fake or sparse layer, and OCR's
text replaces the layer's when it reads more words. OCR renders the page with pdfium and calls tesseract
directly (one thread per page: the parse workers are the parallelism); a page OCR reads as garbage upright is
read again turned (tesseract's orientation detection first, then the other quarter turns). A page neither its layer nor
OCR reads is left out and reported as unread, never indexed as garbage. ``--ocr never`` reports the pages it
leaves unread; ``always`` OCRs every page.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ingest import heartbeat
from ingest.parse.layer import Verdict, judge, repair, strip_controls
from ingest.parse.model import HEAD_CHARS, HEAD_PAGES, Block, ParsedDocument
from ingest.parse.repair import DocumentWords
from ingest.parse.tables import find_tables, has_caption, page_with_tables, ruled_pages
from ingest.parse.text import page_blocks, strip_running_lines
from service.errors import ParseError

OcrMode = Literal["auto", "never", "always"]


PdfParser = Literal["pdfium", "unstructured"]


@dataclass(frozen=True)
class PdfOptions:
    parser: PdfParser = "pdfium"
    ocr: OcrMode = "auto"
    ocr_languages: str = "rus+eng"
    ocr_min_chars: int = 20
    ocr_dpi: int = 300
    #: a page whose images cover this share of it and whose layer knows fewer dictionary words is OCRed too
    scan_cover: float = 0.5
    scan_words: int = 30
    #: ruled tables of born-digital pages read as tables (rows with their headers: ingest/parse/tables.py)
    tables: bool = True


def _open(path: Path) -> Any:
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise ParseError(f"not a readable PDF: {exc}") from exc


def pdf_title(pdf: Any) -> str | None:
    title = (pdf.get_metadata_dict().get("Title") or "").strip()
    return title if len(title) > 3 and not title.lower().startswith(("microsoft", "untitled")) else None


def pdfium_pages(pdf: Any) -> list[str]:
    texts = []
    for index in range(len(pdf)):
        page = pdf[index]
        textpage = page.get_textpage()
        texts.append(textpage.get_text_range())
        textpage.close()
        page.close()
    return texts


def image_cover(pdf: Any, index: int) -> float:
    """The share of the page its images cover (0 for none; capped at 1), from their bounding boxes."""
    import pypdfium2.raw as pdfium_c

    page = pdf[index]
    try:
        width, height = page.get_size()
        area = 0.0
        for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3):
            left, bottom, right, top = (getattr(image, "get_bounds", None) or image.get_pos)()  # 5.x / 4.x
            area += max(0.0, min(right, width) - max(left, 0.0)) * max(0.0, min(top, height) - max(bottom, 0.0))
        return min(1.0, area / (width * height)) if width and height else 0.0
    finally:
        page.close()


def has_images(pdf: Any, index: int) -> bool:
    """Whether a page carries any image (a page with neither text nor images is blank, not a scan)."""
    import pypdfium2.raw as pdfium_c

    page = pdf[index]
    try:
        return any(True for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3))
    finally:
        page.close()


def unstructured_pages(path: Path, page_count: int, languages: list[str]) -> list[str]:
    """Page texts via unstructured's ``fast`` strategy (pdfminer), elements joined per page."""
    from unstructured.partition.pdf import partition_pdf

    pages = [""] * page_count
    for element in partition_pdf(filename=str(path), strategy="fast", languages=languages):
        number = element.metadata.page_number or 1
        if 1 <= number <= page_count:
            pages[number - 1] += str(element) + "\n\n"
    return pages


def tesseract_text(image: Any, languages: list[str]) -> str:
    import pytesseract

    os.environ["OMP_THREAD_LIMIT"] = "1"  # tesseract's own threads would fight the other parse workers
    try:
        return str(pytesseract.image_to_string(image, lang="+".join(languages)))
    except (pytesseract.TesseractError, OSError) as exc:
        raise ParseError(f"OCR failed: {exc}") from exc


def rotations(image: Any) -> list[int]:
    """Angles (counter-clockwise, as PIL turns) to try on a page read as garbage: the one tesseract's
    orientation detection proposes first, then the other quarter turns (a table set sideways, a sheet
    scanned upside down)."""
    import pytesseract

    angles = [90, 270, 180]
    try:
        proposed = (360 - int(pytesseract.image_to_osd(image, output_type=pytesseract.Output.DICT)["rotate"])) % 360
    except (pytesseract.TesseractError, OSError, KeyError, ValueError):
        return angles
    return [proposed, *[a for a in angles if a != proposed]] if proposed else angles


def ocr_page(pdf: Any, index: int, languages: list[str], dpi: int) -> str:
    """Tesseract's text of one page rendered by pdfium (grey, ``dpi``), on one thread; a page that reads as
    garbage upright is read again turned, and the first turn that reads as language is kept."""
    page = pdf[index]
    try:
        image = page.render(scale=dpi / 72, grayscale=True).to_pil()
    finally:
        page.close()
    text = tesseract_text(image, languages)
    if not judge(text).garbage:
        return text
    for angle in rotations(image):
        turned = tesseract_text(image.rotate(angle, expand=True), languages)
        if not judge(turned).garbage:
            return turned
    return text


@dataclass
class PageReading:
    """How a document's pages were read: the texts, and which pages were repaired, OCRed, left unread."""

    texts: list[str]
    repaired: dict[int, str] = field(default_factory=dict)
    ocr: list[int] = field(default_factory=list)
    unread: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def needs_ocr(text: str, verdict: Verdict, pdf: Any, index: int, options: PdfOptions) -> bool:
    """A scan: (almost) no text and an image, or a sparse layer over images covering most of the page."""
    if len(text.strip()) < options.ocr_min_chars:
        return has_images(pdf, index)
    return verdict.known < options.scan_words and image_cover(pdf, index) >= options.scan_cover


def read_layers(pdf: Any, texts: list[str], options: PdfOptions) -> tuple[PageReading, list[int], list[int]]:
    """Each page's layer judged: kept, repaired, or marked for OCR (garbage, and scans)."""
    reading = PageReading(list(texts))
    garbage, scans = [], []
    for index, text in enumerate(texts):
        heartbeat.page(index + 1, len(texts))
        verdict = judge(text)
        if verdict.garbage:
            fixed = repair(text)
            if fixed is not None:
                reading.texts[index], reading.repaired[index] = strip_controls(fixed[0]), fixed[1]
            else:
                garbage.append(index)
        elif options.ocr == "always" or needs_ocr(text, verdict, pdf, index, options):
            scans.append(index)
    return reading, garbage, scans


def better_text(layer: str, ocr: str, theirs: Verdict) -> str | None:
    """OCR's text (judged: ``theirs``) where it reads, the layer's where it reads more dictionary words; None
    when neither reads."""
    mine = judge(layer)
    candidates = [(v.known, t) for v, t in ((theirs, ocr), (mine, layer)) if not v.garbage and t.strip()]
    return max(candidates, key=lambda c: c[0])[1] if candidates else None


def read_pages(pdf: Any, texts: list[str], options: PdfOptions, languages: list[str]) -> PageReading:
    reading, garbage, scans = read_layers(pdf, texts, options)
    to_ocr = sorted(garbage + scans) if options.ocr != "never" else []
    for index in to_ocr:
        heartbeat.page(index + 1, len(texts))
        layer = "" if index in garbage else reading.texts[index]
        ocr = ocr_page(pdf, index, languages, options.ocr_dpi)
        verdict = judge(ocr)
        text = better_text(layer, ocr, verdict)
        reading.ocr.append(index)
        if text is None and (index in garbage or layer.strip() or verdict.words):
            reading.unread.append(index)  # something is on the page, and nothing reads it as language
        reading.texts[index] = text or ""
    if options.ocr == "never":
        for index in garbage:
            reading.texts[index] = ""
            reading.unread.append(index)
        if scans:
            reading.warnings.append(f"{len(scans)} scanned page(s) were not OCRed (--ocr never)")
    if reading.repaired:
        kinds = sorted(set(reading.repaired.values()))
        reading.warnings.append(f"{len(reading.repaired)} page(s) with a broken text layer repaired "
                                f"({', '.join(kinds)})")
    if reading.unread:
        reading.warnings.append(f"{len(reading.unread)} page(s) unread: neither the text layer nor OCR gave "
                                f"language (pages {', '.join(str(i + 1) for i in sorted(reading.unread))})")
    return reading


#: a page whose images cover this share of it is a scan (its tables are left to the text layer)
SCAN_COVER = 0.5


def with_tables(path: Path, pdf: Any, reading: PageReading) -> None:
    """The born-digital pages read from their own layer (not scans, not OCRed, not repaired) that caption a
    table and draw its ruling get their tables as rows with headers. A page pdfplumber cannot read keeps its
    layer's text."""
    taken = set(reading.ocr) | set(reading.repaired) | set(reading.unread)
    # a page image under an OCR layer is a scan: its cells' text is OCR's, often turned or reversed in a table
    # («нилиц ртемаиД»), and its rows stay in the layer's reading order
    drawn = [i for i, text in enumerate(reading.texts)
             if i not in taken and has_caption(text) and image_cover(pdf, i) < SCAN_COVER]
    candidates = ruled_pages(pdf, drawn)
    try:
        found = find_tables(path, candidates) if candidates else {}
    except Exception as exc:  # pdfminer's own errors on a page pdfium reads: the tables stay text
        reading.warnings.append(f"tables not read ({type(exc).__name__}: {str(exc)[:120]})")
        return
    for index, tables in found.items():
        reading.texts[index] = page_with_tables(pdf, index, tables)


def tesseract_languages(spec: str) -> list[str]:
    return [lang for lang in spec.split("+") if lang]


def parse_pdf(path: Path, options: PdfOptions) -> ParsedDocument:
    pdf = _open(path)
    try:
        count = len(pdf)
        if count == 0:
            raise ParseError("the PDF has no pages")
        heartbeat.pages(count)
        languages = tesseract_languages(options.ocr_languages)
        raw = pdfium_pages(pdf) if options.parser == "pdfium" else unstructured_pages(path, count, languages)
        reading = read_pages(pdf, raw, options, languages)
        if options.tables and options.parser == "pdfium":
            with_tables(path, pdf, reading)
        texts = reading.texts
        head = "\n".join(texts[:HEAD_PAGES])[:HEAD_CHARS]
        texts = strip_running_lines(texts)
        words = DocumentWords(texts)
        blocks: list[Block] = [b for i, t in enumerate(texts) for b in page_blocks(t, i + 1, words=words)]
        return ParsedDocument(blocks, count, f"pdf:{options.parser}", pdf_title(pdf), len(reading.ocr),
                              reading.warnings, head=head, unread_pages=sorted(i + 1 for i in reading.unread),
                              repaired_pages=len(reading.repaired))
    finally:
        pdf.close()
