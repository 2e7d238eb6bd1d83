"""What a running node reports about itself: version, plugins, health, heap, indexes."""

from __future__ import annotations

from dataclasses import dataclass

from opensearchpy import OpenSearch

from service.opensearch import engine_errors


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
class NodeStatus:
    url: str
    version: str
    cluster_status: str
    plugins: list[str]
    heap_used_mb: int
    heap_max_mb: int
    indexes: list[IndexInfo]
    nodes: list[NodeInfo]


def read_status(client: OpenSearch, url: str) -> NodeStatus:
    """One round of read-only calls describing the node (raises ``IndexUnavailable`` when down)."""
    with engine_errors():
        info = client.info()
        health = client.cluster.health()
        plugins = sorted({row["component"] for row in client.cat.plugins(format="json")})
        jvm = next(iter(client.nodes.stats(metric="jvm")["nodes"].values()))["jvm"]["mem"]
        rows = client.cat.indices(format="json", expand_wildcards="open")
        members = client.cat.nodes(format="json", h="name,http_address,node.role,heap.percent,cluster_manager")
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
    )
