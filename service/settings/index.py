"""The chunk index: its alias, template, analyzers, vector dimension and fusion (``STROIDOK_INDEX_*``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class IndexSettings(BaseSettings):
    """The chunk index, its template and the hybrid search pipelines."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_INDEX_", extra="ignore", env_parse_none_str="none")

    alias: str = Field(default="stroidok-chunks", pattern=r"^[a-z0-9][a-z0-9_\-]{0,100}$", description="The "
                       "chunk index's alias; its side indexes (-files, -meta, -queries) and pipelines are named "
                       "after it.")
    create_block_wait_s: float = Field(
        default=90.0, ge=0, le=3600,
        description="How long creating an index waits while the engine's disk guard blocks it (after a full disk the "
                    "engine lifts the block at its next disk check, within about a minute), then DISK_FULL.")
    embedding_dim: int = Field(default=300, ge=2, le=16000, description="The chunk index's vector dimension; "
                               "follows the embedder (navec 300, e5 384), set it only for an http embedder.")
    shards: int = Field(default=2, ge=1, le=1024, description=(
        "Primary shards of the chunk index. 2 even on one node: a one-shard hybrid search fetches every "
        "candidate of both legs (query and fetch in one phase), with two only the page is fetched; "
        "3.3x throughput on the construction corpus (docs/scale.md)."))
    split_at_chunks: int = Field(default=10_000, ge=0, description=(
        "A new chunk index starts on one primary shard and is split to `shards` by the ingest (or `index "
        "optimize`) that finds it holding this many chunks: BM25 statistics are per shard, and on a small "
        "archive two shards rank by where each document happened to land (docs/relevance.md); 0: start with "
        "`shards`."))
    replicas: int | None = Field(default=None, ge=0, description=(
        "Replicas of every index; unset: auto_expand_replicas 0-1, so one node holds one copy and a cluster "
        "keeps a second copy of every shard on another node (it survives losing a node)."))
    bm25_weight: float = Field(default=0.9, ge=0, le=1, description=(
        "Share of BM25 in hybrid fusion; unset, it follows the embedder (navec 0.9: construction set +1.4 "
        "nDCG@10 points over 0.8; e5 0.3 with the floors below), measured in docs/relevance.md."))
    merge_segments: int = Field(default=1, ge=1, le=100, description="Segments per shard after `index optimize` "
                                "(and after an ingest that wrote a large part of the index).")
    optimize_share: float = Field(default=0.5, ge=0, le=1, description="An ingest run that wrote at least this "
                                  "share of the index's chunks merges it afterwards (0: always, 1: never); smaller "
                                  "runs leave merging to the engine (a full merge rewrites every vector graph).")
    rrf_rank_constant: int = Field(default=60, ge=1, description="The RRF pipeline's rank constant "
                                   "(STROIDOK_SEARCH_FUSION=rrf).")
    normalization: Literal["min_max", "l2", "z_score"] = Field(default="min_max", description="How the hybrid "
                                                               "pipeline scales each leg's scores.")
    combination: Literal["arithmetic_mean", "geometric_mean", "harmonic_mean"] = Field(
        default="arithmetic_mean", description="How the hybrid pipeline combines the scaled legs (weighted by "
        "bm25_weight).")
    bm25_lower_bound: float | None = Field(default=None, ge=0, le=10_000, description=(
        "min_max only: BM25 scores are scaled from this floor to the query's top score instead of from the "
        "lowest retrieved one (0: score / top score, so a weak BM25 list stays weak); none: plain min-max. "
        "Unset, it follows the embedder (e5 0, navec none)."))
    dense_lower_bound: float | None = Field(default=None, ge=0, le=1, description=(
        "min_max only: k-NN scores ((1 + cosine) / 2) are scaled from this floor to the top score, so a "
        "dense list whose best hit is barely better than its worst no longer counts as a confident 0-to-1 "
        "spread (e5 0.875, i.e. cosine 0.75, below nearly every e5 query-passage pair); none: plain min-max."))

    @property
    def dense_weight(self) -> float:
        return round(1.0 - self.bm25_weight, 6)

    @property
    def template_name(self) -> str:
        return f"{self.alias}-template"

    @property
    def first_index(self) -> str:
        return f"{self.alias}-000001"

    @property
    def hybrid_pipeline(self) -> str:
        return f"{self.alias}-hybrid"

    @property
    def rrf_pipeline(self) -> str:
        return f"{self.alias}-rrf"

    @property
    def single_pipeline(self) -> str:
        return f"{self.alias}-single"

    @property
    def queries_index(self) -> str:
        """The query log, for inspection in OpenSearch Dashboards."""
        return f"{self.alias}-queries"

    @property
    def meta_index(self) -> str:
        """Small side index: embedder identity and statistics, one document per concern."""
        return f"{self.alias}-meta"

    @property
    def files_index(self) -> str:
        """The ingest registry: one document per source file (hash, chunk count, outcome)."""
        return f"{self.alias}-files"
