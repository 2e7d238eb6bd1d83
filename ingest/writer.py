"""The ingest's one writer: prepared documents → batches of whole documents, the embedder's statistics fitted
once per index, each batch embedded (or marked for vectors later) and bulk-written, every file's outcome
handed to the run's report and reporter.

A first ingest fits the statistics on ``fit_sample`` chunks before it writes anything; when parsing is slow
(a folder of scans) it does not keep the index empty waiting for them: after ``text_first_after_s`` its
batches are written text first (found by BM25 at once), the statistics are fitted once the sample is
reached or the run ends, and the run adds the early chunks' vectors (``early_chunks``) before it ends.
"""

from __future__ import annotations

import time

from loguru import logger
from opensearchpy import OpenSearch

from ingest.index import (
    PreparedDocument,
    embed_units,
    embedding_texts,
    write_documents,
)
from ingest.report import FileOutcome, Reporter, RunReport
from ingest.watchdog import Watchdog
from service.embedders.base import Embedder, keeps_unit_vectors
from service.engine.index_meta import bump_generation, claim_embedder_meta
from service.errors import DiskFull, StroidokError
from service.settings import Settings


class Writer:
    """Collects prepared documents and writes them in batches of whole documents (fit, embed, write)."""

    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder, report: RunReport,
                 reporter: Reporter, batch_size: int, stats_ready: bool, watchdog: Watchdog | None = None,
                 vectors_later: bool = False) -> None:
        self.client, self.settings, self.embedder = client, settings, embedder
        self.report, self.reporter, self.batch_size = report, reporter, batch_size
        self.stats_ready = stats_ready or vectors_later  # text first: the backfill fits the statistics
        self.vectors_later = vectors_later
        self.watchdog = watchdog or Watchdog(float("inf"))  # not started: progress is only recorded
        self.pending: list[PreparedDocument] = []
        self.started = self.last_write = time.monotonic()
        #: texts of the chunks written text first before the statistics could be fitted (their fitting sample)
        self.early_texts: list[str] = []
        #: chunks this run wrote text first for want of statistics: the run embeds them before it ends
        self.early_chunks = 0

    def record(self, outcome: FileOutcome) -> None:
        """A file's outcome, into the run's report and onto the progress display."""
        self.report.add(outcome)
        self.reporter.outcome(outcome)

    @property
    def pending_chunks(self) -> int:
        return sum(len(d.chunks) for d in self.pending)

    @property
    def writing_early(self) -> bool:
        """No statistics yet, and parsing has taken longer than a first ingest waits for its sample."""
        return (not self.stats_ready
                and time.monotonic() - self.started >= self.settings.ingest.text_first_after_s)

    def add(self, doc: PreparedDocument) -> None:
        self.pending.append(doc)
        if self.stats_ready:
            due = self.pending_chunks >= self.batch_size
        elif self.writing_early:  # write what is parsed (a batch, or whatever waited a while), fit when sampled
            due = (self.pending_chunks >= self.batch_size or len(self.early_texts) + self.pending_chunks >=
                   self.settings.embedder.fit_sample or time.monotonic() - self.last_write >= 10)
        else:
            due = self.pending_chunks >= self.settings.embedder.fit_sample
        if due:
            self.flush()

    def _fit(self) -> None:
        self.watchdog.progress("fitting embedder statistics", f"{self.pending_chunks} chunks")
        texts = self.early_texts + [t for d in self.pending for t in embedding_texts(d)]
        self.early_texts = []
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

    def finish(self) -> None:
        """The run's last batch."""
        self.flush(final=True)

    def flush(self, final: bool = False) -> None:
        """Write the pending documents; ``final``: the run's last batch (statistics are fitted now at the latest)."""
        if not self.pending:
            return
        early = self.writing_early and not final and (
            len(self.early_texts) + self.pending_chunks < self.settings.embedder.fit_sample)
        if not self.stats_ready and not early:
            self._fit()
        docs, self.pending = self.pending, []
        self.last_write = time.monotonic()
        subject = f"{len(docs)} files from {docs[0].source.display}"
        self.watchdog.progress("embedding a batch", subject)
        began = time.perf_counter()
        for doc in docs:
            if early:
                self.early_texts += embedding_texts(doc)
                self.early_chunks += len(doc.chunks)
                doc.vectors_pending = True
            elif self.vectors_later:
                doc.vectors_pending = True
            else:
                doc.vectors = self.embedder.embed_documents(embedding_texts(doc))
                if keeps_unit_vectors(self.embedder, self.settings.embedder.unit_vectors):
                    doc.units = embed_units(self.embedder, [c.text for c in doc.chunks])
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
                       FileOutcome(doc.source.display, "indexed", len(doc.chunks), doc.parsed.page_count,
                                   unread=list(doc.parsed.unread_pages)))
            self.record(outcome)
