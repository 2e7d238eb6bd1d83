"""Parsed documents → batches of whole documents: the embedder's statistics fitted once per index, each
batch embedded (or marked for vectors later) and bulk-written, every file's outcome reported.
"""

from __future__ import annotations

import time

from loguru import logger
from opensearchpy import OpenSearch

from ingest.index import (
    PreparedDocument,
    embedding_texts,
    write_documents,
)
from ingest.report import FileOutcome, Reporter, RunReport
from ingest.watchdog import Watchdog
from service.embedders.base import Embedder
from service.errors import DiskFull, StroidokError
from service.index_meta import bump_generation, claim_embedder_meta
from service.settings import Settings


class Batcher:
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

    def record(self, outcome: FileOutcome) -> None:
        """A file's outcome, into the run's report and onto the progress display."""
        self.report.add(outcome)
        self.reporter.outcome(outcome)

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
        except DiskFull:
            raise  # every later batch would be refused too: the run stops, nothing of this batch recorded
        except StroidokError as exc:
            failed = {d.doc_id: exc.message for d in docs}
        self.report.timings["index"] += time.perf_counter() - began
        for doc in docs:
            outcome = (FileOutcome(doc.source.display, "failed", reason=f"indexing: {failed[doc.doc_id]}")
                       if doc.doc_id in failed else
                       FileOutcome(doc.source.display, "indexed", len(doc.chunks), doc.parsed.page_count))
            self.record(outcome)
