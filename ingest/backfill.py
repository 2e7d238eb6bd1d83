"""``stroidok embed``: fill in the vectors of chunks indexed text first (``vector_pending: true``), and the
unit vectors of chunks that have none where the index keeps them (an index built before unit vectors, or a
model whose unit vectors were switched on later: only the units are embedded, the chunk's vector is kept).

Followable top to bottom: ``run_backfill`` makes sure the index records this embedder (fitting its
statistics on a sample of the index's own chunks when it needs them), then reads pending chunks in
``chunk_id`` order (``search_after``), embeds batches on ``workers`` threads and writes each vector with
an update guarded by the chunk's sequence number. Every write is final and marks the chunk done, so a
stopped run resumes where it was: the next run reads only the chunks still pending. A chunk changed or
deleted meanwhile (a re-ingest) is skipped, never overwritten with a vector of its old text. Chunks
become searchable by vector at each refresh (every ``refresh_s``) and at the end.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from loguru import logger
from opensearchpy import OpenSearch

from ingest.index import context_text, embed_units, vector_or_none
from ingest.progress import ProgressBar
from ingest.signals import StopFlag, stop_on_signals
from service.embedders.base import Embedder, keeps_unit_vectors
from service.engine.fields import PENDING, UNITS_FIELD
from service.engine.gateway import bulk_outcomes, scan
from service.engine.index_admin.maintenance import optimize
from service.engine.index_meta import bump_generation, claim_embedder_meta, concrete_index, load_embedder_state
from service.search.vectors import read_coverage
from service.settings import Settings
from service.settings.capabilities import capabilities_of

TEXT_FIELDS = ["title", "section_title", "text", "vector_pending"]
#: a chunk with its vector and no unit vectors (a chunk none of whose units reads as words stays without any,
#: and is read again by each run: its units are embedded, none is kept, nothing is written)
MISSING_UNITS = {"bool": {"must_not": [PENDING, {"nested": {"path": UNITS_FIELD, "query": {
    "exists": {"field": f"{UNITS_FIELD}.o"}}}}]}}


@dataclass(frozen=True)
class BackfillOptions:
    index: str | None = None  # a physical index (a model switch fills the new index before the swap)
    workers: int = 1
    batch_size: int = 32
    limit: int | None = None  # stop after this many chunks (a sample, or a time-boxed run)
    refresh_s: float = 30.0


@dataclass
class BackfillReport:
    index: str = ""
    pending_before: int = 0
    embedded: int = 0
    skipped: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    characters: int = 0
    embed_s: float = 0.0
    wall_s: float = 0.0
    pending_after: int = 0
    chunks: int = 0

    def line(self) -> str:
        data = self.to_dict()
        return (f"vectors: {data['embedded']} chunks embedded in {data['wall_s']:.1f}s ({data['chunks_per_s']} "
                f"chunks/s, {data['characters_per_s']:.0f} characters/s), {data['skipped']} skipped (changed "
                f"meanwhile), {data['failed']} failed; {data['pending_after']} of {data['chunks']} chunks still "
                f"pending in {data['index']}")

    def to_dict(self) -> dict[str, Any]:
        rate = self.embedded / self.wall_s if self.wall_s else 0.0
        return {"index": self.index, "chunks": self.chunks, "pending_before": self.pending_before,
                "embedded": self.embedded, "skipped": self.skipped, "failed": self.failed,
                "pending_after": self.pending_after, "errors": self.errors[:10], "wall_s": round(self.wall_s, 1),
                "embed_s": round(self.embed_s, 1), "chunks_per_s": round(rate, 2),
                "characters_per_s": round(self.characters / self.wall_s, 1) if self.wall_s else 0.0}


def pending_query(units: bool) -> dict[str, Any]:
    """Chunks to embed: those waiting for their vector, and (``units``) those without unit vectors."""
    return {"bool": {"should": [PENDING, MISSING_UNITS], "minimum_should_match": 1}} if units else PENDING


def pending_page(after: list[Any] | None, size: int, units: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"size": size, "query": {"bool": {"filter": [pending_query(units)]}},
                            "sort": [{"chunk_id": "asc"}], "_source": TEXT_FIELDS, "seq_no_primary_term": True}
    if after is not None:
        body["search_after"] = after
    return body


def pending_batches(client: OpenSearch, index: str, size: int, timeout_s: float,
                    units: bool = False) -> Iterator[list[dict[str, Any]]]:
    """Pages of pending chunks in ``chunk_id`` order (each chunk once per run, whatever is written meanwhile)."""
    after = None
    while True:
        hits = client.search(index=index, body=pending_page(after, size, units),
                             params={"request_timeout": timeout_s})["hits"]["hits"]
        if not hits:
            return
        yield hits
        after = hits[-1]["sort"]


def chunk_text(source: dict[str, Any]) -> str:
    """What the vector is made of: the same text an inline ingest embeds."""
    return context_text(source.get("title"), source.get("section_title"), source.get("text") or "")


def waits_for_vector(hit: dict[str, Any]) -> bool:
    """Whether the chunk's own vector is still to be made (otherwise only its units are)."""
    return hit["_source"].get("vector_pending") is True


def update_actions(hits: list[dict[str, Any]], vectors: Any,
                   units: list[list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """Guarded partial updates: the vector (none for a text the embedder cannot place), the units' vectors
    when the index keeps them, and ``pending`` off. A chunk that had its vector keeps it (``vectors`` holds
    ``None`` for it) and gains its units; one with neither to write is left alone."""
    actions = []
    per_chunk: list[list[dict[str, Any]] | None] = list(units) if units is not None else [None] * len(hits)
    for hit, vector, unit in zip(hits, vectors, per_chunk, strict=True):
        doc: dict[str, Any] = {}
        if waits_for_vector(hit):
            doc["vector_pending"] = False
            if (values := vector_or_none(vector)) is not None:
                doc["embedding"] = values
        elif not unit:
            continue
        if unit:
            doc["units"] = unit
        actions.append({"_op_type": "update", "_index": hit["_index"], "_id": hit["_id"], "doc": doc,
                        "if_seq_no": hit["_seq_no"], "if_primary_term": hit["_primary_term"]})
    return actions


@dataclass
class BatchResult:
    embedded: int = 0
    skipped: int = 0
    failed: int = 0
    characters: int = 0
    embed_s: float = 0.0
    errors: list[str] = field(default_factory=list)


def embed_and_write(client: OpenSearch, embedder: Embedder, hits: list[dict[str, Any]],
                    timeout_s: float, units: bool = False) -> BatchResult:
    """One batch: embed (``units``: each chunk's units too), write guarded updates; a conflict (changed
    meanwhile) or a missing chunk is skipped."""
    texts = [chunk_text(h["_source"]) for h in hits if waits_for_vector(h)]
    began = time.perf_counter()
    made = iter(embedder.embed_documents(texts) if texts else [])
    vectors = [next(made) if waits_for_vector(h) else None for h in hits]
    unit_vectors = embed_units(embedder, [h["_source"].get("text") or "" for h in hits]) if units else None
    unit_chars = sum(len(h["_source"].get("text") or "") for h in hits) if units else 0
    result = BatchResult(characters=sum(map(len, texts)) + unit_chars, embed_s=time.perf_counter() - began)
    for outcome in bulk_outcomes(client, update_actions(hits, vectors, unit_vectors), raise_on_exception=False,
                                 max_retries=5, initial_backoff=1, request_timeout=timeout_s):
        if outcome.ok:
            result.embedded += 1
        elif outcome.missing or outcome.conflict:
            result.skipped += 1
        else:
            result.failed += 1
            result.errors.append(outcome.reason or "refused")
    return result


def maps_units(client: OpenSearch, index: str) -> bool:
    """Whether ``index`` can keep unit vectors (one built before them cannot: `stroidok index migrate`)."""
    mappings = client.indices.get_mapping(index=index)
    if all(UNITS_FIELD in m["mappings"].get("properties", {}) for m in mappings.values()):
        return True
    logger.warning("{} was built before unit vectors: chunks get their own vectors only; `stroidok index migrate` "
                   "rebuilds it with room for them, then `stroidok embed` adds them", index)
    return False


def count_missing_units(client: OpenSearch, index: str) -> int:
    """Chunks with their vector and no unit vectors."""
    return int(client.count(index=index, body={"query": MISSING_UNITS})["count"])


def prepare_embedder(client: OpenSearch, settings: Settings, embedder: Embedder, index: str) -> None:
    """The index records this embedder (refusing another one); statistics an embedder needs (navec SIF)
    are fitted on a sample of the index's chunks and stored before the first vector is written."""
    if load_embedder_state(client, embedder, settings.index, index):
        return
    sample = []
    if capabilities_of(embedder.identity.provider).fitted:
        for hit in scan(client, index=index, query={"_source": TEXT_FIELDS, "query": {"match_all": {}}},
                                size=1000):
            sample.append(chunk_text(hit["_source"]))
            if len(sample) >= settings.embedder.fit_sample:
                break
    stats = embedder.fit(sample) if sample else None
    stored = claim_embedder_meta(client, embedder, settings.index, stats, index)
    if stored is not None and stored is not stats:
        embedder.load_stats(stored)


def run_backfill(settings: Settings, client: OpenSearch, embedder: Embedder, options: BackfillOptions | None = None,
                 quiet: bool = False) -> BackfillReport:
    """Embed every pending chunk of the alias's index (or ``options.index``); safe to stop and run again."""
    options = options or BackfillOptions()
    began = time.perf_counter()
    index = options.index or concrete_index(client, settings.index.alias) or settings.index.alias
    prepare_embedder(client, settings, embedder, index)
    before = read_coverage(client, index)
    report = BackfillReport(index=index, pending_before=before.pending, chunks=before.chunks)
    timeout = settings.opensearch.bulk_timeout_s
    units = keeps_unit_vectors(embedder, settings.embedder.unit_vectors) and maps_units(client, index)
    missing = count_missing_units(client, index) if units else 0
    if missing:
        logger.info("{} chunks have their vector and no unit vectors: their units are embedded too", missing)
    wanted = before.pending + missing
    total = min(wanted, options.limit) if options.limit is not None else wanted
    with ProgressBar("embedding", "chunks", total, quiet, log_every_s=30) as progress, stop_on_signals() as stop, \
            cf.ThreadPoolExecutor(options.workers, thread_name_prefix="embed") as pool:
        running: set[cf.Future[BatchResult]] = set()
        refreshed, read = time.monotonic(), 0
        try:
            for hits in pending_batches(client, index, options.batch_size, timeout, units):
                stop.check()
                hits = hits[:total - read]
                read += len(hits)
                running.add(pool.submit(embed_and_write, client, embedder, hits, timeout, units))
                while len(running) > options.workers:  # read one batch ahead, no further
                    running = _wait(running, stop, report, progress, cf.FIRST_COMPLETED)
                if time.monotonic() - refreshed > options.refresh_s:
                    _refresh(client, settings, index)
                    refreshed = time.monotonic()
                if read >= total:
                    break
            while running:
                running = _wait(running, stop, report, progress, cf.ALL_COMPLETED)
        except BaseException:
            for future in running:
                future.cancel()
            logger.warning("stopping: finishing the batches in progress, then refreshing what is written")
            finished = cf.wait(running).done
            _collect({f for f in finished if not f.cancelled() and f.exception() is None}, report, progress)
            _refresh(client, settings, index)
            raise
    _refresh(client, settings, index)
    report.pending_after = read_coverage(client, index).pending
    _merge_if_rewritten(client, settings, index, report)
    report.wall_s = time.perf_counter() - began
    return report


def _wait(running: set[cf.Future[BatchResult]], stop: StopFlag, report: BackfillReport, progress: ProgressBar,
          until: str) -> set[cf.Future[BatchResult]]:
    """Wait for batches (checking for a stop twice a second), account for the finished; the rest."""
    done, pending = cf.wait(running, timeout=0.5, return_when=until)
    _collect(done, report, progress)
    stop.check()
    return pending


def _collect(done: set[cf.Future[BatchResult]], report: BackfillReport, progress: ProgressBar) -> None:
    for future in done:
        result = future.result()
        report.embedded += result.embedded
        report.skipped += result.skipped
        report.failed += result.failed
        report.characters += result.characters
        report.embed_s += result.embed_s
        report.errors += result.errors
        progress.advance(result.embedded + result.skipped + result.failed)


def _refresh(client: OpenSearch, settings: Settings, index: str) -> None:
    """Make written vectors searchable, and tell caches that results may have changed."""
    client.indices.refresh(index=index)
    bump_generation(client, settings.index)


def _merge_if_rewritten(client: OpenSearch, settings: Settings, index: str, report: BackfillReport) -> None:
    """A backfill rewrites each chunk it embeds; after a large share, merge (searches pay per segment)."""
    share = settings.index.optimize_share
    if not report.embedded or share >= 1 or report.embedded < share * max(report.chunks, 1):
        return
    logger.info("merging segments after {} vector updates", report.embedded)
    optimize(client, settings.index.model_copy(update={"alias": index}) if index != settings.index.alias
             else settings.index)


def model_switch_filler(settings: Settings, client: OpenSearch, embedder: Embedder,
                        workers: int = 1) -> Callable[[str], BackfillReport]:
    """What `stroidok index migrate` fills a model switch's new index with (entry point
    ``stroidok.model_switch``: the search package never imports this one)."""
    return lambda index: run_backfill(settings, client, embedder, BackfillOptions(index=index, workers=workers))
