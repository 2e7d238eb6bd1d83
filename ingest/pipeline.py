"""One ingest run: discover → (skip unchanged) → parse in worker processes → chunk → embed → bulk index.

Followable top to bottom: ``run_ingest`` plans the files, removes the documents whose files are
gone, then streams parsed documents into the one write path (``write_stream``: the ``Writer`` fits,
embeds and writes batches of whole documents; every outcome goes to the run's reporter).
``index_prepared`` hands documents prepared elsewhere (the evaluation's passages) to the same path.
The embedder's corpus statistics are fitted on the first batch ever written to an index and stored
with it (``service.engine.index_meta``), then reused by every later run and by query-time search.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from loguru import logger
from opensearchpy import OpenSearch

from ingest.access import AccessRules, load_rules, rules_refusal
from ingest.backfill import run_backfill
from ingest.discover import Rejected, SourceFile, discover, display_path
from ingest.index import (
    PreparedDocument,
    delete_document,
    ensure_manual_refresh,
    load_registry,
)
from ingest.lease import acquire
from ingest.links import settle_links
from ingest.plan import (
    IngestOptions,
    Plan,
    dry_run_outcomes,
    names_found,
    plan_run,
    planned_outcomes,
    processing_signature,
)
from ingest.pool import Parsed, parsed_documents
from ingest.report import FileOutcome, Reporter, RunReport
from ingest.watchdog import Watchdog
from ingest.writer import Writer
from service.embedders.base import Embedder
from service.engine.index_admin.apply import apply_all
from service.engine.index_admin.maintenance import optimize, pending_switch, split_if_grown
from service.engine.index_meta import bump_generation, load_embedder_state, read_rules_record, record_rules
from service.errors import AccessRulesChanged, ConfigError, IngestError, Interrupted, ResourceMissing, StroidokError
from service.settings import Settings


def stall_timeout(settings: Settings) -> float:
    ingest = settings.ingest
    return ingest.stall_timeout_s or max(ingest.file_timeout_s, settings.opensearch.bulk_timeout_s) + 300


def run_ingest(options: IngestOptions, settings: Settings, client: OpenSearch, embedder: Embedder,
               quiet: bool = False) -> RunReport:
    """Ingest ``options.paths`` into the configured index and report every file's outcome. The run holds the
    index's ingest lease (``ingest.lease``) from planning to the last merge: a second run refuses to start."""
    began = time.perf_counter()
    report = RunReport()
    missing = [str(p) for p in options.paths if not p.exists()]
    if missing:
        raise ConfigError(f"path(s) not found: {', '.join(missing)}", details={"paths": missing})
    rules = load_rules(settings.ingest.access_rules, settings.ingest.default_groups)
    with Watchdog(stall_timeout(settings)) as watchdog:
        stats_ready = prepare_index(client, settings, embedder, watchdog)
        check_rules(client, settings, rules, options)
        if options.dry_run:
            plan, _, _ = _plan(options, settings, client, rules, watchdog)
            for outcome in dry_run_outcomes(plan):
                report.add(outcome)
            return report
    with acquire(client, settings.index, options.shard):
        with Watchdog(stall_timeout(settings)) as watchdog:
            plan, registry, files = _plan(options, settings, client, rules, watchdog)
            between_plan_and_parse(plan)
            ensure_manual_refresh(client, settings.index)
            # a log without a terminal shows progress at least twice within the stall limit
            with Reporter(files, quiet, min(10.0, stall_timeout(settings) / 2)) as reporter:
                writer = Writer(client, settings, embedder, report, reporter, options.batch_size or
                                settings.ingest.batch_size, stats_ready, watchdog, options.vectors_later)
                _remove_and_report(plan, client, settings, writer, watchdog)
                # the stream: parse (worker processes) → chunks → embed → write, a batch at a time
                write_stream(_prepared(parsed_documents(plan, options, settings, rules, registry, watchdog,
                                                        reporter.status), report), writer)
            if writer.early_chunks:
                _add_early_vectors(settings, client, embedder, writer.early_chunks, watchdog, quiet)
        # every run settles the links (a registry scan and one read of first chunks): an index whose links an
        # older release decided (say, lent across groups) is put right by the next run, changed files or not
        began_links = time.perf_counter()
        try:
            settle_links(client, settings.index)
        except ResourceMissing as exc:  # the index itself vanished (its files are reported failed): nothing to settle
            logger.warning("links not settled: {}", exc.message)
        report.timings["links"] = time.perf_counter() - began_links
        settle_index(client, settings, report, split=options.shard is None)
    report.wall_s = time.perf_counter() - began
    return report


def between_plan_and_parse(plan: Plan) -> None:
    """Nothing. The moment a file may change after the run planned it: a test stands in for a user who swaps a
    folder for a link here (a race made deterministic); reading checks the file is the one planned."""


def index_prepared(documents: Iterable[PreparedDocument], settings: Settings, client: OpenSearch,
                   embedder: Embedder, quiet: bool = True) -> RunReport:
    """Documents prepared by the caller rather than read from files (the evaluation's passages), written
    through the ingest's own path: the index prepared, its lease held, the writer (fit, embed, write), the
    vectors of chunks written text first, the index settled."""
    began = time.perf_counter()
    report, docs = RunReport(), list(documents)
    with Watchdog(stall_timeout(settings)) as watchdog:
        stats_ready = prepare_index(client, settings, embedder, watchdog)
    with acquire(client, settings.index, None), Watchdog(stall_timeout(settings)) as watchdog:
        with Reporter(len(docs), quiet) as reporter:
            writer = Writer(client, settings, embedder, report, reporter, settings.ingest.batch_size, stats_ready,
                            watchdog)
            write_stream(docs, writer)
        if writer.early_chunks:
            _add_early_vectors(settings, client, embedder, writer.early_chunks, watchdog, quiet)
        settle_index(client, settings, report)
    report.wall_s = time.perf_counter() - began
    return report


def prepare_index(client: OpenSearch, settings: Settings, embedder: Embedder, watchdog: Watchdog) -> bool:
    """The index, its templates and pipelines as the product describes them; whether the embedder's statistics
    are stored with it already (an index of another model is refused)."""
    watchdog.progress("preparing the index")
    apply_all(client, settings.index)
    if switching := pending_switch(client, settings.index):
        raise IngestError(f"a model switch is filling {switching}; finish it with `stroidok index migrate` "
                          "first (chunks written now would be missing from the new index)")
    return load_embedder_state(client, embedder, settings.index)


def write_stream(items: Iterable[PreparedDocument | FileOutcome], writer: Writer) -> None:
    """The one write path: each prepared document to the writer, each outcome decided without writing (a
    file that failed to parse) to the report; the last batch written before it returns."""
    for item in items:
        if isinstance(item, PreparedDocument):
            writer.add(item)
        else:
            writer.record(item)
    writer.finish()


def _prepared(parsed: Iterable[Parsed], report: RunReport) -> Iterable[PreparedDocument | FileOutcome]:
    """The parse pool's results as documents to write or failures to report (its time into the report)."""
    for result in parsed:
        report.timings["parse"] += result.seconds
        if result.document is not None:
            yield result.document
        elif result.failed is not None:
            yield result.failed


def check_rules(client: OpenSearch, settings: Settings, rules: AccessRules, options: IngestOptions) -> None:
    """Refuse a run whose access rules are not the ones the index's groups were decided by (unless told they
    changed); a run that will write records its rules first, so a stopped run's successor goes on with them."""
    recorded, digest = read_rules_record(client, settings.index), rules.digest()
    refusal = rules_refusal(recorded, rules, options.access_rules_changed)
    if refusal is None and recorded is not None and recorded.get("digest") != digest:
        refusal = partial_change_refusal(load_registry(client, settings.index), options)
    if refusal is not None:
        raise AccessRulesChanged(refusal, details={"recorded": (recorded or {}).get("digest"), "this_run": digest})
    if not options.dry_run and (recorded or {}).get("digest") != digest:
        record_rules(client, settings.index, digest, rules.describe())
        if recorded is not None:
            logger.warning("access rules changed ({} -> {}): every document's groups are re-decided",
                           recorded.get("summary"), rules.describe())


def partial_change_refusal(registry: dict[str, dict[str, Any]], options: IngestOptions) -> str | None:
    """Why a run that changes the index's rules covers too little of it, or None: the digest the index records
    must be true of every document, so new rules need a run over every folder it holds, unsharded."""
    if options.shard is not None:
        return "--access-rules-changed re-decides every document's groups: run it without --shard"
    roots = [form for p in options.paths for form in (p.resolve(), Path(display_path(p.resolve())))]
    outside = sorted(str(e.get("file_path")) for e in registry.values()
                     if not any(Path(str(e.get("file_path"))).is_relative_to(r) for r in roots))
    if not outside:
        return None
    return (f"--access-rules-changed re-decides every document's groups, and {len(outside)} indexed document(s) lie "
            f"outside this run's folders (e.g. {outside[0]}): run it over every folder the index holds")


def _plan(options: IngestOptions, settings: Settings, client: OpenSearch, rules: AccessRules,
          watchdog: Watchdog) -> tuple[Plan, dict[str, dict[str, Any]], int]:
    """The run's plan, the registry it was made from, and how many files were found."""
    registry = load_registry(client, settings.index)
    watchdog.progress("listing files")
    every: list[SourceFile | Rejected] = []
    for found in discover(options.paths, options.include, options.exclude):
        watchdog.progress("listing files", found.display if isinstance(found, SourceFile) else found.path)
        every.append(found)
    files = [f for f in every if options.shard is None or options.shard.holds_file(f)]
    plan = plan_run(files, registry, options.paths, options.force, settings.ingest.max_file_mb * 1024 * 1024, rules,
                    processing_signature(settings, options), options.shard,
                    on_file=lambda shown: watchdog.progress("hashing files", shown),
                    hard_links=settings.ingest.hard_links, names=names_found(every))
    return plan, registry, len(files)


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


def _add_early_vectors(settings: Settings, client: OpenSearch, embedder: Embedder, chunks: int,
                       watchdog: Watchdog, quiet: bool) -> None:
    """The vectors of the chunks written text first while the run waited for its fitting sample (searchable
    by BM25 meanwhile)."""
    watchdog.progress("adding the vectors of chunks written text first", f"{chunks} chunks")
    logger.info("adding the vectors of {} chunks written text first", chunks)
    backfilled = run_backfill(settings, client, embedder, quiet=quiet)
    if backfilled.failed:
        logger.warning("{} chunks still have no vector; `stroidok embed` adds them", backfilled.failed)


def _remove_and_report(plan: Plan, client: OpenSearch, settings: Settings, writer: Writer,
                       watchdog: Watchdog) -> None:
    """Delete the documents whose files are gone, then record what the plan decided without parsing."""
    for entry in plan.gone:
        watchdog.progress("removing a deleted file's chunks", entry["file_path"])
        chunks = delete_document(client, settings.index, entry["doc_id"])
        writer.record(FileOutcome(entry["file_path"], "deleted", chunks))
    if plan.gone:
        bump_generation(client, settings.index)
    for outcome in planned_outcomes(plan):
        writer.record(outcome)



