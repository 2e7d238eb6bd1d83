"""A first ingest whose parsing is slow writes text first instead of keeping the index empty until it has its
fitting sample: documents are searchable while the run goes on, and every chunk has its vector
when it ends."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.engine.index_meta import read_embedder_meta
from service.errors import StroidokError
from service.search.service import SearchService
from service.search.vectors import read_coverage
from service.settings import Settings
from tests.support.crash import write_corpus

pytestmark = pytest.mark.integration

PUBLIC = Principal.of("test", ["public"])


def test_a_slow_first_ingest_is_searchable_before_it_ends_and_ends_with_every_vector(
        tmp_path: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    docs = write_corpus(tmp_path / "docs", 150, paragraphs=20)
    settings.ingest.text_first_after_s = 0  # this run's parsing counts as slow from the start
    settings.search.rate_limit = "100000/minute"  # the test polls
    settings.embedder.fit_sample = 1_000_000  # never reached: the statistics are fitted when the run ends
    service = SearchService(settings, client, None)
    seen_early: list[int] = []  # chunks still without a vector when a document was first found
    done = threading.Event()

    def watch() -> None:
        """Searches while the run goes on (the run holds the main thread: it installs signal handlers)."""
        while not done.is_set() and not seen_early:
            try:
                response = service.search({"query": "контроль прочности", "search_mode": "fulltext"}, PUBLIC)
                pending = read_coverage(client, settings.index.alias).pending
            except StroidokError:  # the run has not created the index yet
                response, pending = None, 0
            if response is not None and response.results and not done.is_set():
                seen_early.append(pending)
            time.sleep(0.5)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        report = run_ingest(IngestOptions([docs], batch_size=40, workers=1), settings, client, navec_embedder,
                            quiet=True)
    finally:
        done.set()
        watcher.join(60)
    assert seen_early, "nothing was searchable before the run ended"
    assert seen_early[0] > 0, "chunks written early had no vectors yet (they were written text first)"
    assert not report.failed and len(report.outcomes) == 150
    coverage = read_coverage(client, settings.index.alias)
    assert coverage.chunks > 0 and coverage.pending == 0, "the run ends with every chunk's vector"
    assert read_embedder_meta(client, settings.index) is not None, "the statistics are stored with the index"
