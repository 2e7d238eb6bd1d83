"""Parse one file into blocks with page numbers. Formats: PDF (pypdfium2 or unstructured, OCR for
scans) and everything ``unstructured`` reads cheaply without torch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ingest.parse.model import ParsedDocument
from ingest.parse.pdf import PdfOptions, parse_pdf
from service.errors import ParseError

UNSTRUCTURED_TYPES = {
    "docx", "doc", "xlsx", "xls", "pptx", "odt", "rtf", "html", "htm", "csv", "tsv", "txt", "md", "epub",
}
SUPPORTED_TYPES = {"pdf"} | UNSTRUCTURED_TYPES


@dataclass(frozen=True)
class ParseOptions:
    pdf: PdfOptions = PdfOptions()
    encoding: str | None = None


def file_type(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def parse_file(path: Path, options: ParseOptions = ParseOptions()) -> ParsedDocument:
    """Parse ``path``; a document that yields no text at all is an error, never an empty success."""
    kind = file_type(path)
    if kind not in SUPPORTED_TYPES:
        raise ParseError(f"unsupported file type .{kind}")
    if kind == "pdf":
        parsed = parse_pdf(path, options.pdf)
    else:
        from ingest.parse.office import parse_with_unstructured

        parsed = parse_with_unstructured(path, options.encoding)
    if not parsed.blocks:
        raise ParseError(f"no text found ({parsed.page_count} pages)", details={"warnings": parsed.warnings})
    return parsed
