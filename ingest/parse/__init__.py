"""Parse one file into blocks with page numbers. Formats: PDF (pypdfium2 or unstructured, OCR for
scans) and everything ``unstructured`` reads cheaply without torch."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ingest.parse.archive import ZIP_TYPES, check_archive
from ingest.parse.model import ParsedDocument
from ingest.parse.pdf import PdfOptions, parse_pdf
from ingest.parse.plain import parse_plain
from ingest.parse.references import document_references
from ingest.parse.text import merge_broken_blocks, strip_controls
from ingest.parse.titles import Identity, identify, title_problems
from service.errors import ParseError
from service.search.request.contract import FILE_TYPES

SUPPORTED_TYPES = set(FILE_TYPES)
#: bumped whenever parsing, repair or chunking changes what a file becomes (part of every file's fingerprint)
PARSER_VERSION = 27
PLAIN_TYPES = {"txt"}
UNSTRUCTURED_TYPES = SUPPORTED_TYPES - {"pdf"} - PLAIN_TYPES


@dataclass(frozen=True)
class ParseOptions:
    pdf: PdfOptions = field(default_factory=PdfOptions)
    encoding: str | None = None


def file_type(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def parse_file(path: Path, options: ParseOptions = ParseOptions()) -> ParsedDocument:
    """Parse ``path``; a document that yields no text at all is an error, never an empty success."""
    kind = file_type(path)
    if kind not in SUPPORTED_TYPES:
        raise ParseError(f"unsupported file type .{kind}")
    if kind in ZIP_TYPES:
        check_archive(path)
    if kind == "pdf":
        parsed = parse_pdf(path, options.pdf)
    elif kind in PLAIN_TYPES:
        parsed = parse_plain(path, options.encoding)
    else:
        from ingest.parse.office import parse_with_unstructured

        parsed = parse_with_unstructured(path, options.encoding)
    parsed.blocks = merge_broken_blocks(parsed.blocks)
    identity = better_identity(identify(parsed.head, parsed.title, path), parsed, path)
    parsed.title, parsed.designation = identity.title, identity.designation
    sanitise(parsed)
    links = document_references(parsed.blocks, parsed.head, parsed.designation)
    parsed.cites, parsed.cited_names, parsed.replaces = links.cites, links.names, links.replaces
    parsed.introduced, parsed.amendments, parsed.withdrawn = links.introduced, links.amendments, links.withdrawn
    if not parsed.blocks and parsed.unread_pages:
        raise ParseError(f"no page reads as language: {len(parsed.unread_pages)} of {parsed.page_count} pages "
                         "unread (neither the text layer, a repair nor OCR)", details={"warnings": parsed.warnings})
    if not parsed.blocks:
        raise ParseError(f"no text found ({parsed.page_count} pages)", details={"warnings": parsed.warnings})
    return parsed


TITLE_PAGES = 8  # pages searched for a title page when the first ones give no clean title


def better_identity(first: Identity, parsed: ParsedDocument, path: Path) -> Identity:
    """``first`` when its title is clean, else the first clean one a later page gives the same designation
    (a cover, an order or a publisher's page before the title page); never boilerplate: without a clean name
    the title is the designation alone (the archive's references may name it later, ``ingest/links.py``)."""
    problems = title_problems(first.title, first.designation) if first.designation else []
    if not problems:
        return first
    for page in range(1, TITLE_PAGES + 1):
        text = "\n".join(b.text for b in parsed.blocks if b.page == page)
        found = identify(text, None, path) if text else None
        if found and found.designation == first.designation and not title_problems(found.title, found.designation):
            return found
    return Identity(first.designation, None) if "boilerplate" in problems else first


#: the product's own marks (the highlighter's around matches, the table reader's before rows): private-use
#: characters a document must not carry into the index, where they would forge «matches» in a shown passage
PRODUCT_MARKS = re.compile("[\ue000-\ue01f]")


def clean(text: str) -> str:
    return PRODUCT_MARKS.sub("", strip_controls(text)).strip()


def sanitise(parsed: ParsedDocument) -> None:
    """Whatever the parser, no control character, terminal escape or mark of the product's reaches the index."""
    blocks = (replace(b, text=clean(b.text)) for b in parsed.blocks)
    parsed.blocks = [b for b in blocks if b.text]
    parsed.title = clean(parsed.title) or None if parsed.title else None
