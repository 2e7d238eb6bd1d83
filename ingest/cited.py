"""A file's text page by page as ``stroidok cite --file`` checks its citations: read by the ingest's parsers (PDF
with OCR where a page needs it, DOCX, XLSX, TXT) within the ingest's bounds — the file size, a worker process with
its memory cap and time limit. Contributed to the service's CLI through the ``stroidok.document_reader`` entry
point, so the search package never imports this one."""

from __future__ import annotations

import concurrent.futures as cf
from pathlib import Path

from pebble import ProcessExpired, ProcessPool

from ingest.deadlines import timeout_reason
from ingest.parse import SUPPORTED_TYPES, UNSTRUCTURED_TYPES, ParseOptions, file_type, parse_file
from ingest.parse.pdf import PdfOptions
from ingest.pool import worker_context
from ingest.worker import init_worker, sweep_worker_temp
from service.errors import ParseError
from service.settings import Settings

Pages = list[tuple[int, str]]


def pages_of(path: str, options: ParseOptions) -> Pages:
    """The parsed text of each page that has any, in page order: its blocks one a line (run in a worker)."""
    parsed = parse_file(Path(path), options)
    pages: dict[int, list[str]] = {}
    for block in parsed.blocks:
        pages.setdefault(block.page, []).append(block.text)
    return [(page, "\n".join(texts)) for page, texts in sorted(pages.items())]


def read_pages(path: Path, settings: Settings) -> Pages:
    """``path``'s pages as the ingest would read them, or ``ParseError`` with the reason (too large, not a type
    the ingest reads, corrupt, no text, over the time or memory cap)."""
    ingest = settings.ingest
    kind = file_type(path)
    if kind not in SUPPORTED_TYPES:
        raise ParseError(f"unsupported file type .{kind}", details={"file": str(path)})
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ParseError(f"cannot read {path}: {exc.strerror or exc}", details={"file": str(path)}) from exc
    if size > ingest.max_file_mb * 1024 * 1024:
        raise ParseError(f"{size} bytes, over STROIDOK_INGEST_MAX_FILE_MB", details={"file": str(path)})
    options = ParseOptions(pdf=PdfOptions(parser=ingest.pdf_parser, ocr_languages=ingest.ocr_languages,
                                          ocr_min_chars=ingest.ocr_min_chars, tables=ingest.pdf_tables))
    limit = ingest.file_timeout_s
    pool = ProcessPool(max_workers=1, initializer=init_worker, initargs=(ingest.file_memory_mb,),
                       context=worker_context(kind in UNSTRUCTURED_TYPES))
    try:
        future = pool.schedule(pages_of, (str(path), options), timeout=limit)
        try:
            return future.result()  # type: ignore[no-any-return]
        except cf.TimeoutError as exc:
            raise ParseError(timeout_reason(limit), details={"file": str(path)}) from exc
        except MemoryError as exc:
            raise ParseError("parsing exceeded the per-file memory cap (STROIDOK_INGEST_FILE_MEMORY_MB)",
                             details={"file": str(path)}) from exc
        except ProcessExpired as exc:
            raise ParseError(f"the parser process died (exit code {exc.exitcode})",
                             details={"file": str(path)}) from exc
    finally:
        pool.stop()  # type: ignore[no-untyped-call]  # pebble is untyped
        pool.join(timeout=10)
        sweep_worker_temp()
