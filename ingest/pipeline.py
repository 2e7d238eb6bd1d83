"""One ingest run: discover → (skip unchanged) → parse in worker processes → chunk → embed → bulk index.

Followable top to bottom: ``run_ingest`` plans the files, removes the documents whose files are
gone, then streams parsed documents into batches of whole documents that are embedded and written.
The embedder's corpus statistics are fitted on the first batch ever written to an index and stored
with it (``service.index_meta``), then reused by every later run and by query-time search.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, cast

from loguru import logger
from opensearchpy import OpenSearch
from pebble import ProcessExpired, ProcessPool

from ingest.access import AccessRules, load_rules
from ingest.discover import Rejected, Shard, SourceFile, content_hash, discover, os_reason
from ingest.index import (
    PreparedDocument,
    delete_document,
    embedding_texts,
    ensure_manual_refresh,
    load_registry,
    write_documents,
    written_before,
)
from ingest.links import settle_links
from ingest.parse import PARSER_VERSION, UNSTRUCTURED_TYPES, ParseOptions
from ingest.parse.pdf import OcrMode, PdfOptions, PdfParser
from ingest.report import FileOutcome, Reporter, RunReport
from ingest.watchdog import Watchdog
from ingest.worker import SINGLE_THREADED, ParseJob, ParseResult, init_worker, run_job
from service.embedders.base import Embedder
from service.errors import IngestError, StroidokError
from service.index_admin import apply_all, optimize, pending_switch, split_if_grown
from service.index_meta import bump_generation, claim_embedder_meta, load_embedder_state
from service.opensearch import engine_errors
from service.settings import Settings

TEXT_FIRST = {"e5"}
"""Embedders too slow to hold up an ingest: by default text first, the vectors right after (docs/embedders.md)."""


@dataclass(frozen=True)
class IngestOptions:
    paths: list[Path]
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    batch_size: int | None = None
    workers: int | None = None
    dry_run: bool = False
    force: bool = False
    ocr: OcrMode = "auto"
    pdf_parser: str | None = None
    encoding: str | None = None
    shard: Shard | None = None
    vectors_later: bool = False


class Interrupted(IngestError):
    """The run was stopped by a signal; what was acknowledged stays, the rest is redone next run."""

    code = "INTERRUPTED"


@dataclass
class Plan:
    todo: list[tuple[SourceFile, str]]
    unchanged: list[SourceFile]
    gone: list[dict[str, Any]]
    too_big: list[SourceFile]
    rejected: list[Rejected] = field(default_factory=list)
    aliases: list[SourceFile] = field(default_factory=list)


def is_current(entry: dict[str, Any] | None, digest: str, groups: list[str]) -> bool:
    """A registry entry describes this exact file version with these access groups, fully written."""
    return entry is not None and bool(entry) and not entry.get("pending") and entry.get("content_hash") == digest \
        and sorted(entry.get("access_groups") or []) == sorted(groups)


def processing_signature(settings: Settings, options: IngestOptions) -> str:
    """Everything besides a file's bytes that decides its chunks: the parser version and options, chunk
    size and overlap. Part of each file's fingerprint, so changing any of them re-indexes the files."""
    ingest = settings.ingest
    return (f"p{PARSER_VERSION}.c{ingest.chunk_chars}.o{ingest.chunk_overlap}."
            f"{options.pdf_parser or ingest.pdf_parser}.{options.ocr}.{options.encoding or 'auto'}")


def fingerprint(digest: str, processing: str) -> str:
    return f"{digest}+{processing}" if processing else digest


def plan_run(files: list[SourceFile | Rejected], registry: dict[str, dict[str, Any]], roots: list[Path], force: bool,
             max_bytes: int, rules: AccessRules | None = None, processing: str = "",
             shard: Shard | None = None) -> Plan:
    """Which files to parse, which are unchanged (same bytes, same processing, same access groups), which
    indexed documents lost their file, and which files cannot be read (reported, never fatal). With a
    ``shard``, ``files`` are that partition's and only its vanished documents are removed."""
    plan = Plan([], [], [], [])
    seen = set()
    for f in sorted(files, key=lambda f: isinstance(f, SourceFile) and f.path.is_symlink()):  # real names first
        if isinstance(f, Rejected):
            plan.rejected.append(f)
            continue
        if f.doc_id in seen:
            plan.aliases.append(f)
            continue
        seen.add(f.doc_id)
        if f.size > max_bytes:
            plan.too_big.append(f)
            continue
        try:
            digest = fingerprint(content_hash(f.path), processing)
        except OSError as exc:
            plan.rejected.append(Rejected(f.display, os_reason(exc)))
            continue
        groups = rules.groups_for(f.path) if rules else list((registry.get(f.doc_id) or {}).get("access_groups", []))
        if is_current(registry.get(f.doc_id), digest, groups) and not force:
            plan.unchanged.append(f)
        else:
            plan.todo.append((f, digest))
    resolved = [r.resolve() for r in roots]
    plan.gone = [e for e in registry.values()
                 if e.get("doc_id") not in seen and (shard is None or shard.holds(str(e.get("doc_id"))))
                 and any(Path(e["file_path"]).is_relative_to(r) for r in resolved)
                 and not Path(e["file_path"]).exists()]
    return plan


class _Batcher:
    """Collects parsed documents and writes them in batches of whole documents."""

    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder, report: RunReport,
                 reporter: Reporter, batch_size: int, stats_ready: bool, watchdog: Watchdog | None = None,
                 vectors_later: bool = False) -> None:
        self.client, self.settings, self.embedder = client, settings, embedder
        self.report, self.reporter, self.batch_size = report, reporter, batch_size
        self.stats_ready = stats_ready or vectors_later  # text first: the backfill fits the statistics
        self.vectors_later = vectors_later
        self.watchdog = watchdog or Watchdog(float("inf"))  # not started: progress is only recorded
        self.pending: list[PreparedDocument] = []

    @property
    def pending_chunks(self) -> int:
        return sum(len(d.chunks) for d in self.pending)

    def add(self, doc: PreparedDocument) -> None:
        self.pending.append(doc)
        threshold = self.batch_size if self.stats_ready else self.settings.embedder.fit_sample
        if self.pending_chunks >= threshold:
            self.flush()

    def _fit(self) -> None:
        self.watchdog.progress("fitting embedder statistics", f"{self.pending_chunks} chunks")
        texts = [t for d in self.pending for t in embedding_texts(d)]
        began = time.perf_counter()
        stats = self.embedder.fit(texts)
        stored = claim_embedder_meta(self.client, self.embedder, self.settings.index, stats)
        if stored is not stats and stored is not None:
            self.embedder.load_stats(stored)
            logger.info("another ingest stored the embedder statistics first; adopted theirs")
        self.report.timings["embed"] += time.perf_counter() - began
        if stats is not None:
            logger.info("embedder statistics fitted on {} chunks and stored with the index", len(texts))
        self.stats_ready = True

    def flush(self) -> None:
        if not self.pending:
            return
        if not self.stats_ready:
            self._fit()
        docs, self.pending = self.pending, []
        subject = f"{len(docs)} files from {docs[0].source.display}"
        self.watchdog.progress("embedding a batch", subject)
        began = time.perf_counter()
        for doc in docs:
            if self.vectors_later:
                doc.vectors_pending = True
            else:
                doc.vectors = self.embedder.embed_documents(embedding_texts(doc))
        self.report.timings["embed"] += time.perf_counter() - began
        self.watchdog.progress("writing a batch to the engine", subject)
        began = time.perf_counter()
        try:
            failed = write_documents(self.client, self.settings.index, docs, chunk_size=self.batch_size,
                                     timeout_s=self.settings.opensearch.bulk_timeout_s,
                                     progress=self.watchdog.progress)
            bump_generation(self.client, self.settings.index)
        except StroidokError as exc:
            failed = {d.doc_id: exc.message for d in docs}
        self.report.timings["index"] += time.perf_counter() - began
        for doc in docs:
            outcome = (FileOutcome(doc.source.display, "failed", reason=f"indexing: {failed[doc.doc_id]}")
                       if doc.doc_id in failed else
                       FileOutcome(doc.source.display, "indexed", len(doc.chunks), doc.parsed.page_count))
            self.report.add(outcome)
            self.reporter.outcome(outcome)


def _failure_reason(exc: Exception, timeout_s: float) -> str:
    if isinstance(exc, cf.TimeoutError):
        return f"parsing took longer than {timeout_s:.0f}s (STROIDOK_INGEST_FILE_TIMEOUT_S)"
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
                     ocr_languages=ingest.ocr_languages, ocr_min_chars=ingest.ocr_min_chars)
    return ParseOptions(pdf=pdf, encoding=options.encoding)


def _record(report: RunReport, reporter: Reporter, outcome: FileOutcome) -> None:
    report.add(outcome)
    reporter.outcome(outcome)


def _dry_run(plan: Plan, report: RunReport) -> RunReport:
    for f, _ in plan.todo:
        report.add(FileOutcome(f.display, "planned", reason="index"))
    for f in plan.unchanged:
        report.add(FileOutcome(f.display, "skipped", reason="unchanged"))
    for e in plan.gone:
        report.add(FileOutcome(e["file_path"], "planned", e.get("chunk_count", 0), reason="delete"))
    for f in plan.too_big:
        report.add(FileOutcome(f.display, "failed", reason="file larger than STROIDOK_INGEST_MAX_FILE_MB"))
    for r in plan.rejected:
        report.add(FileOutcome(r.path, "failed", reason=r.reason))
    return report


class StopFlag:
    """Set by a stop signal; the run stops at its next check. Raising from the signal handler instead would
    land inside whatever runs, e.g. an engine request, which the client takes for a connection error."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def set(self, signum: int, _: FrameType | None) -> None:
        self.signum = signum

    def check(self) -> None:
        if self.signum is not None:
            raise Interrupted(f"interrupted by {signal.Signals(self.signum).name}", details={"signal": self.signum})


@contextmanager
def stop_on_signals(signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)) -> Iterator[StopFlag]:
    """SIGTERM and SIGHUP (and SIGINT unless left out) stop the run like Ctrl-C: cleanly, with a message."""
    flag = StopFlag()
    previous = {s: signal.signal(s, flag.set) for s in signals}
    try:
        yield flag
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def stall_timeout(settings: Settings) -> float:
    ingest = settings.ingest
    return ingest.stall_timeout_s or max(ingest.file_timeout_s, settings.opensearch.bulk_timeout_s) + 300


def run_ingest(options: IngestOptions, settings: Settings, client: OpenSearch, embedder: Embedder,
               quiet: bool = False) -> RunReport:
    """Ingest ``options.paths`` into the configured index and report every file's outcome."""
    began = time.perf_counter()
    report = RunReport()
    ingest = settings.ingest
    missing = [str(p) for p in options.paths if not p.exists()]
    if missing:
        raise StroidokError(f"path(s) not found: {', '.join(missing)}")
    rules = load_rules(ingest.access_rules, ingest.default_groups)
    with Watchdog(stall_timeout(settings)) as watchdog:
        watchdog.progress("preparing the index")
        apply_all(client, settings.index)
        if switching := pending_switch(client, settings.index):
            raise IngestError(f"a model switch is filling {switching}; finish it with `stroidok index migrate` "
                              "first (chunks written now would be missing from the new index)")
        stats_ready = load_embedder_state(client, embedder, settings.index)
        registry = load_registry(client, settings.index)
        watchdog.progress("listing files")
        files = [f for f in discover(options.paths, options.include, options.exclude)
                 if options.shard is None or options.shard.holds_file(f)]
        plan = plan_run(files, registry, options.paths, options.force, ingest.max_file_mb * 1024 * 1024, rules,
                        processing_signature(settings, options), options.shard)
        if options.dry_run:
            return _dry_run(plan, report)
        ensure_manual_refresh(client, settings.index)
        with Reporter(len(files), quiet) as reporter:
            _remove_and_report(plan, client, settings, report, reporter, watchdog)
            batcher = _Batcher(client, settings, embedder, report, reporter,
                               options.batch_size or ingest.batch_size, stats_ready, watchdog, options.vectors_later)
            _parse_all(plan, options, settings, rules, registry, batcher, report, reporter, watchdog)
            batcher.flush()
    if any(o.status in ("indexed", "deleted") for o in report.outcomes):
        began_links = time.perf_counter()
        settle_links(client, settings.index)
        report.timings["links"] = time.perf_counter() - began_links
    settle_index(client, settings, report, split=options.shard is None)
    report.wall_s = time.perf_counter() - began
    return report


def settle_index(client: OpenSearch, settings: Settings, report: RunReport, split: bool = True) -> None:
    """After a run's writes: split the index once it has grown past one shard's worth, and merge its segments
    after a run that wrote a large share of it (a first ingest, a big batch; searches pay per segment).
    Small incremental runs leave merging to the engine. ``--shard`` runs never split (the others may still be
    writing): `stroidok index optimize` once all are done does."""
    written = sum(o.chunks for o in report.outcomes if o.status == "indexed")
    if not written:
        return
    began = time.perf_counter()
    try:
        with engine_errors():
            grown = split_if_grown(client, settings.index) if split else None
            total = int(client.count(index=settings.index.alias)["count"])
            if not grown and (written < settings.index.optimize_share * total or settings.index.optimize_share >= 1):
                return
            logger.info("merging the index's segments after writing {} of its {} chunks", written, total)
            before, after = optimize(client, settings.index, split=False)
    except Interrupted:
        raise
    except StroidokError as exc:  # the chunks are written; a merge that failed only costs speed
        logger.warning("segments not merged ({}); run `stroidok index optimize`", exc.message)
        return
    report.timings["optimize"] = time.perf_counter() - began
    logger.info("{} segments merged into {} in {:.1f}s", before, after, report.timings["optimize"])


def _remove_and_report(plan: Plan, client: OpenSearch, settings: Settings, report: RunReport, reporter: Reporter,
                       watchdog: Watchdog) -> None:
    for entry in plan.gone:
        watchdog.progress("removing a deleted file's chunks", entry["file_path"])
        chunks = delete_document(client, settings.index, entry["doc_id"])
        _record(report, reporter, FileOutcome(entry["file_path"], "deleted", chunks))
    if plan.gone:
        bump_generation(client, settings.index)
    for f in plan.unchanged:
        _record(report, reporter, FileOutcome(f.display, "skipped", reason="unchanged"))
    for f in plan.aliases:
        _record(report, reporter, FileOutcome(f.display, "skipped", reason="a link to a file ingested under its own name"))
    for f in plan.too_big:
        _record(report, reporter, FileOutcome(f.display, "failed",
                                              reason=f"{f.size} bytes, over STROIDOK_INGEST_MAX_FILE_MB"))
    for r in plan.rejected:
        _record(report, reporter, FileOutcome(r.path, "failed", reason=r.reason))


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


def _parse_all(plan: Plan, options: IngestOptions, settings: Settings, rules: AccessRules,
               registry: dict[str, dict[str, Any]], batcher: _Batcher, report: RunReport, reporter: Reporter,
               watchdog: Watchdog) -> None:
    if not plan.todo:
        return
    ingest = settings.ingest
    parse_options = _parse_options(options, settings)
    workers = options.workers or ingest.workers
    needs_unstructured = any(f.file_type in UNSTRUCTURED_TYPES for f, _ in plan.todo) or options.ocr == "always"
    watchdog.progress("starting parse workers")
    pool = ProcessPool(max_workers=workers, max_tasks=50, initializer=init_worker,
                       initargs=(ingest.file_memory_mb,), context=worker_context(needs_unstructured))
    try:
        with stop_on_signals((signal.SIGTERM, signal.SIGHUP)) as stop:
            futures: dict[cf.Future[ParseResult], tuple[SourceFile, str]] = {
                pool.schedule(run_job, (ParseJob(str(f.path), parse_options, ingest.chunk_chars, ingest.chunk_overlap,
                                                 digest),), timeout=ingest.file_timeout_s): (f, digest)
                for f, digest in plan.todo
            }
            watchdog.progress("parsing", plan.todo[0][0].display)
            waiting: set[cf.Future[ParseResult]] = set(futures)
            while waiting:
                done, waiting = cf.wait(waiting, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    source, digest = futures[future]
                    watchdog.progress("parsing", source.display)
                    _collect(future, source, digest, rules, registry, batcher, report, reporter,
                             ingest.file_timeout_s)
                    stop.check()  # between documents: a batch being written finishes first
                stop.check()
    except BaseException:
        pool.stop()  # type: ignore[no-untyped-call]  # pebble is untyped
        pool.join(timeout=10)
        raise
    pool.close()  # type: ignore[no-untyped-call]
    pool.join()


def _collect(future: cf.Future[ParseResult], source: SourceFile, digest: str, rules: AccessRules, registry: dict[str, dict[str, Any]],
             batcher: _Batcher, report: RunReport, reporter: Reporter, timeout_s: float) -> None:
    try:
        result: ParseResult = future.result()
    except Exception as exc:
        _record(report, reporter, FileOutcome(source.display, "failed", reason=_failure_reason(exc, timeout_s)))
        return
    report.timings["parse"] += result.seconds
    batcher.add(PreparedDocument(source, digest, result.parsed, result.chunks, rules.groups_for(source.path),
                                 written_before(registry.get(source.doc_id))))
