"""The search: fields, budgets, time bounds, cache, rate limits, query log (``STROIDOK_SEARCH_*``)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

#: BM25 fields with boosts (multi_match), measured in docs/relevance.md; the query builder's default too
DEFAULT_TEXT_FIELDS = ("text", "title", "section_title^0.5", "text.codes^0.3", "title.codes^0.3", "designation.codes")


class SearchSettings(BaseSettings):
    """Query-time behaviour of the search service."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_SEARCH_", extra="ignore", populate_by_name=True)

    knn_k: int = Field(default=100, ge=1, le=1000, description="Candidates from the dense leg.")
    knn_units_expand: bool = Field(default=False, description="Every unit of the chunks the dense leg found is "
                                   "scored for the passage, not only those its graph search reached "
                                   "(costs engine CPU).")
    first_document_chunks: int = Field(
        default=30, ge=0, le=300, description="How many of the first document's chunks that hold a query term "
        "(its best by the text leg) a search reads whole to choose that document's passages among, as a call "
        "inside it does (one further engine request); 0: the first document's passages come from its best "
        "chunks as every other document's (docs/relevance.md).")
    extra_candidates: int | None = Field(
        default=None, ge=0, le=10, description="Further chunks of each document the engine returns beyond "
        "max_chunks, whose passages compete to be shown; unset: 1 where the index keeps navec unit vectors "
        "(their nearest units name the passage), 5 where it keeps none or a model's (docs/relevance.md).")
    knn_units: Literal["off", "max", "units"] = Field(
        default="max", description="The dense leg on an index with unit vectors: a chunk scored by its own vector "
        "or its best unit's, whichever is nearer (max), by its best unit alone (units), or by its own vector "
        "alone (off); with units, the engine names each chunk's nearest units, which the passage is chosen by.")
    text_fields: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TEXT_FIELDS),
        description="BM25 fields with boosts (multi_match); tuned in docs/relevance.md.")
    text_match_type: Literal["best_fields", "most_fields", "cross_fields"] = Field(
        default="most_fields", description="How the text leg's multi_match adds up its fields (docs/relevance.md).")
    fusion: Literal["normalization", "rrf"] = Field(
        default="normalization", description="Hybrid pipeline: score normalization (measured best) or RRF.")
    auto_minimum_should_match: str = Field(
        default="1", description="Operator AUTO: how many query words a chunk must contain (OpenSearch "
        "minimum_should_match; measured in docs/relevance.md).")
    pagination_depth: int = Field(default=1000, ge=10, le=10000, description="Candidates per leg and shard.")
    text_candidates: int = Field(
        default=300, ge=0, le=5000, description="A hybrid search first takes the text leg's best chunks by "
        "Lucene's own top-k pruning (one cheap request), then fuses the legs with the text leg restricted to them, "
        "so its cost follows the answer, not the archive; totals and facets are then counted over the candidates "
        "(total_relation gte). 0: the text leg scores every matching chunk, totals exact (docs/scale.md).")
    text_candidates_from: int = Field(
        default=100_000, ge=0, description="The chunks a caller may read from which a hybrid search takes the "
        "text leg's candidates; below it every match is scored, as cheaply (at 31,996 chunks: 0.96x the engine's "
        "CPU a call with them), and totals and facets stay exact.")
    timeout_s: float = Field(default=10.0, gt=0, le=300, description="The most a search may run inside the engine: "
                             "past it the engine's task is cancelled and the call answers ENGINE_TIMEOUT.")
    cache_ttl_s: float = Field(default=300.0, ge=0, description="0 disables the query cache.")
    cache_size: int = Field(default=1024, ge=1, description="Responses kept by the in-process cache.")
    redis_url: str | None = Field(
        default=None, validation_alias=AliasChoices("STROIDOK_REDIS_URL", "STROIDOK_SEARCH_REDIS_URL"),
        description="redis://host:port/db: the query cache and the rate limits live there, shared by every "
        "server process; unset, each process keeps its own.")
    rate_limit: str = Field(default="120/minute", description="Per client, `limits` notation.")
    refused_rate_limit: str = Field(default="30/minute", description="Calls refused before the service (a wrong "
                                    "token, unknown or malformed arguments) per address or caller; past it they "
                                    "get RATE_LIMIT and are not logged.")
    log_queue_bytes: int = Field(default=64 * 1024 * 1024, ge=1024 * 1024, description="Query-log entries waiting "
                                 "to be written are kept up to this size; past it new ones are dropped (counted).")
    response_budget_chars: int = Field(default=24000, ge=2000, description="A response never exceeds this "
                                       "size: results past it are left to the next page (truncated, with a cursor).")
    answer_chars: int = Field(default=11000, ge=1000, description="Further chunks of a document (past its best "
                              "one, up to max_chunks) are shown, best first across the answer, while the answer "
                              "stays within this size (docs/tools.md).")
    passage_chars: int = Field(default=600, ge=100, le=5000, validation_alias=AliasChoices(
        "STROIDOK_SEARCH_PASSAGE_CHARS", "STROIDOK_SEARCH_CHUNK_CHARS"), description="The longest passage shown "
        "per chunk: the clause that answers when it fits, cut at clause or sentence boundaries.")
    few_results: int = Field(default=3, ge=0, description="Below this many results, suggest related queries.")
    feedback_window_s: float = Field(default=1800.0, gt=0, description="An opening links to a search this recent.")
    log_queries: bool = Field(default=True, description="Every call is written to the query log "
                              "(<alias>-queries), which `stroidok stats` reads.")
    log_retention_days: int = Field(default=90, ge=1, description="Query-log entries older than this are deleted.")
