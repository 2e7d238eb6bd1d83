"""A folder of documents ingested through the product's own path and searched by a ``SearchService``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.embedders.base import Embedder
from service.search.service import SearchService
from tests.support.engine import drop_index_resources, product_settings


@contextmanager
def served_folder(root: Path, opensearch_url: str, client: OpenSearch, embedder: Embedder, others: int,
                  filler: str) -> Iterator[SearchService]:
    """``root`` ingested with ``others`` unrelated documents beside its own (so that term weights have something
    to compare with), searched with the cache off; its index dropped afterwards."""
    for i in range(others):
        (root / f"прочее-{i}.txt").write_text(f"Бетонные работы, вариант {i}. " + filler * 3, encoding="utf-8")
    settings = product_settings(opensearch_url)
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "10000/minute"
    report = run_ingest(IngestOptions([root]), settings, client, embedder, quiet=True)
    assert not report.failed
    try:
        yield SearchService(settings, client, embedder)
    finally:
        drop_index_resources(client, settings.index)


@contextmanager
def served_pages(root: Path, documents: dict[str, list[str]], opensearch_url: str, client: OpenSearch,
                 embedder: Embedder, filler: str, others: int = 8) -> Iterator[SearchService]:
    """``documents`` (file name → its pages) written to ``root`` as text files, pages split by form feeds, and
    served as ``served_folder`` serves them."""
    for name, pages in documents.items():
        (root / name).write_text("\f".join(pages), encoding="utf-8")
    with served_folder(root, opensearch_url, client, embedder, others, filler) as service:
        yield service
