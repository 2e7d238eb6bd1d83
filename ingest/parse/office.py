"""Everything but PDF through ``unstructured``'s ``partition``: DOCX, XLSX, PPTX, ODT, RTF, HTML,
CSV, TXT, MD, EPUB. Tables are kept as readable ``cell | cell`` rows; XLSX sheets become pages
labelled with the sheet name; DOCX pages follow explicit page breaks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from ingest.parse.model import HEAD_CHARS, Block, BlockKind, ParsedDocument
from ingest.parse.text import clean_text, looks_like_heading
from service.errors import ParseError

SKIPPED_CATEGORIES = {"PageBreak", "Image", "Header", "Footer", "PageNumber"}


def html_table_text(html: str) -> str:
    """An HTML table as one line per row, cells separated by `` | `` (empty rows dropped)."""
    import lxml.html

    rows = []
    for tr in lxml.html.fromstring(html).iter("tr"):
        cells = [" ".join(cell.text_content().split()) for cell in tr if cell.tag in ("td", "th")]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


TABULAR_SUFFIXES = {".xlsx", ".xls", ".csv", ".tsv"}


def element_block(element: Any, page: int, label: str | None) -> Block | None:
    category = element.category
    if category in SKIPPED_CATEGORIES:
        return None
    html = getattr(element.metadata, "text_as_html", None)
    if category == "Table" and html:
        text, kind = html_table_text(html), "table"
    else:
        text = clean_text(str(element)).replace("\n", " ")
        kind = "title" if category == "Title" or looks_like_heading(text) else "text"
    kind = cast(BlockKind, kind)
    text = text.strip()
    return Block(text, page, kind, label) if text else None


def _page_of(element: Any, sheets: dict[str, int]) -> tuple[int, str | None]:
    label = getattr(element.metadata, "page_name", None)
    if label:
        return sheets.setdefault(label, len(sheets) + 1), label
    return element.metadata.page_number or 1, None


def parse_with_unstructured(path: Path, encoding: str | None = None) -> ParsedDocument:
    from unstructured.partition.auto import partition

    kwargs: dict[str, Any] = {"encoding": encoding} if encoding else {}
    try:
        elements = partition(filename=str(path), languages=["rus"], **kwargs)
    except (ValueError, KeyError, UnicodeDecodeError, OSError) as exc:
        raise ParseError(f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise ParseError(f"unreadable {path.suffix} file ({type(exc).__name__}: {str(exc)[:200]})") from exc
    sheets: dict[str, int] = {}
    blocks = []
    for element in elements:
        page, label = _page_of(element, sheets)
        if (block := element_block(element, page, label)) is not None:
            blocks.append(block)
    page_count = max((b.page for b in blocks), default=0)
    title = next((b.text for b in blocks if b.kind == "title" and len(b.text) > 3), None)
    # a spreadsheet's first cells are not its title: it is named by its properties or its file name
    tabular = path.suffix.lower() in TABULAR_SUFFIXES
    head = "" if tabular else "\n".join(str(e) for e in elements[:80])[:HEAD_CHARS]
    return ParsedDocument(blocks, page_count, f"unstructured:{path.suffix.lstrip('.').lower()}", title, head=head)
