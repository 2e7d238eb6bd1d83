"""PDF text through pypdfium2 (fast, the default) or unstructured; scanned pages through OCR.

A page with fewer than ``ocr_min_chars`` characters but with an image is a scan (a page with neither
is blank and is left alone). With OCR
``auto`` such pages (only those) are copied into a temporary PDF and read by unstructured's
``ocr_only`` strategy with tesseract's Russian model; ``always`` OCRs every page; ``never`` leaves
them out and says so.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ingest.parse.model import HEAD_CHARS, HEAD_PAGES, Block, ParsedDocument
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


def ocr_pages(pdf: Any, indexes: list[int], languages: list[str]) -> dict[int, str]:
    """OCR text of the given 0-based pages, keyed by page index."""
    import pypdfium2 as pdfium
    from unstructured.partition.pdf import partition_pdf

    subset = pdfium.PdfDocument.new()
    subset.import_pages(pdf, indexes)
    with tempfile.NamedTemporaryFile(suffix=".pdf") as tmp:
        subset.save(tmp.name)
        subset.close()
        elements = partition_pdf(filename=tmp.name, strategy="ocr_only", languages=languages)
    found: dict[int, str] = {i: "" for i in indexes}
    for element in elements:
        position = (element.metadata.page_number or 1) - 1
        if 0 <= position < len(indexes):
            found[indexes[position]] += str(element) + "\n\n"
    return found


def tesseract_languages(spec: str) -> list[str]:
    return [lang for lang in spec.split("+") if lang]


def parse_pdf(path: Path, options: PdfOptions) -> ParsedDocument:
    pdf = _open(path)
    try:
        count = len(pdf)
        if count == 0:
            raise ParseError("the PDF has no pages")
        languages = tesseract_languages(options.ocr_languages)
        texts = pdfium_pages(pdf) if options.parser == "pdfium" else unstructured_pages(path, count, languages)
        scanned = [i for i, t in enumerate(texts) if len(t.strip()) < options.ocr_min_chars and has_images(pdf, i)]
        to_ocr = list(range(count)) if options.ocr == "always" else scanned if options.ocr == "auto" else []
        warnings = []
        if to_ocr:
            for index, text in ocr_pages(pdf, to_ocr, languages).items():
                texts[index] = text
        elif scanned:
            warnings.append(f"{len(scanned)} page(s) without a text layer were not OCRed (--ocr never)")
        head = "\n".join(texts[:HEAD_PAGES])[:HEAD_CHARS]
        texts = strip_running_lines(texts)
        blocks: list[Block] = [b for i, t in enumerate(texts) for b in page_blocks(t, i + 1)]
        return ParsedDocument(blocks, count, f"pdf:{options.parser}", pdf_title(pdf), len(to_ocr), warnings,
                              head=head)
    finally:
        pdf.close()
