"""A chunk index starts on one primary shard (whole BM25 statistics for a small archive) and the ingest that
grows it past ``split_at_chunks`` splits it to ``shards`` primaries: nothing lost, vectors and the embedder
record kept, the index writable again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.engine.index_admin.maintenance import primary_shards
from service.engine.index_meta import concrete_index, read_embedder_meta
from service.search.service import SearchService
from service.settings import Settings
from tests.support.documents import TOPICS

pytestmark = pytest.mark.integration

PUBLIC = Principal.of("test", ["public"])


def write_topics(root: Path, names: list[str]) -> Path:
    root.mkdir(exist_ok=True)
    for name in names:
        text = TOPICS[name]
        (root / f"{name}.txt").write_text(f"{text}\n\n" + f"{text} Раздел {name}.\n\n" * 3, encoding="utf-8")
    return root


def chunk_ids(client: OpenSearch, alias: str) -> set[str]:
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 1000, "_source": False, "query": {"match_all": {}}})
    return {h["_id"] for h in hits["hits"]["hits"]}


def test_small_index_stays_on_one_shard_and_grown_one_is_split(tmp_path: Path, settings: Settings, client: OpenSearch,
                                                               navec_embedder: NavecEmbedder) -> None:
    names = list(TOPICS)
    settings.index.split_at_chunks = 1000  # the first run stays below it
    root = write_topics(tmp_path / "docs", names[:3])
    run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    first = concrete_index(client, settings.index.alias)
    assert primary_shards(client, str(first)) == 1
    small = chunk_ids(client, settings.index.alias)
    stats = read_embedder_meta(client, settings.index)["stats"]

    settings.index.split_at_chunks = len(small) + 1  # the next run takes it past the threshold
    write_topics(root, names[3:])
    report = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)

    assert report.counts == {"indexed": 3, "skipped": 3}
    grown = concrete_index(client, settings.index.alias)
    assert grown != first and not client.indices.exists(index=first)
    assert primary_shards(client, str(grown)) == settings.index.shards == 2
    every = chunk_ids(client, settings.index.alias)
    assert small < every and client.count(index=grown)["count"] == len(every)  # no chunk lost or doubled
    assert read_embedder_meta(client, settings.index, grown)["stats"] == stats
    vectors = client.count(index=grown, body={"query": {"exists": {"field": "embedding"}}})["count"]
    assert vectors == len(every)

    service = SearchService(settings, client, navec_embedder)
    for name in names:  # the vectors came along: k-NN alone finds each document (exact cosine, whatever the
        # shard; BM25's per-shard statistics on six tiny documents would make a top-1 check a coin toss)
        query = TOPICS[name].split(".")[0]
        dense = service.search({"query": query, "search_mode": "semantic"}, PUBLIC)
        assert dense.results[0].file_path.endswith(f"{name}.txt") and dense.results[0].similarity > 0.2
        hybrid = service.search({"query": query}, PUBLIC)
        assert hybrid.meta.route_used == "hybrid" and hybrid.meta.total_results >= 1
        assert any(r.file_path.endswith(f"{name}.txt") for r in hybrid.results)

    (root / "кладка.txt").unlink()  # still writable after the split: deletions and new files go in
    write_topics(root, [])
    again = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    assert again.counts.get("deleted") == 1 and "failed" not in again.counts
    assert concrete_index(client, settings.index.alias) == grown


def test_split_disabled_starts_with_every_shard(tmp_path: Path, settings: Settings, client: OpenSearch,
                                                navec_embedder: NavecEmbedder) -> None:
    settings.index.split_at_chunks = 0
    run_ingest(IngestOptions([write_topics(tmp_path / "docs", list(TOPICS)[:2])]), settings, client,
               navec_embedder, quiet=True)
    assert primary_shards(client, str(concrete_index(client, settings.index.alias))) == 2


def test_a_failed_split_leaves_the_old_index_serving_and_writable(tmp_path: Path, settings: Settings,
                                                                  client: OpenSearch, navec_embedder: NavecEmbedder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from opensearchpy.exceptions import ConnectionError as EngineConnectionError

    from service.engine.gateway import translate

    real_split = client.indices.split

    def split_then_lose_the_answer(*args: Any, **kwargs: Any) -> None:
        real_split(*args, **kwargs)  # the engine did split; the answer never arrived
        raise translate(EngineConnectionError("N/A", "connection reset", None))  # as the client raises it

    monkeypatch.setattr(client.indices, "split", split_then_lose_the_answer)
    settings.index.split_at_chunks = 1
    root = write_topics(tmp_path / "docs", list(TOPICS)[:2])
    first = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)

    assert first.counts == {"indexed": 2}  # the chunks are written; only the split failed (logged)
    index = concrete_index(client, settings.index.alias)
    assert primary_shards(client, str(index)) == 1
    assert not client.indices.exists(index=f"{settings.index.alias}-000002")
    write_topics(root, list(TOPICS)[2:4])
    again = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    assert again.counts == {"indexed": 2, "skipped": 2}  # no write block left behind
