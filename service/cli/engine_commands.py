"""``stroidok engine …``: the managed local OpenSearch node (install, up, down, status, logs)."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer
from rich.table import Table

from service.cli.app import engine_app, out, state
from service.engine.gateway import build_client
from service.engine.launcher.process import EngineCluster, EngineProcess, log_tail
from service.engine.launcher.status import read_status


@engine_app.command("install")
def engine_install() -> None:
    """Find Java 21+, download and assemble OpenSearch with k-NN and neural-search (cached)."""
    jdk, install_dir = EngineProcess(state.settings.engine).install()
    out.print(f"OpenSearch {state.settings.engine.version} ready in {install_dir} (Java {jdk.major} at {jdk.home})")


@engine_app.command("up")
def engine_up(nodes: int = typer.Option(None, "--nodes", min=1, max=9, help="A local cluster of this many nodes "
                                        "on consecutive ports (replicas on other nodes: it survives losing one).")
              ) -> None:
    """Start the node (or the cluster) on loopback (idempotent) and wait until it serves every shard."""
    engine = state.settings.engine
    count = nodes or engine.nodes
    if count > 1:
        results = EngineCluster(engine.model_copy(update={"nodes": count})).up()
        for result in results:
            verb = "started" if result.started else "already running"
            out.print(f"OpenSearch node {verb} at {result.url} (pid {result.pid})")
        out.print(f"cluster of {count} nodes green after {results[0].seconds:.1f}s; clients use every node "
                  f"(OPENSEARCH_URL={','.join(r.url for r in results)})")
        return
    result = EngineProcess(engine).up()
    verb = "started" if result.started else "already running"
    out.print(f"OpenSearch {verb} at {result.url} (pid {result.pid}), {result.status} after {result.seconds:.1f}s")


@engine_app.command("down")
def engine_down() -> None:
    """Stop the node or cluster this tool started (never another one)."""
    engine = state.settings.engine
    cluster = EngineCluster.recorded(engine)
    pids = cluster.down() if cluster else []
    if (pid := EngineProcess(engine).down()) is not None:
        pids.append(pid)
    if not pids:
        out.print("no managed OpenSearch node was running")
        return
    out.print(f"OpenSearch (pid{'s' if len(pids) > 1 else ''} {', '.join(map(str, pids))}) stopped")


@engine_app.command("status")
def engine_status(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Version, plugins, health, heap, indexes and doc counts of the configured node."""
    settings = state.settings
    status = read_status(build_client(settings), settings.opensearch_url, settings.search.timeout_s)
    if as_json:
        out.print_json(json.dumps({**asdict(status), "disk": {**asdict(status.disk), "summary": status.disk.summary}}))
        return
    out.print(f"[bold]{status.url}[/] OpenSearch {status.version}, cluster {status.cluster_status}, "
              f"heap {status.heap_used_mb}/{status.heap_max_mb} MB")
    nodes = Table("node", "address", "roles", "heap", "manager")
    for node in status.nodes:
        nodes.add_row(node.name, node.address, node.roles, f"{node.heap_percent}%", "*" if node.manager else "")
    out.print(nodes)
    out.print("plugins: " + ", ".join(status.plugins))
    out.print(status.disk.summary)
    out.print(f"searches running longer than {settings.search.timeout_s:g} s: {len(status.long_searches) or 'none'}")
    if status.long_searches:
        running = Table("task", "running", "opaque id", "cancellable", "request")
        for search in status.long_searches:
            running.add_row(search.task, f"{search.running_s:.0f} s", search.opaque_id or "", str(search.cancellable),
                            search.description[:120])
        out.print(running)
    table = Table("index", "health", "docs", "size")
    for index in status.indexes:
        table.add_row(index.name, index.health, str(index.docs), index.size)
    out.print(table)


@engine_app.command("logs")
def engine_logs(lines: int = typer.Option(50, "--lines", "-n", min=1, max=10000)) -> None:
    """The last lines of the managed node's console log."""
    for line in log_tail(EngineProcess(state.settings.engine).paths, lines):
        out.print(line, markup=False, highlight=False)
