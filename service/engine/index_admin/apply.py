"""Apply and check the templates, the alias's index, the side indexes and the search pipelines.

Applying is idempotent: each resource is compared with what the engine holds and written only when it
differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loguru import logger
from opensearchpy import OpenSearch

from service.engine.gateway import PRUNING_SETTING, unless_missing
from service.engine.index_admin.create import create_index
from service.engine.index_admin.guards import PruningState, read_pruning, turn_off_pruning
from service.engine.index_admin.templates import (
    HASH_KEY,
    TEMPLATES_DIR,
    load_json,
    replica_settings,
    side_indexes,
    side_template,
    side_template_name,
    wanted_pipelines,
    wanted_template,
)
from service.engine.index_meta import pending_vectors, read_embedder_meta
from service.engine.launcher.status import write_blocked
from service.errors import IndexSetupError, RequestRejected
from service.settings import IndexSettings
from service.settings.capabilities import capabilities_of

Action = Literal["created", "updated", "unchanged"]


@dataclass(frozen=True)
class Change:
    kind: str
    name: str
    action: Action


@dataclass
class IndexStatus:
    alias: str
    concrete_index: str | None
    doc_count: int | None
    template_current: bool
    pipelines_current: dict[str, bool]
    embedding_dim: int | None
    pending_vectors: int | None = None
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _installed_template_hash(client: OpenSearch, name: str) -> str | None:
    found = unless_missing(lambda: client.indices.get_index_template(name=name), None)
    if found is None:
        return None
    template = found["index_templates"][0]["index_template"]
    return str(template.get("template", {}).get("mappings", {}).get("_meta", {}).get(HASH_KEY, ""))


def _installed_pipeline(client: OpenSearch, pipeline_id: str) -> dict[str, Any] | None:
    found = unless_missing(lambda: client.search_pipeline.get(id=pipeline_id), None)
    return None if found is None else dict(found[pipeline_id])


def alias_indices(client: OpenSearch, alias: str) -> list[str]:
    return sorted(unless_missing(lambda: client.indices.get_alias(name=alias), {}))


def apply_template(client: OpenSearch, name: str, body: dict[str, Any]) -> Change:
    """Write an index template whose mapping ``_meta`` carries its content hash, only when the hash differs."""
    installed = _installed_template_hash(client, name)
    wanted = body["template"]["mappings"]["_meta"][HASH_KEY]
    if installed == wanted:
        return Change("index_template", name, "unchanged")
    client.indices.put_index_template(name=name, body=body)
    return Change("index_template", name, "created" if installed is None else "updated")


def apply_pipeline(client: OpenSearch, pipeline_id: str, body: dict[str, Any]) -> Change:
    installed = _installed_pipeline(client, pipeline_id)
    if installed == body:
        return Change("search_pipeline", pipeline_id, "unchanged")
    client.search_pipeline.put(id=pipeline_id, body=body)
    return Change("search_pipeline", pipeline_id, "created" if installed is None else "updated")


def _apply_index(client: OpenSearch, settings: IndexSettings, template: dict[str, Any]) -> Change:
    if indices := alias_indices(client, settings.alias):
        client.indices.put_settings(index=indices[-1], body={"index": replica_settings(settings)})
        return _add_new_fields(client, indices[-1], template["template"]["mappings"])
    if client.indices.exists(index=settings.alias):
        if client.indices.exists_alias(name=settings.alias):  # a parallel `ingest --shard` created it just now
            return _apply_index(client, settings, template)
        raise IndexSetupError(
            f"'{settings.alias}' exists as a plain index, not an alias; delete it or choose another "
            "STROIDOK_INDEX_ALIAS",
        )
    body: dict[str, Any] = {"aliases": {settings.alias: {"is_write_index": True}}}
    if settings.split_at_chunks and settings.shards > 1:
        body["settings"] = {"index": {"number_of_shards": 1}}  # split to `shards` once grown (split_if_grown)
    if not create_index(client, settings.first_index, body, settings.create_block_wait_s):
        return Change("index", f"{settings.alias} -> {settings.first_index}", "unchanged")
    return Change("index", f"{settings.alias} -> {settings.first_index}", "created")


def _add_new_fields(client: OpenSearch, index: str, mappings: dict[str, Any]) -> Change:
    """Fields the template gained since ``index`` was created are added to it (a mapping only grows), so
    an ingest with a newer version writes into an older index; a changed field needs `index migrate`."""
    current = client.indices.get_mapping(index=index)[index]["mappings"].get("properties", {})
    new = {name: field for name, field in mappings["properties"].items() if name not in current}
    if not new:
        return Change("index", index, "unchanged")
    try:
        client.indices.put_mapping(index=index, body={"properties": new})
    except RequestRejected as exc:
        logger.warning("index {} keeps its mapping ({}); run `stroidok index migrate`", index, exc.details.get("type"))
        return Change("index", index, "unchanged")
    return Change("index", index, "updated")


def _apply_side_index(client: OpenSearch, name: str, body: dict[str, Any], settings: IndexSettings) -> list[Change]:
    """Create a side index if missing, and its template; its mapping only ever gains fields, so existing ones
    are kept. Its replicas follow the settings (a registry on one node only would not survive that node)."""
    body["settings"]["index"].update(replica_settings(settings))
    template = apply_template(client, side_template_name(name), side_template(name, body))
    if client.indices.exists(index=name):
        client.indices.put_mapping(index=name, body=body["mappings"])
        client.indices.put_settings(index=name, body={"index": replica_settings(settings)})
        return [template, Change("index", name, "unchanged")]
    created = create_index(client, name, body, settings.create_block_wait_s)
    return [template, Change("index", name, "created" if created else "unchanged")]


def with_recorded_fusion(client: OpenSearch, settings: IndexSettings) -> IndexSettings:
    """``settings`` with the fusion (weight, floors) of the embedder the alias's index records, wherever they
    are not set explicitly: the search service embeds queries with that embedder whatever is configured, so
    a run configured for another one (an ingest it will refuse, say) must not leave its fusion behind."""
    recorded = capabilities_of(str((read_embedder_meta(client, settings) or {}).get("provider"))).fusion
    update = {k: v for k, v in recorded.items() if k not in settings.model_fields_set}
    return settings.model_copy(update=update) if update else settings


def apply_all(client: OpenSearch, settings: IndexSettings, templates_dir: Path = TEMPLATES_DIR) -> list[Change]:
    """Make the engine hold the template, pipelines and aliased index described by the files."""
    settings = with_recorded_fusion(client, settings)
    template = wanted_template(settings, templates_dir)
    changes = [apply_template(client, settings.template_name, template)]
    changes += [apply_pipeline(client, pid, body) for pid, body in wanted_pipelines(settings, templates_dir).items()]
    changes.append(_apply_index(client, settings, template))
    for index, file in side_indexes(settings).items():
        changes += _apply_side_index(client, index, load_json(file, templates_dir), settings)
    if turn_off_pruning(client).changed:
        changes.append(Change("cluster_setting", PRUNING_SETTING, "updated"))
    status = _status(client, settings, templates_dir)
    if status.problems:
        raise IndexSetupError("index set up, but it does not match settings", details={"problems": status.problems})
    for notice in status.notices:
        logger.warning(notice)
    return changes


def _index_mapping_facts(client: OpenSearch, index: str) -> tuple[int | None, str | None]:
    """The vector dimension and the template hash the concrete index was created from."""
    mapping = client.indices.get_mapping(index=index)[index]["mappings"]
    dim = mapping.get("properties", {}).get("embedding", {}).get("dimension")
    return dim, mapping.get("_meta", {}).get(HASH_KEY)


def index_status(client: OpenSearch, settings: IndexSettings, templates_dir: Path = TEMPLATES_DIR) -> IndexStatus:
    """Compare what the engine holds with the files and settings; ``problems`` says what differs."""
    return _status(client, with_recorded_fusion(client, settings), templates_dir)


def _status(client: OpenSearch, settings: IndexSettings, templates_dir: Path) -> IndexStatus:
    """``index_status`` for settings whose fusion is already the recorded embedder's."""
    template_hash = _installed_template_hash(client, settings.template_name)
    wanted_hash = wanted_template(settings, templates_dir)["template"]["mappings"]["_meta"][HASH_KEY]
    pipelines = {pid: _installed_pipeline(client, pid) == body
                 for pid, body in wanted_pipelines(settings, templates_dir).items()}
    indices = alias_indices(client, settings.alias)
    concrete = indices[-1] if indices else None
    count = client.count(index=settings.alias)["count"] if concrete else None
    pending = pending_vectors(client, settings.alias) if concrete else None
    dim, index_hash = _index_mapping_facts(client, concrete) if concrete else (None, None)
    blocked = write_blocked(client, ",".join([concrete, *side_indexes(settings)])) if concrete else []
    status = IndexStatus(settings.alias, concrete, count, template_hash == wanted_hash, pipelines, dim, pending)
    status.problems = _problems(status, settings)
    if blocked:
        status.problems.append(f"writes to {', '.join(blocked)} are blocked: the engine's disk is past its "
                               "flood-stage watermark (free space; the engine lifts the block itself, `stroidok "
                               "engine status` shows the disk)")
    if (pruning := PruningState(read_pruning(client)).notice) is not None:
        status.notices.append(pruning)
    if concrete and dim == settings.embedding_dim and index_hash != wanted_hash:
        status.notices.append(f"index {concrete} was created from an older template (it works, without the newer "
                              "analysis): run `stroidok index migrate`")
    return status


def _problems(status: IndexStatus, settings: IndexSettings) -> list[str]:
    problems = []
    if not status.template_current:
        problems.append(f"index template {settings.template_name} is missing or differs from index_templates/")
    problems += [f"search pipeline {pid} is missing or differs" for pid, ok in status.pipelines_current.items()
                 if not ok]
    if status.concrete_index is None:
        problems.append(f"alias {settings.alias} points to no index")
    elif status.embedding_dim != settings.embedding_dim:
        problems.append(f"index {status.concrete_index} has vector dimension {status.embedding_dim}, settings say "
                        f"{settings.embedding_dim}: reindex or change STROIDOK_INDEX_EMBEDDING_DIM")
    return problems


def drop_all(client: OpenSearch, settings: IndexSettings) -> None:
    """Remove everything ``apply_all`` creates for an alias (throwaway indexes of tests, eval, benchmarks)."""
    client.indices.delete(index=f"{settings.alias}-*", ignore=[404], expand_wildcards="all")
    for template in (settings.template_name, *map(side_template_name, side_indexes(settings))):
        client.indices.delete_index_template(name=template, ignore=[404])
    for pipeline_id in (settings.hybrid_pipeline, settings.rrf_pipeline, settings.single_pipeline):
        client.search_pipeline.delete(id=pipeline_id, ignore=[404])
