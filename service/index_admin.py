"""Apply and check the chunk index template, its alias and the hybrid search pipelines.

The JSON under ``index_templates/`` is the source of truth; settings fill in the parts that vary
(index pattern, vector dimension, shards, fusion weights). Applying is idempotent: each resource
is compared with what the engine holds and written only when it differs.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loguru import logger
from opensearchpy import OpenSearch
from opensearchpy import exceptions as os_exc

from service.errors import IndexSetupError
from service.index_meta import EMBEDDER_DOC, bump_generation, carry_embedder_meta, embedder_doc_id, read_embedder_meta
from service.opensearch import engine_errors
from service.settings import FUSION, IndexSettings

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "index_templates"
HASH_KEY = "stroidok_template_hash"

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


def load_json(relative: str, templates_dir: Path = TEMPLATES_DIR) -> dict[str, Any]:
    """A JSON file from ``index_templates/`` with its ``_comment`` keys removed."""
    data: dict[str, Any] = json.loads((templates_dir / relative).read_text(encoding="utf-8"))
    data.pop("_comment", None)
    return data


def content_hash(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def build_index_template(raw: dict[str, Any], settings: IndexSettings) -> dict[str, Any]:
    """The index template body for ``settings.alias``, stamped with a hash of its own content."""
    body = copy.deepcopy(raw)
    body["index_patterns"] = [f"{settings.alias}-0*"]
    index = body["template"]["settings"]["index"]
    index["number_of_shards"] = settings.shards
    index.pop("number_of_replicas", None)
    index.pop("auto_expand_replicas", None)
    index.update(replica_settings(settings))
    body["template"]["mappings"]["properties"]["embedding"]["dimension"] = settings.embedding_dim
    body["template"]["mappings"]["_meta"] = {HASH_KEY: content_hash(body)}
    return body


def replica_settings(settings: IndexSettings) -> dict[str, Any]:
    """A fixed replica count when configured, else one replica as soon as a second node is there."""
    if settings.replicas is None:
        return {"auto_expand_replicas": "0-1"}
    return {"number_of_replicas": settings.replicas, "auto_expand_replicas": False}


def build_hybrid_pipeline(raw: dict[str, Any], settings: IndexSettings) -> dict[str, Any]:
    """The normalization pipeline with the configured techniques, BM25/dense weights and min-max floors.

    A floor is the engine's ``apply`` lower bound: scores at or above it scale as ``(s - floor) / (top - floor)``;
    the rare score under it falls back to plain min-max, so floors sit below the scores a leg really gives."""
    body = copy.deepcopy(raw)
    processor = body["phase_results_processors"][0]["normalization-processor"]
    processor["normalization"]["technique"] = settings.normalization
    processor["combination"]["technique"] = settings.combination
    processor["combination"]["parameters"]["weights"] = [settings.bm25_weight, settings.dense_weight]
    bounds = [settings.bm25_lower_bound, settings.dense_lower_bound]
    if settings.normalization == "min_max" and any(b is not None for b in bounds):
        processor["normalization"]["parameters"] = {"lower_bounds": [
            {"mode": "ignore"} if b is None else {"mode": "apply", "min_score": b} for b in bounds]}
    return body


def build_rrf_pipeline(raw: dict[str, Any], settings: IndexSettings) -> dict[str, Any]:
    body = copy.deepcopy(raw)
    body["phase_results_processors"][0]["score-ranker-processor"]["combination"]["rank_constant"] = (
        settings.rrf_rank_constant
    )
    return body


def wanted_pipelines(settings: IndexSettings, templates_dir: Path = TEMPLATES_DIR) -> dict[str, dict[str, Any]]:
    """Pipeline id → body, for every search pipeline the product uses."""
    return {
        settings.hybrid_pipeline: build_hybrid_pipeline(load_json("pipelines/hybrid.json", templates_dir), settings),
        settings.rrf_pipeline: build_rrf_pipeline(load_json("pipelines/rrf.json", templates_dir), settings),
        settings.single_pipeline: load_json("pipelines/single.json", templates_dir),
    }


def wanted_template(settings: IndexSettings, templates_dir: Path = TEMPLATES_DIR) -> dict[str, Any]:
    return build_index_template(load_json("chunks.json", templates_dir), settings)


def _installed_template_hash(client: OpenSearch, name: str) -> str | None:
    try:
        found = client.indices.get_index_template(name=name)
    except os_exc.NotFoundError:
        return None
    template = found["index_templates"][0]["index_template"]
    return str(template.get("template", {}).get("mappings", {}).get("_meta", {}).get(HASH_KEY, ""))


def _installed_pipeline(client: OpenSearch, pipeline_id: str) -> dict[str, Any] | None:
    try:
        pipeline: dict[str, Any] = client.search_pipeline.get(id=pipeline_id)[pipeline_id]
        return pipeline
    except os_exc.NotFoundError:
        return None


def _alias_indices(client: OpenSearch, alias: str) -> list[str]:
    try:
        return sorted(client.indices.get_alias(name=alias))
    except os_exc.NotFoundError:
        return []


def _apply_template(client: OpenSearch, name: str, body: dict[str, Any]) -> Change:
    """Write an index template whose mapping ``_meta`` carries its content hash, only when the hash differs."""
    installed = _installed_template_hash(client, name)
    wanted = body["template"]["mappings"]["_meta"][HASH_KEY]
    if installed == wanted:
        return Change("index_template", name, "unchanged")
    client.indices.put_index_template(name=name, body=body)
    return Change("index_template", name, "created" if installed is None else "updated")


def _apply_pipeline(client: OpenSearch, pipeline_id: str, body: dict[str, Any]) -> Change:
    installed = _installed_pipeline(client, pipeline_id)
    if installed == body:
        return Change("search_pipeline", pipeline_id, "unchanged")
    client.search_pipeline.put(id=pipeline_id, body=body)
    return Change("search_pipeline", pipeline_id, "created" if installed is None else "updated")


def _apply_index(client: OpenSearch, settings: IndexSettings, template: dict[str, Any]) -> Change:
    if indices := _alias_indices(client, settings.alias):
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
    if not _create_once(client, settings.first_index, body):
        return Change("index", f"{settings.alias} -> {settings.first_index}", "unchanged")
    return Change("index", f"{settings.alias} -> {settings.first_index}", "created")


def _create_once(client: OpenSearch, name: str, body: dict[str, Any]) -> bool:
    """Create an index; False when another process (a parallel ``ingest --shard``) created it first."""
    try:
        client.indices.create(index=name, body=body)
    except os_exc.RequestError as exc:
        if exc.error != "resource_already_exists_exception":
            raise
        return False
    return True


def _add_new_fields(client: OpenSearch, index: str, mappings: dict[str, Any]) -> Change:
    """Fields the template gained since ``index`` was created are added to it (a mapping only grows), so
    an ingest with a newer version writes into an older index; a changed field needs `index migrate`."""
    current = client.indices.get_mapping(index=index)[index]["mappings"].get("properties", {})
    new = {name: field for name, field in mappings["properties"].items() if name not in current}
    if not new:
        return Change("index", index, "unchanged")
    try:
        client.indices.put_mapping(index=index, body={"properties": new})
    except os_exc.RequestError as exc:
        logger.warning("index {} keeps its mapping ({}); run `stroidok index migrate`", index, exc.error)
        return Change("index", index, "unchanged")
    return Change("index", index, "updated")


def side_indexes(settings: IndexSettings) -> dict[str, str]:
    """The alias's side indexes and the file each is described by."""
    return {settings.files_index: "files.json", settings.meta_index: "meta.json",
            settings.queries_index: "queries.json"}


def side_template_name(index: str) -> str:
    return f"{index}-template"


def side_template(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """An index template for exactly ``name``: were the side index deleted under a running writer (the query
    log, an ingest's registry), the engine re-creates it with its own mapping instead of guessing one."""
    mappings = dict(body["mappings"])
    template: dict[str, Any] = {"index_patterns": [name], "priority": 250,
                                "template": {"settings": body["settings"], "mappings": mappings}}
    mappings["_meta"] = {HASH_KEY: content_hash(template)}
    return template


def _apply_side_index(client: OpenSearch, name: str, body: dict[str, Any], settings: IndexSettings) -> list[Change]:
    """Create a side index if missing, and its template; its mapping only ever gains fields, so existing ones
    are kept. Its replicas follow the settings (a registry on one node only would not survive that node)."""
    body["settings"]["index"].update(replica_settings(settings))
    template = _apply_template(client, side_template_name(name), side_template(name, body))
    if client.indices.exists(index=name):
        client.indices.put_mapping(index=name, body=body["mappings"])
        client.indices.put_settings(index=name, body={"index": replica_settings(settings)})
        return [template, Change("index", name, "unchanged")]
    return [template, Change("index", name, "created" if _create_once(client, name, body) else "unchanged")]


def with_recorded_fusion(client: OpenSearch, settings: IndexSettings) -> IndexSettings:
    """``settings`` with the fusion (weight, floors) of the embedder the alias's index records, wherever they
    are not set explicitly: the search service embeds queries with that embedder whatever is configured, so
    a run configured for another one (an ingest it will refuse, say) must not leave its fusion behind."""
    recorded = FUSION.get(str((read_embedder_meta(client, settings) or {}).get("provider")))
    update = {k: v for k, v in (recorded or {}).items() if k not in settings.model_fields_set}
    return settings.model_copy(update=update) if update else settings


def apply_all(client: OpenSearch, settings: IndexSettings, templates_dir: Path = TEMPLATES_DIR) -> list[Change]:
    """Make the engine hold the template, pipelines and aliased index described by the files."""
    settings = with_recorded_fusion(client, settings)
    with engine_errors():
        template = wanted_template(settings, templates_dir)
        changes = [_apply_template(client, settings.template_name, template)]
        changes += [_apply_pipeline(client, pid, body) for pid, body in wanted_pipelines(settings, templates_dir).items()]
        changes.append(_apply_index(client, settings, template))
        for index, file in side_indexes(settings).items():
            changes += _apply_side_index(client, index, load_json(file, templates_dir), settings)
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
    with engine_errors():
        template_hash = _installed_template_hash(client, settings.template_name)
        wanted_hash = wanted_template(settings, templates_dir)["template"]["mappings"]["_meta"][HASH_KEY]
        pipelines = {pid: _installed_pipeline(client, pid) == body
                     for pid, body in wanted_pipelines(settings, templates_dir).items()}
        indices = _alias_indices(client, settings.alias)
        concrete = indices[-1] if indices else None
        count = client.count(index=settings.alias)["count"] if concrete else None
        pending = client.count(index=settings.alias, body={"query": {"term": {"vector_pending": True}}})["count"] \
            if concrete else None
        dim, index_hash = _index_mapping_facts(client, concrete) if concrete else (None, None)
    status = IndexStatus(settings.alias, concrete, count, template_hash == wanted_hash, pipelines, dim, pending)
    status.problems = _problems(status, settings)
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


def swap_alias(client: OpenSearch, alias: str, old: str, new: str) -> None:
    """Move ``alias`` (and its writes) from ``old`` to ``new`` in one atomic step."""
    client.indices.update_aliases(body={"actions": [
        {"remove": {"index": old, "alias": alias}},
        {"add": {"index": new, "alias": alias, "is_write_index": True}},
    ]})


def retire(client: OpenSearch, settings: IndexSettings, old: str) -> None:
    """Drop an index the alias has just left, and its embedder record."""
    client.indices.delete(index=old)
    client.delete(index=settings.meta_index, id=embedder_doc_id(old), ignore=[404], refresh=True)


def next_index_name(current: str) -> str:
    """``alias-000001`` → ``alias-000002``."""
    stem, _, number = current.rpartition("-")
    return f"{stem}-{int(number) + 1:06d}"


SWITCH_KEY = "stroidok_switch_from"
STRIP_VECTORS = "ctx._source.remove('embedding'); ctx._source.vector_pending = true"


@dataclass(frozen=True)
class EmbedderSwitch:
    """A model switch: the new index is given the text only, and ``fill(new_index)`` adds its vectors with
    the new embedder (resumable) before the alias moves; until then the old index serves every search."""

    fill: Callable[[str], None]


def pending_switch(client: OpenSearch, settings: IndexSettings) -> str | None:
    """The index a model switch is filling (not yet behind the alias), if one is in progress."""
    with engine_errors():
        current = _alias_indices(client, settings.alias)[-1:]
        if not current:
            return None
        new = next_index_name(current[0])
        if not client.indices.exists(index=new):
            return None
        meta = client.indices.get_mapping(index=new)[new]["mappings"].get("_meta", {})
    return new if meta.get(SWITCH_KEY) == current[0] else None


def migrate(client: OpenSearch, settings: IndexSettings, templates_dir: Path = TEMPLATES_DIR,
            switch: EmbedderSwitch | None = None) -> tuple[str, str, int]:
    """Reindex the alias's index into a new one built from the current template, then switch the alias
    atomically and drop the old index. Vectors come along through k-NN derived source, unless this is a
    model ``switch``: then the new index gets the text, ``switch.fill`` embeds it, and the alias moves only
    once every chunk has its vector (a stopped switch resumes: run it again)."""
    with engine_errors():
        template = wanted_template(settings, templates_dir)
        _apply_template(client, settings.template_name, template)
        current = _alias_indices(client, settings.alias)[-1:]
        if not current:
            raise IndexSetupError(f"alias {settings.alias} points to no index; run `stroidok index init`")
        old = current[0]
        new = next_index_name(old)
        resumed = switch is not None and pending_switch(client, settings) == new
        if not resumed:
            _copy(client, old, new, template, switch is not None)
    if switch is not None:
        switch.fill(new)
    with engine_errors():
        client.indices.refresh(index=f"{old},{new}")
        pending = int(client.count(index=new, body={"query": {"term": {"vector_pending": True}}})["count"])
        counts = (int(client.count(index=old)["count"]), int(client.count(index=new)["count"]))
        if switch is not None and pending:
            raise IndexSetupError(f"{pending} chunks of {new} still have no vector; {settings.alias} stays on "
                                  f"{old}: run `stroidok index migrate` again to go on")
        if counts[0] != counts[1]:
            raise IndexSetupError(f"{old} holds {counts[0]} chunks, {new} {counts[1]}: the index changed during "
                                  f"the rebuild; {settings.alias} stays on {old}. Delete {new} and run "
                                  "`stroidok index migrate` again", details={"old": old, "new": new})
        if switch is None:
            carry_embedder_meta(client, settings, old, new)
        swap_alias(client, settings.alias, old, new)
        retire(client, settings, old)
        if switch is not None:
            for pipeline_id, body in wanted_pipelines(settings, templates_dir).items():  # fusion for the new model
                _apply_pipeline(client, pipeline_id, body)
            client.delete(index=settings.meta_index, id=EMBEDDER_DOC, ignore=[404], refresh=True)
    if switch is not None:
        bump_generation(client, settings)
    return old, new, counts[1]


def _copy(client: OpenSearch, old: str, new: str, template: dict[str, Any], text_only: bool) -> None:
    """Create ``new`` and reindex ``old`` into it (the text only, marked pending, for a model switch)."""
    meta = {HASH_KEY: template["template"]["mappings"]["_meta"][HASH_KEY], **({SWITCH_KEY: old} if text_only else {})}
    client.indices.create(index=new, body={"mappings": {"_meta": meta}})
    body: dict[str, Any] = {"source": {"index": old}, "dest": {"index": new}}
    if text_only:
        body["script"] = {"lang": "painless", "source": STRIP_VECTORS}
    result = client.reindex(body=body, wait_for_completion=True, refresh=True, request_timeout=3600)
    if result.get("failures"):
        client.indices.delete(index=new)
        raise IndexSetupError("reindex failed; the old index is untouched", details={"failures": result["failures"][:5]})


def drop_all(client: OpenSearch, settings: IndexSettings) -> None:
    """Remove everything ``apply_all`` creates for an alias (throwaway indexes of tests, eval, benchmarks)."""
    client.indices.delete(index=f"{settings.alias}-*", ignore=[404], expand_wildcards="all")
    for template in (settings.template_name, *map(side_template_name, side_indexes(settings))):
        client.indices.delete_index_template(name=template, ignore=[404])
    for pipeline_id in (settings.hybrid_pipeline, settings.rrf_pipeline, settings.single_pipeline):
        client.search_pipeline.delete(id=pipeline_id, ignore=[404])


def segment_count(client: OpenSearch, alias: str) -> int:
    """Searchable segments of the index's primaries."""
    stats = client.indices.stats(index=alias, metric="segments")["_all"]["primaries"]
    return int(stats["segments"]["count"])


def primary_shards(client: OpenSearch, index: str) -> int:
    found = client.indices.get_settings(index=index, name="index.number_of_shards")
    return int(found[index]["settings"]["index"]["number_of_shards"])


def split_if_grown(client: OpenSearch, settings: IndexSettings) -> tuple[str, str] | None:
    """Split the alias's one-shard index to ``settings.shards`` primaries once it holds
    ``settings.split_at_chunks`` chunks; returns (old, new) when it did. The engine's ``_split`` hard-links
    the segments (seconds, no re-embedding); writes are blocked meanwhile (a parallel writer's batch fails
    and is reported, its rerun writes it), then the alias moves atomically and the old index is dropped.
    Any failure leaves the old index serving and writable."""
    with engine_errors():
        indices = _alias_indices(client, settings.alias)
        if not settings.split_at_chunks or not indices:
            return None
        old = indices[-1]
        new = next_index_name(old)
        if primary_shards(client, old) != 1 or settings.shards < 2 or client.indices.exists(index=new):
            return None
        if (chunks := int(client.count(index=old)["count"])) < settings.split_at_chunks:
            return None
        logger.info("splitting {} ({} chunks) into {} primary shards", old, chunks, settings.shards)
        client.indices.put_settings(index=old, body={"index.blocks.write": True})
        try:
            client.indices.split(index=old, target=new, body={"settings": {
                "index.number_of_shards": settings.shards, "index.blocks.write": None}})
            health = client.cluster.health(index=new, params={"wait_for_status": "yellow", "timeout": "600s",
                                                              "request_timeout": 660})
            if health.get("timed_out"):
                raise IndexSetupError(f"split index {new} did not start within 600s", details={"health": health})
            carry_embedder_meta(client, settings, old, new)
            swap_alias(client, settings.alias, old, new)
        except Exception:
            client.indices.delete(index=new, ignore=[404])
            client.indices.put_settings(index=old, body={"index.blocks.write": None})
            raise
        retire(client, settings, old)
    return old, new


def optimize(client: OpenSearch, settings: IndexSettings, split: bool = True) -> tuple[int, int]:
    """Split a grown one-shard index (``split_if_grown``), then merge each shard down to
    ``settings.merge_segments`` segments; returns the segment counts before and after. A hybrid search pays
    per segment (each leg and each document's inner hits run on every one): on the construction corpus,
    23 segments answer 3× slower than 2."""
    before = segment_count(client, settings.alias)
    if split:
        split_if_grown(client, settings)  # the merge below also drops what a split left marked deleted
    client.indices.forcemerge(index=settings.alias, max_num_segments=settings.merge_segments,
                              params={"request_timeout": 6 * 3600})
    client.indices.refresh(index=settings.alias)  # merged segments are searched only once refreshed
    return before, segment_count(client, settings.alias)
