"""What a running node reports about itself: version, plugins, health, heap, disk and its guard, indexes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch

from service.engine.gateway import RunningSearch, long_searches


@dataclass(frozen=True)
class IndexInfo:
    name: str
    health: str
    docs: int
    size: str


@dataclass(frozen=True)
class NodeInfo:
    name: str
    address: str
    roles: str
    heap_percent: int
    manager: bool


@dataclass(frozen=True)
class DiskState:
    """The engine's disk guard: free space per node, the watermarks, and the blocks in force."""

    guard_on: bool
    low: str
    high: str
    flood_stage: str
    free: dict[str, str]
    create_index_blocked: bool
    write_blocked_indexes: list[str]

    @property
    def summary(self) -> str:
        if not self.guard_on:
            return "disk guard off"
        state = ("writes blocked (flood stage): " + ", ".join(self.write_blocked_indexes) if self.write_blocked_indexes
                 else "creating indexes blocked (every node past the high watermark)" if self.create_index_blocked
                 else "ok")
        free = ", ".join(f"{node} {avail}" for node, avail in self.free.items())
        return f"disk free {free}; watermarks low {self.low} / high {self.high} / flood {self.flood_stage}: {state}"


@dataclass(frozen=True)
class NodeStatus:
    url: str
    version: str
    cluster_status: str
    plugins: list[str]
    heap_used_mb: int
    heap_max_mb: int
    indexes: list[IndexInfo]
    nodes: list[NodeInfo]
    disk: DiskState
    #: searches running longer than the service's bound: stuck, or another client's heavy request
    long_searches: list[RunningSearch]


def read_status(client: OpenSearch, url: str, search_bound_s: float) -> NodeStatus:
    """One round of read-only calls describing the node (raises ``IndexUnavailable`` when down); searches
    running longer than ``search_bound_s`` are listed."""
    info = client.info()
    health = client.cluster.health()
    plugins = sorted({row["component"] for row in client.cat.plugins(format="json")})
    jvm = next(iter(client.nodes.stats(metric="jvm")["nodes"].values()))["jvm"]["mem"]
    rows = client.cat.indices(format="json", expand_wildcards="open")
    members = client.cat.nodes(format="json", h="name,http_address,node.role,heap.percent,cluster_manager")
    disk = read_disk(client)
    running = long_searches(client, search_bound_s)
    indexes = sorted(
        (IndexInfo(r["index"], r["health"], int(r["docs.count"] or 0), r["store.size"] or "0b")
         for r in rows if not r["index"].startswith(".")),
        key=lambda i: i.name,
    )
    return NodeStatus(
        url=url,
        version=info["version"]["number"],
        cluster_status=health["status"],
        plugins=plugins,
        heap_used_mb=jvm["heap_used_in_bytes"] // 2**20,
        nodes=sorted((NodeInfo(n["name"], n["http_address"], n["node.role"], int(n["heap.percent"] or 0),
                               n["cluster_manager"] == "*") for n in members), key=lambda n: n.name),
        heap_max_mb=jvm["heap_max_in_bytes"] // 2**20,
        indexes=indexes,
        disk=disk,
        long_searches=running,
    )


def cluster_settings(client: OpenSearch) -> dict[str, Any]:
    """The cluster settings in force, flat: transient over persistent over the nodes' own and the defaults."""
    flat = client.cluster.get_settings(include_defaults=True, flat_settings=True)
    return {**flat.get("defaults", {}), **flat.get("persistent", {}), **flat.get("transient", {})}


def read_disk(client: OpenSearch) -> DiskState:
    """Free space per node, the disk watermarks in effect and the blocks the guard has set."""
    merged = cluster_settings(client)
    mark = "cluster.routing.allocation.disk.watermark"
    return DiskState(
        guard_on=str(merged.get("cluster.routing.allocation.disk.threshold_enabled", "true")) == "true",
        low=str(merged.get(f"{mark}.low")), high=str(merged.get(f"{mark}.high")),
        flood_stage=str(merged.get(f"{mark}.flood_stage")),
        free={row["node"]: row["disk.avail"] for row in client.cat.allocation(format="json", h="node,disk.avail")
              if row.get("node") and row["node"] != "UNASSIGNED"},
        create_index_blocked=str(merged.get("cluster.blocks.create_index")) == "true",
        write_blocked_indexes=[name for name in write_blocked(client, "*") if not name.startswith(".")])


def write_blocked(client: OpenSearch, indexes: str) -> list[str]:
    """Those of ``indexes`` (names, comma-separated, or a pattern) the disk guard has made read-only
    (``index.blocks.read_only_allow_delete``); indexes that do not exist are left out."""
    found = client.indices.get_settings(index=indexes, name="index.blocks.read_only_allow_delete",
                                        expand_wildcards="open", ignore_unavailable=True)
    return sorted(name for name, value in found.items()
                  if value["settings"]["index"]["blocks"]["read_only_allow_delete"] == "true")
