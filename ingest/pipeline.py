"""One ingest run: discover → (skip unchanged) → parse in worker processes → chunk → embed → bulk index.

Followable top to bottom: ``run_ingest`` plans the files, removes the documents whose files are
gone, then streams parsed documents into batches of whole documents that are embedded and written.
The embedder's corpus statistics are fitted on the first batch ever written to an index and stored
with it (``service.index_meta``), then reused by every later run and by query-time search.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from dataclasses import dataclass, field
from pathlib import Path

from loguru import logger
from opensearchpy import OpenSearch
from pebble import ProcessPool
from pebble.common import ProcessExpired

from ingest.access import AccessRules, load_rules
from ingest.discover import SourceFile, content_hash, discover
from ingest.index import (PreparedDocument, delete_document, embedding_texts, load_registry, refresh_paused,
                          write_documents)
from ingest.parse import ParseOptions
from ingest.parse.pdf import OcrMode, PdfOptions
from ingest.report import FileOutcome, Reporter, RunReport
from ingest.worker import ParseJob, ParseResult, init_worker, run_job
from service.embedders.base import Embedder
from service.errors import StroidokError
from service.index_admin import apply_all
from service.index_meta import load_embedder_state, write_embedder_meta
from service.settings import Settings


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


@dataclass
class Plan:
    todo: list[tuple[SourceFile, str]]
    unchanged: list[SourceFile]
    gone: list[dict]
    too_big: list[SourceFile]


def plan_run(files: list[SourceFile], registry: dict[str, dict], roots: list[Path], force: bool,
             max_bytes: int) -> Plan:
    """Which files to parse, which are unchanged, which indexed documents lost their file."""
    todo, unchanged, too_big = [], [], []
    for f in files:
        if f.size > max_bytes:
            too_big.append(f)
            continue
        digest = content_hash(f.path)
        entry = registry.get(f.doc_id)
        if entry and entry.get("content_hash") == digest and not force:
            unchanged.append(f)
        else:
            todo.append((f, digest))
    resolved = [r.resolve() for r in roots]
    gone = [e for e in registry.values()
            if any(Path(e["file_path"]).is_relative_to(r) for r in resolved) and not Path(e["file_path"]).exists()]
    return Plan(todo, unchanged, gone, too_big)


class _Batcher:
    """Collects parsed documents and writes them in batches of whole documents."""

    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder, report: RunReport,
                 reporter: Reporter, batch_size: int, stats_ready: bool) -> None:
        self.client, self.settings, self.embedder = client, settings, embedder
        self.report, self.reporter, self.batch_size = report, reporter, batch_size
        self.stats_ready = stats_ready
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
        texts = [t for d in self.pending for t in embedding_texts(d)]
        began = time.perf_counter()
        stats = self.embedder.fit(texts)
        write_embedder_meta(self.client, self.embedder, self.settings.index, stats)
        self.report.timings["embed"] += time.perf_counter() - began
        logger.info("embedder statistics fitted on {} chunks and stored with the index", len(texts))
        self.stats_ready = True

    def flush(self) -> None:
        if not self.pending:
            return
        if not self.stats_ready:
            self._fit()
        docs, self.pending = self.pending, []
        began = time.perf_counter()
        for doc in docs:
            doc.vectors = self.embedder.embed_documents(embedding_texts(doc))
        self.report.timings["embed"] += time.perf_counter() - began
        began = time.perf_counter()
        try:
            failed = write_documents(self.client, self.settings.index, docs, chunk_size=self.batch_size,
                                     timeout_s=self.settings.opensearch.bulk_timeout_s)
        except StroidokError as exc:
            failed = {d.doc_id: exc.message for d in docs}
        self.report.timings["index"] += time.perf_counter() - began
        for doc in docs:
            outcome = (FileOutcome(str(doc.source.path), "failed", reason=f"indexing: {failed[doc.doc_id]}")
                       if doc.doc_id in failed else
                       FileOutcome(str(doc.source.path), "indexed", len(doc.chunks), doc.parsed.page_count))
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
    pdf = PdfOptions(parser=options.pdf_parser or ingest.pdf_parser, ocr=options.ocr,
                     ocr_languages=ingest.ocr_languages, ocr_min_chars=ingest.ocr_min_chars)
    return ParseOptions(pdf=pdf, encoding=options.encoding)


def _record(report: RunReport, reporter: Reporter, outcome: FileOutcome) -> None:
    report.add(outcome)
    reporter.outcome(outcome)


def _dry_run(plan: Plan, report: RunReport) -> RunReport:
    for f, _ in plan.todo:
        report.add(FileOutcome(str(f.path), "planned", reason="index"))
    for f in plan.unchanged:
        report.add(FileOutcome(str(f.path), "skipped", reason="unchanged"))
    for e in plan.gone:
        report.add(FileOutcome(e["file_path"], "planned", e.get("chunk_count", 0), reason="delete"))
    for f in plan.too_big:
        report.add(FileOutcome(str(f.path), "failed", reason="file larger than STROIDOK_INGEST_MAX_FILE_MB"))
    return report


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
    apply_all(client, settings.index)
    stats_ready = load_embedder_state(client, embedder, settings.index)
    registry = load_registry(client, settings.index)
    files = list(discover(options.paths, options.include, options.exclude))
    plan = plan_run(files, registry, options.paths, options.force, ingest.max_file_mb * 1024 * 1024)
    if options.dry_run:
        return _dry_run(plan, report)
    with Reporter(len(files), quiet) as reporter, refresh_paused(client, settings.index):
        for entry in plan.gone:
            chunks = delete_document(client, settings.index, entry["doc_id"])
            _record(report, reporter, FileOutcome(entry["file_path"], "deleted", chunks))
        for f in plan.unchanged:
            _record(report, reporter, FileOutcome(str(f.path), "skipped", reason="unchanged"))
        for f in plan.too_big:
            _record(report, reporter, FileOutcome(str(f.path), "failed",
                                                  reason=f"{f.size} bytes, over STROIDOK_INGEST_MAX_FILE_MB"))
        batcher = _Batcher(client, settings, embedder, report, reporter,
                           options.batch_size or ingest.batch_size, stats_ready)
        _parse_all(plan, options, settings, rules, registry, batcher, report, reporter)
        batcher.flush()
    report.wall_s = time.perf_counter() - began
    return report


def _parse_all(plan: Plan, options: IngestOptions, settings: Settings, rules: AccessRules,
               registry: dict[str, dict], batcher: _Batcher, report: RunReport, reporter: Reporter) -> None:
    ingest = settings.ingest
    parse_options = _parse_options(options, settings)
    workers = options.workers or ingest.workers
    if any(f.file_type != "pdf" for f, _ in plan.todo) or options.ocr == "always":
        import unstructured.partition.auto  # noqa: F401 — imported once here, inherited by every forked worker
    with ProcessPool(max_workers=workers, max_tasks=50, initializer=init_worker,
                     initargs=(ingest.file_memory_mb,)) as pool:
        futures = {
            pool.schedule(run_job, (ParseJob(str(f.path), parse_options, ingest.chunk_chars, ingest.chunk_overlap),),
                          timeout=ingest.file_timeout_s): (f, digest)
            for f, digest in plan.todo
        }
        for future in cf.as_completed(futures):
            source, digest = futures[future]
            try:
                result: ParseResult = future.result()
            except Exception as exc:  # noqa: BLE001 — every parser failure becomes a reported outcome
                _record(report, reporter, FileOutcome(str(source.path), "failed",
                                                      reason=_failure_reason(exc, ingest.file_timeout_s)))
                continue
            report.timings["parse"] += result.seconds
            previous = int(registry.get(source.doc_id, {}).get("chunk_count", 0))
            batcher.add(PreparedDocument(source, digest, result.parsed, result.chunks,
                                         rules.groups_for(source.relative), previous))
