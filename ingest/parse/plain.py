"""Plain text (TXT): decoded, split into pages at form feeds (as ``pdftotext`` writes them), running
headers and footers dropped, paragraphs and headings found line by line: the same page and block
model as PDF, without ``unstructured`` (which made every short line an element of its own).
"""

from __future__ import annotations

from pathlib import Path

from ingest.parse.model import HEAD_CHARS, HEAD_PAGES, ParsedDocument
from ingest.parse.repair import DocumentWords
from ingest.parse.text import page_blocks, strip_running_lines
from service.errors import ParseError

FORM_FEED = "\f"


def decode(data: bytes, encoding: str | None = None) -> str:
    """The text of ``data``: the given encoding, else UTF-8 (with or without BOM), else the encoding
    ``charset_normalizer`` finds most likely (cp1251 archives are common). Undecodable is an error."""
    if encoding:
        try:
            return data.decode(encoding)
        except (LookupError, UnicodeDecodeError) as exc:
            raise ParseError(f"not readable as {encoding}: {exc}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise ParseError("not a text file in any known encoding")
    return str(best)


def split_pages(text: str) -> list[str]:
    """Pages at form feeds; a trailing form feed does not make an empty last page."""
    pages = text.replace("\r\n", "\n").replace("\r", "\n").split(FORM_FEED)
    while len(pages) > 1 and not pages[-1].strip():
        pages.pop()
    return pages


def parse_plain(path: Path, encoding: str | None = None) -> ParsedDocument:
    raw = split_pages(decode(path.read_bytes(), encoding))
    pages = strip_running_lines(raw)
    words = DocumentWords(pages)
    blocks = [b for number, page in enumerate(pages, 1) for b in page_blocks(page, number, words=words)]
    return ParsedDocument(blocks, len(pages), "plain", head="\n".join(raw[:HEAD_PAGES])[:HEAD_CHARS])
