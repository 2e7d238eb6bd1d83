"""Parsing in worker processes: a fork server's pool with a per-file timeout and memory cap, each result
collected into the writer (or reported as the file's failure), a stop signal honoured between documents.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from pebble import ProcessExpired, ProcessPool

from ingest.access import AccessRules
from ingest.deadlines import Deadlines, timeout_reason
from ingest.discover import SourceFile
from ingest.heartbeat import drain
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
from ingest.worker import SINGLE_THREADED, ParseJob, ParseResult, init_worker, run_job, sweep_worker_temp
from service.errors import StroidokError
from service.settings import Settings


def _failure_reason(exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, cf.TimeoutError):
        return timeout_reason(timeout_s)
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
                     registry: dict[str, dict[str, Any]], watchdog: Watchdog,
                     status: Callable[[str], None] | None = None) -> Iterator[Parsed]:
    """Parse every file of ``plan.todo`` in worker processes; each result as it arrives: a document ready to
    embed and write, or a file that failed. Workers report each page (``ingest.heartbeat``): the watchdog sees
    a long scan advance, and a file past its deadline is given up (its worker stopped) while the run goes on.
    Signals stop the stream between documents."""
    if not plan.todo:
        return
    ingest = settings.ingest
    parse_options = _parse_options(options, settings)
    workers = options.workers or ingest.workers
    needs_unstructured = any(f.file_type in UNSTRUCTURED_TYPES for f, _ in plan.todo) or options.ocr == "always"
    watchdog.progress("starting parse workers")
    context = worker_context(needs_unstructured)
    beats: Any = context.Queue(10_000)  # type: ignore[attr-defined]
    pool = ProcessPool(max_workers=workers, max_tasks=50, initializer=init_worker,
                       initargs=(ingest.file_memory_mb, beats), context=context)
    deadlines = Deadlines.of(ingest)
    try:
        with stop_on_signals((signal.SIGTERM, signal.SIGHUP)) as stop:
            futures: dict[cf.Future[ParseResult], tuple[SourceFile, str]] = {
                pool.schedule(run_job, (ParseJob(str(f.path), parse_options, ingest.chunk_chars, ingest.chunk_overlap,
                                                 digest, str(f.root), f.identity),)): (f, digest)
                for f, digest in plan.todo
            }
            shown = {str(f.path): f.display for f, _ in plan.todo}
            watchdog.progress("parsing", plan.todo[0][0].display)
            waiting: set[cf.Future[ParseResult]] = set(futures)
            while waiting:
                done, waiting = cf.wait(waiting, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                _take_beats(beats, deadlines, watchdog, shown, status)
                for future in done:
                    source, digest = futures[future]
                    watchdog.progress("parsing", source.display)
                    yield _collected(future, source, digest, rules, registry, deadlines.limit_s(str(source.path)))
                    deadlines.forget(str(source.path))
                    stop.check()  # between documents: a batch being written finishes first
                for future in _give_up(waiting, futures, deadlines):
                    source, _ = futures[future]
                    watchdog.progress("gave up on a file", source.display)
                    yield Parsed(None, FileOutcome(source.display, "failed",
                                                   reason=deadlines.overdue(str(source.path), time.monotonic())
                                                   or timeout_reason(deadlines.limit_s(str(source.path)))))
                    deadlines.forget(str(source.path))
                    waiting.discard(future)
                stop.check()
    except BaseException:
        pool.stop()  # type: ignore[no-untyped-call]  # pebble is untyped
        pool.join(timeout=10)
        raise
    finally:
        sweep_worker_temp()
    pool.close()  # type: ignore[no-untyped-call]
    pool.join()
    sweep_worker_temp()  # the folders of workers that ended with the pool


def _take_beats(beats: Any, deadlines: Deadlines, watchdog: Watchdog, shown: dict[str, str],
                status: Callable[[str], None] | None) -> None:
    now = time.monotonic()
    taken = drain(beats)
    for beat in taken:
        deadlines.beat(beat, now)
        watchdog.progress(beat.describe(), shown.get(beat.path, beat.path))
    if taken and status is not None:
        status(f"{shown.get(taken[-1].path, taken[-1].path)}: {taken[-1].describe()}")


def _give_up(waiting: set[cf.Future[ParseResult]], futures: dict[cf.Future[ParseResult], tuple[SourceFile, str]],
             deadlines: Deadlines) -> list[cf.Future[ParseResult]]:
    """The running files past their deadline, their workers stopped (pebble ends a cancelled task's process)."""
    now = time.monotonic()
    overdue = [f for f in waiting if deadlines.overdue(str(futures[f][0].path), now) is not None]
    for future in overdue:
        future.cancel()
    return overdue


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
    except (Exception, cf.CancelledError) as exc:
        return Parsed(None, FileOutcome(source.display, "failed", reason=_failure_reason(exc, timeout_s)))
    document = PreparedDocument(source, digest, result.parsed, result.chunks, rules.groups_for(source.path),
                                written_before(registry.get(source.doc_id)))
    return Parsed(document, seconds=result.seconds)
