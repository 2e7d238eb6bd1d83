"""A default call's cost as agents pay it: a long-lived MCP server over stdio, the query cache off, natural
questions in the user's words, one default ``search_documents`` call each. Per call: the engine's CPU and its
shard query and fetch phases (node stats before and after), wall time, and the server process's own CPU.
With ``--previous`` the same is measured for another tree's server (a ``git worktree`` of an earlier release) on
the same index (or on the one its own template built, ``--previous-alias``), the two alternating round by round,
and the ratios printed side by side. With ``--inside`` each call is the second an agent makes: the question inside
the first document a default call answered it with (``path`` naming that file, ``max_chunks`` 10).

    git worktree add ../prev <commit>
    .venv/bin/python -m benchmarks.call_pace --alias norms --previous ../prev --rounds 3 \
        --questions ../shared/data/construction_ru/dev_clause_set/clauses.jsonl \
        --questions evaluation/sets/construction/clauses.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from evaluation.evaluate import load_questions as read_questions
from service.engine.gateway import build_client
from service.settings import Settings
from tests.support.load import percentile

REPO = Path(__file__).resolve().parents[1]


def node_counters(client: Any) -> dict[str, float]:
    """The engine's CPU ms and shard query / fetch phases so far, summed over the nodes."""
    nodes = client.nodes.stats(metric="process,indices", params={"filter_path": "nodes.*.process.cpu,"
                                                                 "nodes.*.indices.search"})["nodes"].values()
    return {"cpu_ms": sum(float(n["process"]["cpu"]["total_in_millis"]) for n in nodes),
            "query": sum(float(n["indices"]["search"]["query_total"]) for n in nodes),
            "fetch": sum(float(n["indices"]["search"]["fetch_total"]) for n in nodes)}


def process_cpu_ms(pid: int) -> float:
    """A process's user + system CPU so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def load_questions(paths: list[Path]) -> list[str]:
    """The questions in the user's words of each set (the dev set's ``query``, ours' ``text``)."""
    return [question for path in paths for question in read_questions(path).values()]


@dataclass
class Server:
    """One tree's long-lived stdio server: its session and process id."""

    session: ClientSession
    pid: int


async def open_server(stack: AsyncExitStack, tree: Path, alias: str) -> Server:
    """``tree``'s ``stroidok serve`` over stdio, kept for the whole benchmark, the query cache off."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("STROIDOK_SEARCH_")},
           "STROIDOK_INDEX_ALIAS": alias, "STROIDOK_SEARCH_CACHE_TTL_S": "0",
           "STROIDOK_SEARCH_RATE_LIMIT": "100000000/minute", "DO_NOT_TRACK": "1", "PYTHONPATH": str(tree)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "service.cli", "serve"], env=env, cwd=str(tree))
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return Server(session, server_pid(tree))


async def one_pass(server: Server, calls: list[dict[str, Any]], client: Any) -> dict[str, float]:
    """Every call once through ``server``: the per-call figures of the pass."""
    before, server_before, walls, sizes = node_counters(client), process_cpu_ms(server.pid), [], []
    for arguments in calls:
        began = time.perf_counter()
        result = await server.session.call_tool("search_documents", arguments)
        walls.append((time.perf_counter() - began) * 1000)
        if result.is_error:
            raise RuntimeError(str(result.content[0]))
        sizes.append(float(sum(len(getattr(part, "text", "")) for part in result.content)))
    after, n = node_counters(client), len(calls)
    return {"engine_cpu_ms": (after["cpu_ms"] - before["cpu_ms"]) / n,
            "query_phases": (after["query"] - before["query"]) / n,
            "fetch_phases": (after["fetch"] - before["fetch"]) / n,
            "server_cpu_ms": (process_cpu_ms(server.pid) - server_before) / n,
            "wall_p50_ms": percentile(walls, 0.5), "wall_p95_ms": percentile(walls, 0.95),
            "answer_chars_p50": percentile(sizes, 0.5)}


async def inside_calls(server: Server, questions: list[str]) -> list[dict[str, Any]]:
    """Each question asked inside the first document a default call through ``server`` answers it with."""
    calls = []
    for question in questions:
        result = await server.session.call_tool("search_documents", {"query": question})
        results = (result.structured_content or {}).get("results") or []
        if results:
            calls.append({"query": question, "path": [results[0]["file_path"]], "max_chunks": 10})
    return calls


def server_pid(tree: Path) -> int:
    """The newest ``service.cli serve`` child of this process started in ``tree``."""
    mine = str(os.getpid())
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if stat[1] == mine and b"serve" in cmd and Path(os.readlink(proc / "cwd")) == tree.resolve():
            found.append(int(proc.name))
    return max(found)


def summary(passes: list[dict[str, float]]) -> dict[str, float]:
    """The median pass of each figure."""
    return {key: sorted(p[key] for p in passes)[len(passes) // 2] for key in passes[0]}


async def main_async(args: argparse.Namespace) -> None:
    client = build_client(Settings())
    questions = load_questions(args.questions)
    trees = {"this": REPO, **({"previous": Path(args.previous).resolve()} if args.previous else {})}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    async with AsyncExitStack() as stack:
        aliases = {"this": args.alias, "previous": args.previous_alias or args.alias}
        servers = {name: await open_server(stack, tree, aliases[name]) for name, tree in trees.items()}
        calls = (await inside_calls(servers["this"], questions) if args.inside
                 else [{"query": question} for question in questions])
        for server in servers.values():  # a first pass warms each server and the engine alike, not counted
            await one_pass(server, calls, client)
        for round_ in range(args.rounds):
            for name in (list(servers) if round_ % 2 == 0 else list(servers)[::-1]):
                results[name].append(await one_pass(servers[name], calls, client))
    index = args.alias + (f" (previous: {args.previous_alias})" if args.previous_alias else "")
    kind = "calls inside the first document" if args.inside else "questions"
    print(f"{len(calls)} {kind}, {args.rounds} rounds after a warm-up pass, index {index}, cache off, "
          "one long-lived stdio server per tree (the trees alternate pass by pass)")
    medians = {name: summary(passes) for name, passes in results.items()}
    keys = list(next(iter(medians.values())))
    ratio = "   this/previous" if args.previous else ""
    print("figure".ljust(16) + "".join(name.rjust(12) for name in medians) + ratio)
    for key in keys:
        row = key.ljust(16) + "".join(f"{medians[name][key]:12.1f}" for name in medians)
        if args.previous:
            row += f"   {medians['this'][key] / max(medians['previous'][key], 1e-9):.2f}"
        print(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--questions", type=Path, action="append", required=True)
    parser.add_argument("--previous", help="another tree (git worktree) whose server is measured alongside")
    parser.add_argument("--previous-alias", help="the previous tree's own index (one its template built; default: "
                        "--alias)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--inside", action="store_true", help="each call inside the first document a default "
                        "call answers with (the second call an agent makes)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
