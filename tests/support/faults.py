"""Faults of a long-lived installation, forced on a real node: the disk past its flood stage (through the node's
own cluster settings), and a steady search load to run beside an ingest or a migration."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from opensearchpy import OpenSearch

from tests.support.load import percentile
from tests.support.net import wait_until

WATERMARK = "cluster.routing.allocation.disk.watermark"


def force_flood_stage(client: OpenSearch) -> None:
    """Every watermark above the node's free space (1,000 TB), the disk checked every 10 s."""
    client.cluster.put_settings(body={"transient": {
        f"{WATERMARK}.low": "1002tb", f"{WATERMARK}.high": "1001tb", f"{WATERMARK}.flood_stage": "1000tb",
        "cluster.info.update.interval": "10s"}})


def release_flood_stage(client: OpenSearch) -> None:
    """The node's own watermarks back (its opensearch.yml's)."""
    client.cluster.put_settings(body={"transient": {f"{WATERMARK}.low": None, f"{WATERMARK}.high": None,
                                                    f"{WATERMARK}.flood_stage": None}})


def write_blocked(client: OpenSearch, index: str) -> bool:
    """Whether the disk guard has made ``index`` read-only (``index.blocks.read_only_allow_delete``)."""
    found = client.indices.get_settings(index=index, name="index.blocks.read_only_allow_delete")
    return str(found.get(index, {}).get("settings", {}).get("index", {}).get("blocks", {})
               .get("read_only_allow_delete")) == "true"


def create_blocked(client: OpenSearch) -> bool:
    """Whether the engine blocks creating indexes (it does while every node is past the high watermark)."""
    found = client.cluster.get_settings(flat_settings=True)
    return any(part.get("cluster.blocks.create_index") == "true" for part in found.values())


def blocks_lifted(client: OpenSearch, index: str, timeout: float = 150) -> bool:
    """Wait for the engine to lift its blocks itself (at its next disk check with space back: up to a minute)."""
    return wait_until(lambda: not write_blocked(client, index) and not create_blocked(client), timeout, step=2)


def reset_disk_faults(client: OpenSearch) -> None:
    """Whatever a test left: the node's own watermarks, its check interval, no block."""
    release_flood_stage(client)
    wait_until(lambda: not create_blocked(client), timeout=150, step=2)
    client.cluster.put_settings(body={"transient": {"cluster.info.update.interval": None,
                                                    "cluster.routing.allocation.disk.threshold_enabled": None},
                                      "persistent": {"cluster.blocks.create_index": None}})
    client.indices.put_settings(index="_all", body={"index.blocks.read_only_allow_delete": None}, ignore=[404])


@dataclass
class SearchLoad:
    """Searches run without pause by ``threads`` threads: their latencies (ms) and failures."""

    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, float | int]:
        return {"searches": len(self.latencies), "failures": len(self.failures),
                "p50_ms": round(percentile(self.latencies, .5), 1) if self.latencies else 0.0,
                "p95_ms": round(percentile(self.latencies, .95), 1) if self.latencies else 0.0}


@contextmanager
def search_load(search: Callable[[], object], threads: int = 2) -> Iterator[SearchLoad]:
    """Run ``search`` in ``threads`` threads for as long as the block runs; every exception is a failure."""
    load, done = SearchLoad(), threading.Event()

    def loop() -> None:
        while not done.is_set():
            began = time.perf_counter()
            try:
                search()
            except Exception as exc:  # counted, never raised: the caller asserts on the count
                load.failures.append(repr(exc)[:300])
                continue
            load.latencies.append((time.perf_counter() - began) * 1000)

    workers = [threading.Thread(target=loop, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    try:
        yield load
    finally:
        done.set()
        for worker in workers:
            worker.join(60)
