"""The real index template and search pipelines, applied to a real node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from service.embedders.base import EmbedderIdentity
from service.engine.gateway import PRUNING_SETTING
from service.engine.index_admin.apply import Change, apply_all, index_status
from service.engine.index_admin.guards import read_pruning
from service.engine.index_meta import claim_embedder_meta
from service.errors import IndexSetupError, SearchError
from service.settings import IndexSettings
from service.settings.capabilities import CAPABILITIES

pytestmark = pytest.mark.integration


def _snapshot(client: OpenSearch, settings: IndexSettings) -> dict[str, Any]:
    return {
        "template": client.indices.get_index_template(name=settings.template_name),
        "pipelines": client.search_pipeline.get(id=f"{settings.hybrid_pipeline},{settings.rrf_pipeline}"),
        "indices": sorted(client.indices.get_alias(name=settings.alias)),
        "mapping": client.indices.get_mapping(index=settings.alias),
        "settings": client.indices.get_settings(index=settings.alias)[settings.first_index]["settings"]["index"]
        .get("analysis"),
    }


def test_templates_and_pipelines_apply_twice_without_change(client: OpenSearch, index_settings: IndexSettings) -> None:
    first = apply_all(client, index_settings)
    assert {c.action for c in first} == {"created"}
    before = _snapshot(client, index_settings)

    second = apply_all(client, index_settings)

    assert {c.action for c in second} == {"unchanged"}
    assert _snapshot(client, index_settings) == before
    assert before["indices"] == [index_settings.first_index]


def hybrid_normalization(client: OpenSearch, settings: IndexSettings) -> dict[str, Any]:
    stored = client.search_pipeline.get(id=settings.hybrid_pipeline)[settings.hybrid_pipeline]
    processor: dict[str, Any] = stored["phase_results_processors"][0]["normalization-processor"]
    return processor


def test_changed_weights_update_the_pipeline_in_place(client: OpenSearch, index_settings: IndexSettings) -> None:
    apply_all(client, index_settings)
    reweighted = index_settings.model_copy(update={"bm25_weight": 0.3})

    changes = {c.name: c.action for c in apply_all(client, reweighted)}

    assert changes[index_settings.hybrid_pipeline] == "updated"
    assert changes[index_settings.rrf_pipeline] == "unchanged"
    assert hybrid_normalization(client, index_settings)["combination"]["parameters"]["weights"] == [0.3, 0.7]


def test_min_max_floors_update_the_pipeline_once(client: OpenSearch, index_settings: IndexSettings) -> None:
    apply_all(client, index_settings)
    floored = index_settings.model_copy(update={"bm25_lower_bound": 0.0, "dense_lower_bound": 0.875})

    first = {c.name: c.action for c in apply_all(client, floored)}
    second = {c.name: c.action for c in apply_all(client, floored)}

    assert (first[index_settings.hybrid_pipeline], second[index_settings.hybrid_pipeline]) == ("updated", "unchanged")
    normalization = hybrid_normalization(client, index_settings)["normalization"]
    assert normalization["parameters"]["lower_bounds"] == [{"mode": "apply", "min_score": 0.0},
                                                           {"mode": "apply", "min_score": 0.875}]


class RecordedAs:
    """Only an identity: what an ingest with that embedder leaves in the index's record."""

    def __init__(self, provider: str, dimension: int) -> None:
        self.identity = EmbedderIdentity(provider, f"{provider}-model", dimension)


def test_pipelines_follow_the_embedder_the_index_records(client: OpenSearch, index_settings: IndexSettings) -> None:
    # configured for navec-like plain min-max, but the index records e5: a run with this configuration
    # (an ingest that will be refused, an `index init`) must leave e5's fusion in place
    apply_all(client, index_settings)
    recorded = RecordedAs("e5", index_settings.embedding_dim)
    claim_embedder_meta(client, recorded, index_settings, None)  # type: ignore[arg-type]
    e5 = CAPABILITIES["e5"].fusion

    apply_all(client, index_settings)

    processor = hybrid_normalization(client, index_settings)
    assert processor["combination"]["parameters"]["weights"] == [e5["bm25_weight"], 1 - e5["bm25_weight"]]
    assert processor["normalization"]["parameters"]["lower_bounds"][1]["min_score"] == e5["dense_lower_bound"]
    assert index_status(client, index_settings).ok
    explicit = index_settings.model_copy(update={"bm25_weight": 0.6})  # a weight set explicitly still wins
    apply_all(client, explicit)
    assert hybrid_normalization(client, index_settings)["combination"]["parameters"]["weights"] == [0.6, 0.4]


def test_status_reports_ok_after_init_and_problems_before(client: OpenSearch, index_settings: IndexSettings) -> None:
    assert not index_status(client, index_settings).ok
    apply_all(client, index_settings)
    status = index_status(client, index_settings)
    assert status.ok, status.problems
    assert status.concrete_index == index_settings.first_index
    assert status.embedding_dim == 4
    assert status.doc_count == 0


def test_dimension_mismatch_is_refused(client: OpenSearch, index_settings: IndexSettings) -> None:
    apply_all(client, index_settings)
    wider = index_settings.model_copy(update={"embedding_dim": 8})

    with pytest.raises(IndexSetupError) as caught:
        apply_all(client, wider)

    assert any("vector dimension 4" in p for p in caught.value.details["problems"])


def test_a_plain_index_under_the_alias_name_is_refused(client: OpenSearch, index_settings: IndexSettings) -> None:
    client.indices.create(index=index_settings.alias)
    try:
        with pytest.raises(IndexSetupError, match="plain index"):
            apply_all(client, index_settings)
    finally:
        client.indices.delete(index=index_settings.alias)


def test_vector_field_is_lucene_hnsw_cosine(client: OpenSearch, index_settings: IndexSettings) -> None:
    apply_all(client, index_settings)
    mapping = client.indices.get_mapping(index=index_settings.alias)[index_settings.first_index]["mappings"]
    vector = mapping["properties"]["embedding"]
    assert vector["type"] == "knn_vector"
    assert vector["method"]["engine"] == "lucene"
    assert vector["method"]["space_type"] == "cosinesimil"


def test_migrate_rebuilds_from_a_changed_template_and_keeps_vectors(client: OpenSearch, index_settings: IndexSettings,
                                                                    tmp_path: Path) -> None:
    import json
    import shutil
    from types import SimpleNamespace

    from service.embedders.base import EmbedderIdentity
    from service.engine.index_admin.apply import index_status
    from service.engine.index_admin.maintenance import migrate
    from service.engine.index_admin.templates import TEMPLATES_DIR
    from service.engine.index_meta import claim_embedder_meta, read_embedder_meta

    apply_all(client, index_settings)
    client.index(index=index_settings.alias, id="a", body={"text": "бетон", "embedding": [0.1, 0.2, 0.3, 0.4]},
                 refresh=True)
    built_by = SimpleNamespace(identity=EmbedderIdentity("navec", "m", 4))
    claim_embedder_meta(client, built_by, index_settings, {"weights": [1, 2]})  # type: ignore[arg-type]
    changed = tmp_path / "templates"
    shutil.copytree(TEMPLATES_DIR, changed)
    chunks = json.loads((changed / "chunks.json").read_text())
    chunks["template"]["mappings"]["properties"]["page_label"]["ignore_above"] = 100
    (changed / "chunks.json").write_text(json.dumps(chunks, ensure_ascii=False))
    assert index_status(client, index_settings, changed).notices

    old, new, count = migrate(client, index_settings, changed)

    assert (old, new, count) == (index_settings.first_index, f"{index_settings.alias}-000002", 1)
    carried = read_embedder_meta(client, index_settings)  # the new index's own record: same model, same statistics
    assert carried is not None and carried["index"] == new
    assert (carried["provider"], carried["model"], carried["stats"]) == ("navec", "m", {"weights": [1, 2]})
    assert sorted(client.indices.get_alias(name=index_settings.alias)) == [new]
    assert not client.indices.exists(index=old)
    assert index_status(client, index_settings, changed).notices == []
    hit = client.search(index=index_settings.alias, body={"query": {"match": {"text": "бетон"}},
                                                          "_source": {"includes": ["embedding"]}})["hits"]["hits"][0]
    assert hit["_source"]["embedding"] == pytest.approx([0.1, 0.2, 0.3, 0.4])


def test_a_side_index_deleted_under_a_writer_comes_back_with_its_own_mapping(client: OpenSearch,
                                                                              index_settings: IndexSettings) -> None:
    from service.usage.querylog import QueryLog

    apply_all(client, index_settings)
    log = QueryLog(client, index_settings.queries_index, interval_s=0.05)
    log.record({"tool": "search_documents", "query": "до удаления", "arguments": {"query": "до удаления"}})
    assert log.flush(10)
    client.indices.delete(index=f"{index_settings.queries_index},{index_settings.files_index}")

    log.record({"tool": "search_documents", "query": "после", "arguments": {"query": "после", "limit": 3}})
    assert log.flush(10)
    mapping = client.indices.get_mapping(index=index_settings.queries_index)[index_settings.queries_index]["mappings"]
    assert mapping["dynamic"] == "false" and mapping["properties"]["arguments"]["type"] == "flat_object"
    with pytest.raises(SearchError) as refused:  # the registry's strict mapping, not a guessed one
        client.index(index=index_settings.files_index, id="x", body={"doc_id": "x", "guessed_field": 1})
    assert refused.value.details["status"] == 400
    assert client.indices.get_mapping(index=index_settings.files_index)[index_settings.files_index]["mappings"][
        "dynamic"] == "strict"


def test_drop_all_leaves_no_template_behind(client: OpenSearch, index_settings: IndexSettings) -> None:
    from service.engine.index_admin.apply import drop_all

    apply_all(client, index_settings)
    drop_all(client, index_settings)
    names = {t["name"] for t in client.indices.get_index_template()["index_templates"]}
    assert not {n for n in names if n.startswith(index_settings.alias)}


@pytest.fixture
def cluster_settings_restored(client: OpenSearch) -> Iterator[None]:
    yield
    client.cluster.put_settings(body={"persistent": {PRUNING_SETTING: None}, "transient": {PRUNING_SETTING: None}})


@pytest.mark.usefixtures("cluster_settings_restored")
def test_init_turns_the_clusters_cardinality_pruning_off_and_status_tells_when_it_is_on(
        client: OpenSearch, index_settings: IndexSettings) -> None:
    client.cluster.put_settings(body={"persistent": {PRUNING_SETTING: 100}})  # an external cluster's default
    changes = apply_all(client, index_settings)
    assert Change("cluster_setting", PRUNING_SETTING, "updated") in changes
    assert read_pruning(client) == 0 and index_status(client, index_settings).notices == []
    assert Change("cluster_setting", PRUNING_SETTING, "updated") not in apply_all(client, index_settings)
    client.cluster.put_settings(body={"transient": {PRUNING_SETTING: 100}})  # set back over it by someone else
    notices = index_status(client, index_settings).notices
    assert len(notices) == 1 and PRUNING_SETTING in notices[0] and "is 100" in notices[0]
