"""The engine stopped mid-session and restarted: a machine-readable error, then service as before."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.engine.launcher.process import EngineProcess
from service.errors import IndexUnavailable
from service.search.service import SearchService
from tests.support.engine import engine_client, managed_engine_settings, product_settings

pytestmark = pytest.mark.integration


def test_engine_stopped_and_restarted_mid_session(tmp_path: Path, navec_embedder: NavecEmbedder,
                                                  public: Principal) -> None:
    engine = EngineProcess(managed_engine_settings(heap="512m"))
    try:
        url = engine.up().url
        client = engine_client(url, 10)
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "акт.txt").write_text("Акт приемки бетонных работ по устройству ростверка.",
                                                   encoding="utf-8")
        settings = product_settings(url, f"restart-{uuid.uuid4().hex[:6]}")
        run_ingest(IngestOptions([tmp_path / "docs"]), settings, client, navec_embedder, quiet=True)
        service = SearchService(settings, client, navec_embedder)
        service.settings.search.cache_ttl_s = 0
        service.cache = None
        assert service.search({"query": "приемка ростверка"}, public).meta.total_results == 1

        engine.down()
        with pytest.raises(IndexUnavailable) as caught:
            service.search({"query": "приемка ростверка"}, public)
        assert caught.value.code == "INDEX_UNAVAILABLE"
        assert caught.value.to_dict()["message"].startswith("the search engine is not reachable")

        engine.up()
        assert service.search({"query": "приемка ростверка"}, public).meta.total_results == 1
    finally:
        engine.down()
        shutil.rmtree(engine.paths.root, ignore_errors=True)
