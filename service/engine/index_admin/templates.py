"""The resources the product needs, built from ``index_templates/`` and settings: the chunk index template
(stamped with a hash of its content), the side indexes' templates and the search pipelines.

The JSON files are the source of truth; settings fill in the parts that vary (index pattern, vector
dimension, shards, fusion weights).
"""

from __future__ import annotations

import copy
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import index_templates
from service.settings import IndexSettings

TEMPLATES_DIR = Path(index_templates.__file__).resolve().parent


HASH_KEY = "stroidok_template_hash"


def load_json(relative: str, templates_dir: Path = TEMPLATES_DIR) -> dict[str, Any]:
    """A JSON file from ``index_templates/`` with its ``_comment`` keys removed."""
    data: dict[str, Any] = json.loads((templates_dir / relative).read_text(encoding="utf-8"))
    data.pop("_comment", None)
    return data


@lru_cache(maxsize=1)
def synonym_phrases() -> tuple[tuple[str, ...], ...]:
    """The several-word sides of the shipped synonym rules («проект производства работ»), read once."""
    rules = load_json("chunks.json")["template"]["settings"]["analysis"]["filter"]["ru_abbreviations"]["synonyms"]
    sides = (tuple(side.split()) for rule in rules for side in rule.replace("=>", ",").split(","))
    return tuple(words for words in sides if len(words) > 1)


@lru_cache(maxsize=1)
def code_token_pattern() -> str:
    """The pattern the code fields' tokenizer splits text at (``code_tokens``), read once."""
    return str(load_json("chunks.json")["template"]["settings"]["analysis"]["tokenizer"]["code_tokens"]["pattern"])


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
    body["template"]["mappings"]["properties"]["units"]["properties"]["embedding"]["dimension"] = settings.embedding_dim
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
