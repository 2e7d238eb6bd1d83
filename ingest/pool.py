"""Parsing in worker processes: a fork server's pool with a per-file timeout and memory cap, each result
collected into the batcher (or reported as the file's failure), a stop signal honoured between documents.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import multiprocessing.forkserver
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pebble import ProcessExpired, ProcessPool

from ingest.access import AccessRules
from ingest.discover import SourceFile
from ingest.index import (
    PreparedDocument,
    written_before,
)
from ingest.parse import UNSTRUCTURED_TYPES, ParseOptions
from ingest.parse.pdf import PdfOptions, PdfParser
from ingest.plan import IngestOptions, Plan
from ingest.report import FileOutcome
from ingest.signals import stop_on_signals
from ingest.watchdog import Watchdog
from ingest.worker import SINGLE_THREADED, ParseJob, ParseResult, init_worker, run_job
from service.errors import StroidokError
from service.settings import IngestSettings, Settings


def pdf_pages(path: Path) -> int:
    """A PDF's page count (pdfium reads it from the trailer in milliseconds); 0 when it cannot tell."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except (pdfium.PdfiumError, OSError):
        return 0
    try:
        return len(pdf)
    finally:
        pdf.close()


def file_timeout(source: SourceFile, ingest: IngestSettings) -> float:
    """The parse time a file is given: the per-file cap, plus the per-page allowance for each page of a PDF
    (a scan is read by OCR page by page, so a long one needs more than a short one)."""
    pages = pdf_pages(source.path) if source.file_type == "pdf" else 0
    return ingest.file_timeout_s + ingest.page_timeout_s * pages


def _failure_reason(exc: Exception, timeout_s: float) -> str:
    if isinstance(exc, cf.TimeoutError):
        return (f"parsing took longer than {timeout_s:.0f}s (STROIDOK_INGEST_FILE_TIMEOUT_S, "
                "plus STROIDOK_INGEST_PAGE_TIMEOUT_S a PDF page)")
    if isinstance(exc, MemoryError):
        return "parsing exceeded the per-file memory cap (STROIDOK_INGEST_FILE_MEMORY_MB)"
    if isinstance(exc, ProcessExpired):
        return f"the parser process died (exit code {exc.exitcode})"
    if isinstance(exc, StroidokError):
        return exc.message
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def _parse_options(options: IngestOptions, settings: Settings) -> ParseOptions:
    ingest = settings.ingest
    pdf = PdfOptions(parser=cast(PdfParser, options.pdf_parser or ingest.pdf_parser), ocr=options.ocr,
                     ocr_languages=ingest.ocr_languages, ocr_min_chars=ingest.ocr_min_chars, tables=ingest.pdf_tables)
    return ParseOptions(pdf=pdf, encoding=options.encoding)


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def worker_context(preload_unstructured: bool) -> multiprocessing.context.BaseContext:
    """Workers come from a fork server (a clean, single-threaded process started once, preloading the
    parsers), never from a fork of this threaded process: fork safety by construction."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["ingest.forkserver_guard", "ingest.worker"]
                                   + (["unstructured.partition.auto"] if preload_unstructured else []))
    with _environment(SINGLE_THREADED):
        multiprocessing.forkserver.ensure_running()
    return context


def parsed_documents(plan: Plan, options: IngestOptions, settings: Settings, rules: AccessRules,
                     registry: dict[str, dict[str, Any]], watchdog: Watchdog) -> Iterator[Parsed]:
    """Parse every file of ``plan.todo`` in worker processes; each result as it arrives: a document ready to
    embed and write, or a file that failed. Signals stop the stream between documents."""
    if not plan.todo:
        return
    ingest = settings.ingest
    parse_options = _parse_options(options, settings)
    workers = options.workers or ingest.workers
    needs_unstructured = any(f.file_type in UNSTRUCTURED_TYPES for f, _ in plan.todo) or options.ocr == "always"
    watchdog.progress("starting parse workers")
    timeouts = {f.path: file_timeout(f, ingest) for f, _ in plan.todo}
    pool = ProcessPool(max_workers=workers, max_tasks=50, initializer=init_worker,
                       initargs=(ingest.file_memory_mb,), context=worker_context(needs_unstructured))
    try:
        with stop_on_signals((signal.SIGTERM, signal.SIGHUP)) as stop:
            futures: dict[cf.Future[ParseResult], tuple[SourceFile, str]] = {
                pool.schedule(run_job, (ParseJob(str(f.path), parse_options, ingest.chunk_chars, ingest.chunk_overlap,
                                                 digest),), timeout=timeouts[f.path]): (f, digest)
                for f, digest in plan.todo
            }
            watchdog.progress("parsing", plan.todo[0][0].display)
            waiting: set[cf.Future[ParseResult]] = set(futures)
            while waiting:
                done, waiting = cf.wait(waiting, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    source, digest = futures[future]
                    watchdog.progress("parsing", source.display)
                    yield _collected(future, source, digest, rules, registry, timeouts[source.path])
                    stop.check()  # between documents: a batch being written finishes first
                stop.check()
    except BaseException:
        pool.stop()  # type: ignore[no-untyped-call]  # pebble is untyped
        pool.join(timeout=10)
        raise
    pool.close()  # type: ignore[no-untyped-call]
    pool.join()


@dataclass(frozen=True)
class Parsed:
    """One file's parse: the document ready to embed and write, or the failed file's outcome."""

    document: PreparedDocument | None
    failed: FileOutcome | None = None
    seconds: float = 0.0


def _collected(future: cf.Future[ParseResult], source: SourceFile, digest: str, rules: AccessRules,
               registry: dict[str, dict[str, Any]], timeout_s: float) -> Parsed:
    try:
        result: ParseResult = future.result()
    except Exception as exc:
        return Parsed(None, FileOutcome(source.display, "failed", reason=_failure_reason(exc, timeout_s)))
    document = PreparedDocument(source, digest, result.parsed, result.chunks, rules.groups_for(source.path),
                                written_before(registry.get(source.doc_id)))
    return Parsed(document, seconds=result.seconds)
