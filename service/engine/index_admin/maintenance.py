"""Index maintenance: rebuild into a new index (``migrate``, model switches), split a grown one-shard index,
merge segments; the alias moves atomically and the old index is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from opensearchpy import OpenSearch

from service.engine.index_admin.apply import alias_indices, apply_pipeline, apply_template
from service.engine.index_admin.create import create_index
from service.engine.index_admin.templates import HASH_KEY, TEMPLATES_DIR, wanted_pipelines, wanted_template
from service.engine.index_meta import (
    EMBEDDER_DOC,
    bump_generation,
    carry_embedder_meta,
    embedder_doc_id,
    pending_vectors,
)
from service.errors import IndexSetupError
from service.settings import IndexSettings


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


STRIP_VECTORS = "ctx._source.remove('embedding'); ctx._source.remove('units'); ctx._source.vector_pending = true"
STRIP_UNITS = "ctx._source.remove('units')"


@dataclass(frozen=True)
class EmbedderSwitch:
    """A model switch: the new index is given the text only, and ``fill(new_index)`` adds its vectors with
    the new embedder (resumable) before the alias moves; until then the old index serves every search."""

    fill: Callable[[str], None]


def pending_switch(client: OpenSearch, settings: IndexSettings) -> str | None:
    """The index a model switch is filling (not yet behind the alias), if one is in progress."""
    current = alias_indices(client, settings.alias)[-1:]
    if not current:
        return None
    new = next_index_name(current[0])
    if not client.indices.exists(index=new):
        return None
    meta = client.indices.get_mapping(index=new)[new]["mappings"].get("_meta", {})
    return new if meta.get(SWITCH_KEY) == current[0] else None


def migrate(client: OpenSearch, settings: IndexSettings, templates_dir: Path = TEMPLATES_DIR,
            switch: EmbedderSwitch | None = None, drop_units: bool = False) -> tuple[str, str, int]:
    """Reindex the alias's index into a new one built from the current template, then switch the alias
    atomically and drop the old index. Vectors come along through k-NN derived source (the unit vectors too,
    unless ``drop_units``), unless this is a model ``switch``: then the new index gets the text,
    ``switch.fill`` embeds it, and the alias moves only once every chunk has its vector (a stopped switch
    resumes: run it again)."""
    template = wanted_template(settings, templates_dir)
    apply_template(client, settings.template_name, template)
    current = alias_indices(client, settings.alias)[-1:]
    if not current:
        raise IndexSetupError(f"alias {settings.alias} points to no index; run `stroidok index init`")
    old = current[0]
    new = next_index_name(old)
    resumed = switch is not None and pending_switch(client, settings) == new
    if not resumed:
        _copy(client, old, new, template, switch is not None, settings.create_block_wait_s, drop_units)
    if switch is not None:
        switch.fill(new)
    client.indices.refresh(index=f"{old},{new}")
    pending = pending_vectors(client, new)
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
            apply_pipeline(client, pipeline_id, body)
        client.delete(index=settings.meta_index, id=EMBEDDER_DOC, ignore=[404], refresh=True)
    if switch is not None:
        bump_generation(client, settings)
    return old, new, counts[1]


def _copy(client: OpenSearch, old: str, new: str, template: dict[str, Any], text_only: bool,
          block_wait_s: float, drop_units: bool = False) -> None:
    """Create ``new`` and reindex ``old`` into it (the text only, marked pending, for a model switch; without
    the unit vectors when ``drop_units``)."""
    meta = {HASH_KEY: template["template"]["mappings"]["_meta"][HASH_KEY], **({SWITCH_KEY: old} if text_only else {})}
    create_index(client, new, {"mappings": {"_meta": meta}}, block_wait_s)
    body: dict[str, Any] = {"source": {"index": old}, "dest": {"index": new}}
    if text_only:
        body["script"] = {"lang": "painless", "source": STRIP_VECTORS}
    elif drop_units:
        body["script"] = {"lang": "painless", "source": STRIP_UNITS}
    result = client.reindex(body=body, wait_for_completion=True, refresh=True, request_timeout=3600)
    if result.get("failures"):
        client.indices.delete(index=new)
        raise IndexSetupError("reindex failed; the old index is untouched",
                              details={"failures": result["failures"][:5]})


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
    indices = alias_indices(client, settings.alias)
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
