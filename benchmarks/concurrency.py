"""Many agents at once: the MCP server over HTTP beside raw OpenSearch, same questions, one run.

For each number of clients, N MCP sessions (the SDK's real client, streamable HTTP, one session each) call
``search_documents`` with the tool's defaults against ``stroidok serve --http`` started as a user starts it;
before and after them, N threads send the very request bodies the service builds for the same questions
straight to OpenSearch (both raw runs together set the bound, so a drift of the machine's speed falls on both
paths; each is also checked against the other's bound, which shows how much of the 200 ms margin is noise).
Both print p50/p95/p99 and throughput; the verdict line checks the bar at the highest level: no errors,
and MCP p95 ≤ clients / raw throughput + 200 ms. A sequential stdio run, each call
beside the same question's raw request (interleaved), checks the layer's own overhead: MCP stdio p95 ≤ 1.15 ×
(query embedding + raw engine) p95.

The query cache is off (``STROIDOK_SEARCH_CACHE_TTL_S=0``; otherwise repeated questions would be answered
from it and the comparison would flatter the server) and the rate limit is lifted; everything else is the
product's default, the query log included.

    .venv/bin/python -m benchmarks.concurrency --alias eval-cf2                  # an index kept by `stroidok eval`
    .venv/bin/python -m benchmarks.concurrency --alias eval-cf2 --clients 1 10 50 100 --workers 2
    .venv/bin/python -m benchmarks.concurrency --alias eval-cf2 --inflight 8 40      # two gate sizes side by side
    .venv/bin/python -m benchmarks.concurrency --alias eval-cf2 --engine-cpus 0      # the engine on a core of its own
    # raw at the gate's depth; the server without search
    .venv/bin/python -m benchmarks.concurrency --alias eval-cf2 --clients 100 --raw-threads 8
    .venv/bin/python -m benchmarks.concurrency --alias eval-cf2 --clients 100 --standin-ms 40
    npm ci --prefix clients/node && .venv/bin/python -m benchmarks.concurrency --alias eval-cf2 \
        --http-clients node python          # the HTTP levels through Claude Code's SDK client too, side by side
    npm ci --prefix clients/node && .venv/bin/python -m benchmarks.concurrency --alias eval-cf2 --clients 1 \
        --requests 60 --stdio-clients node python                                 # stdio: Claude Code's SDK client too

Besides latency, it prints the CPU each call costs the engine, the server and the clients (over the timed
calls), and the server's own time per call (``meta.timings.total_ms``) beside what the client saw.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from opensearchpy import OpenSearch
from pydantic import BaseModel

from evaluation.evaluate import eval_settings
from service.caller.principal import Principal, stdio_principal
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search.service import SearchService
from service.settings import ServerSettings, Settings
from tests.support.documents import REPO
from tests.support.load import Run, control_line, percentile
from tests.support.servers import UNCACHED_UNLIMITED, http_server, server_env


@contextmanager
def pinned(settings: Settings, engine_cpus: set[int]) -> Iterator[None]:
    """The local engine's threads on ``engine_cpus``, this process (and the servers it starts) on the rest."""
    nodes = build_client(settings).nodes.info(metric="process")["nodes"].values()
    pids = [str(n["process"]["id"]) for n in nodes]
    everything, own = os.sched_getaffinity(0), sorted(os.sched_getaffinity(0) - engine_cpus)
    if not own:
        raise SystemExit(f"--engine-cpus {sorted(engine_cpus)} leaves no CPU for the benchmark")

    def engine_on(cpus: set[int]) -> None:
        for pid in pids:
            subprocess.run(["taskset", "-a", "-p", "-c", ",".join(map(str, sorted(cpus))), pid],
                           check=True, stdout=subprocess.DEVNULL)

    engine_on(engine_cpus)
    os.sched_setaffinity(0, own)
    try:
        yield
    finally:
        engine_on(everything)
        os.sched_setaffinity(0, everything)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a process and its descendants so far (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        children = [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
                    for c in (t / "children").read_text().split()]
    except (OSError, ValueError, IndexError):
        return float("nan")
    return own + sum(tree_cpu_s(child) for child in children)


def engine_cpu_s(settings: Settings) -> float:
    """CPU seconds the engine's nodes have used so far (their own count, wherever they run)."""
    stats = build_client(settings).nodes.stats(metric="process")["nodes"].values()
    return sum(float(n["process"]["cpu"]["total_in_millis"]) for n in stats) / 1000


@dataclass
class CpuMeter:
    """CPU per call of the engine, the server and this process (the MCP clients) over one level."""

    settings: Settings
    server_pid: int
    start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    used: tuple[float, ...] = ()

    def now(self) -> tuple[float, float, float]:
        return engine_cpu_s(self.settings), tree_cpu_s(self.server_pid), sum(os.times()[:2])

    def begin(self) -> None:
        self.start = self.now()

    def end(self) -> None:
        self.used = tuple(b - a for a, b in zip(self.start, self.now(), strict=True))

    def __enter__(self) -> CpuMeter:
        self.begin()
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()

    def per_call_ms(self, calls: int) -> tuple[float, ...]:
        return tuple(round(u / calls * 1000, 1) for u in self.used)

    @classmethod
    def merged(cls, *meters: CpuMeter) -> CpuMeter:
        """The CPU of several levels together (per_call_ms then takes all their calls)."""
        return cls(meters[0].settings, meters[0].server_pid,
                   used=tuple(sum(parts) for parts in zip(*(m.used for m in meters), strict=True)))


async def mcp_level(url: str, questions: list[str], clients: int, requests: int,
                    meter: CpuMeter | None = None, extra: dict[str, Any] | None = None) -> Run:
    """``clients`` sessions, each connected, holding the tool list and past its first call (what an agent does
    once when it starts: the SDK client fetches the tools, then compiles the output schema's validator on its
    first call), then all calling at once until ``requests`` calls are done in all; the clock runs from the
    first timed call. ``extra``: arguments every call adds to its query (operator, mode); a failed call's
    error text goes to stderr."""
    run = Run()
    extra = extra or {}
    counter = iter(range(requests))
    ready, go = asyncio.Semaphore(0), asyncio.Event()

    async def agent() -> None:
        try:
            await session()
        except Exception as exc:  # a session that broke (connect, teardown) is an error too
            run.errors += 1
            print(f"session error: {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            ready.release()  # never leave the start waiting for a session that failed to open

    async def session() -> None:
        async with Client(url, read_timeout_seconds=300) as client:
            await client.list_tools()
            # the SDK compiles a tool's output-schema validator on the session's first call (~0.1 s of the
            # agent's own CPU, once per session): a remote agent pays it on its machine, not on the server's
            await client.call_tool("search_documents", {"query": questions[0], **extra})
            ready.release()
            await go.wait()
            for i in counter:
                began = time.perf_counter()
                try:
                    result = await client.call_tool("search_documents", {"query": questions[i % len(questions)],
                                                                         **extra})
                    failed = result.is_error
                    if failed:
                        print(f"call error: {str(result.content[0])[:300]}", file=sys.stderr)
                    elif result.structured_content:
                        run.inside.append(result.structured_content["meta"]["timings"]["total_ms"])
                except Exception as exc:
                    failed = True
                    print(f"call error: {type(exc).__name__}: {exc}", file=sys.stderr)
                if failed:
                    run.errors += 1
                else:
                    run.latencies.append((time.perf_counter() - began) * 1000)

    async def start() -> float:
        for _ in range(clients):
            await ready.acquire()
        if meter:
            meter.begin()
        go.set()
        return time.perf_counter()

    tasks = [asyncio.create_task(agent()) for _ in range(clients)]
    began = await start()
    await asyncio.gather(*tasks)
    run.wall_s = time.perf_counter() - began
    if meter:
        meter.end()
    return run


#: one call's engine requests, in order: each body with its search pipeline (None: none)
Requests = list[tuple[dict[str, Any], str | None]]


def call_requests(service: SearchService, arguments: dict[str, Any], principal: Principal) -> Requests:
    """The requests a call makes, as the service sends them (recorded from one call): the text leg's candidates,
    the search, its first document's chunks and the other documents' chunks, each with its pipeline."""
    sent: Requests = []
    send = service.reads.send

    def recorded(body: dict[str, Any], route: str | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        sent.append((body, service.reads.pipeline(route) if route else None))
        return send(body, route, timeout_s)

    service.reads.send = recorded  # type: ignore[method-assign]
    try:
        service.search(arguments, principal)
    finally:
        service.reads.send = send  # type: ignore[method-assign]
    return sent


def send_call(client: OpenSearch, index: str, requests: Requests) -> None:
    """A call's requests sent straight to OpenSearch, one after the other, as the service sends them."""
    for body, pipeline in requests:
        client.search(index=index, body=body, params={"search_pipeline": pipeline} if pipeline else {})


def raw_level(settings: Settings, bodies: list[Requests], clients: int, requests: int) -> Run:
    """The service's own request bodies sent straight to OpenSearch from ``clients`` threads."""
    run = Run()
    client = build_client(settings)

    def one(i: int) -> None:
        began = time.perf_counter()
        try:
            send_call(client, settings.index.alias, bodies[i % len(bodies)])
            run.latencies.append((time.perf_counter() - began) * 1000)
        except Exception:
            run.errors += 1

    began = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(requests)))
    run.wall_s = time.perf_counter() - began
    return run


#: One MCP call of a sequential probe: the question → (wall ms, the server's ``meta.timings``, failed).
McpCall = Callable[[str], Awaitable[tuple[float, dict[str, float], bool]]]


async def interleaved(call: McpCall, questions: list[str], settings: Settings,
                      bodies: list[Requests]) -> tuple[Run, Run, list[float]]:
    """Each question through MCP (``call``) and, beside it, its raw engine request, in turn first and second:
    a noisy moment of the machine falls on both paths, and neither always warms the other."""
    run, raw, embed = Run(), Run(), []
    engine = build_client(settings)
    began_all = time.perf_counter()
    for i, (question, requests) in enumerate(zip(questions, bodies, strict=True)):
        for path in ("mcp", "raw") if i % 2 == 0 else ("raw", "mcp"):
            if path == "mcp":
                ms, timings, failed = await call(question)
                run.latencies.append(ms)
                embed.append(timings.get("embedding_ms", 0.0))
                run.inside.append(timings.get("total_ms", ms))
                run.searched.append(timings.get("search_ms", ms))
                run.errors += failed
            else:
                began = time.perf_counter()
                send_call(engine, settings.index.alias, requests)
                raw.latencies.append((time.perf_counter() - began) * 1000)
    run.wall_s = time.perf_counter() - began_all
    return run, raw, embed


SERVER_ARGS = ["-m", "service.cli", "serve"]


async def stdio_sequential(env: dict[str, str], questions: list[str], settings: Settings,
                           bodies: list[Requests]) -> tuple[Run, Run, list[float]]:
    """Sequential calls over stdio (as Claude Code runs the server) through the Python SDK's client,
    interleaved with the raw requests."""
    params = StdioServerParameters(command=sys.executable, args=SERVER_ARGS, env=env, cwd=str(REPO))
    async with Client(params, read_timeout_seconds=300) as client:
        await client.call_tool("search_documents", {"query": "прогрев"})

        async def call(question: str) -> tuple[float, dict[str, float], bool]:
            began = time.perf_counter()
            result = await client.call_tool("search_documents", {"query": question})
            timings = (result.structured_content or {}).get("meta", {}).get("timings", {})
            return (time.perf_counter() - began) * 1000, timings, bool(result.is_error)

        return await interleaved(call, questions, settings, bodies)


NODE_CLIENT = REPO / "clients/node/stdio_client.mjs"
NODE_HTTP_LOAD = REPO / "clients/node/http_load.mjs"


def require_node_client() -> None:
    if not (NODE_CLIENT.parent / "node_modules").is_dir():
        raise SystemExit("the node MCP client needs: npm ci --prefix clients/node")


def node_http_level(url: str, questions: list[str], clients: int, requests: int,
                    meter: CpuMeter | None = None) -> Run:
    """``mcp_level`` with the TypeScript SDK's client (the one Claude Code is built on): ``clients`` sessions in
    one node process, warmed the same way; the clients' CPU is that process's over the timed calls."""
    require_node_client()
    command = ["node", str(NODE_HTTP_LOAD), url, str(clients), str(requests)]
    with subprocess.Popen(command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                          encoding="utf-8") as node:
        assert node.stdin is not None and node.stdout is not None
        node.stdin.write(json.dumps(questions, ensure_ascii=False) + "\n")
        node.stdin.flush()
        if not node.stdout.readline():  # {"ready": true}
            raise SystemExit("the node MCP clients did not connect (its error is above)")
        if meter:
            meter.begin()
        node.stdin.write("go\n")
        node.stdin.flush()
        data = json.loads(node.stdout.readline())
        if meter:
            meter.end()
            meter.used = (*meter.used[:2], data["cpu_s"])
        node.stdin.close()
    return Run(latencies=data["latencies"], errors=data["errors"], wall_s=data["wall_s"], inside=data["inside"])


async def node_stdio_sequential(env: dict[str, str], questions: list[str], settings: Settings,
                                bodies: list[Requests]) -> tuple[Run, Run, list[float]]:
    """``stdio_sequential`` with the MCP TypeScript SDK's client (the one Claude Code is built on) driving the
    same server command: ``npm ci --prefix clients/node`` first."""
    require_node_client()
    command = ["node", str(NODE_CLIENT), sys.executable, *SERVER_ARGS]
    with subprocess.Popen(command, env=env, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                          encoding="utf-8") as node:
        assert node.stdin is not None and node.stdout is not None
        stdin, stdout = node.stdin, node.stdout
        json.loads(stdout.readline())  # {"ready": true}: tools listed, one warm-up call made

        async def call(question: str) -> tuple[float, dict[str, float], bool]:
            stdin.write(json.dumps({"query": question}, ensure_ascii=False) + "\n")
            stdin.flush()
            reply = json.loads(stdout.readline())  # the node client times the call itself
            return reply["ms"], reply["timings"] or {}, bool(reply["error"])

        try:
            return await interleaved(call, questions, settings, bodies)
        finally:
            stdin.close()


def standin_lines(env: dict[str, str], answer: BaseModel, wait_ms: float, questions: list[str], clients: int,
                  requests: int, http_clients: list[str], settings: Settings) -> Iterator[str]:
    """The top level against the product's server with a stand-in service (benchmarks.standin_server): the
    server's CPU per call when the tool does no search, beside which the real server's shows the search's."""
    with tempfile.TemporaryDirectory() as tmp:
        stored, text = Path(tmp) / "answer.json", answer.model_dump_json()
        stored.write_text(text, encoding="utf-8")
        with http_server(env, standin=["--answer", str(stored), "--wait-ms", str(wait_ms)]) as (url, pid):
            for http_client in http_clients:
                meter = CpuMeter(settings, pid)
                run = (asyncio.run(mcp_level(url, questions, clients, requests, meter)) if http_client == "python"
                       else node_http_level(url, questions, clients, requests, meter))
                _, server, own = meter.per_call_ms(requests)
                yield (f"stand-in service ({wait_ms:g} ms, a stored {len(text)}-character answer), "
                       f"{clients} clients, {http_client} client: {run.throughput:.1f} calls/s, errors {run.errors}; "
                       f"CPU per call: server {server} ms, clients {own} ms")


def sequential_line(client: str, stdio: Run, raw: Run, embed: list[float]) -> str:
    """The verdict, and where an MCP call's time goes beside the raw request (p50 of each call's parts, from the
    server's own ``meta.timings``): outside the service (the MCP client, the server's SDK, the tool wrapper,
    the pipes), the service's work besides planning and its engine request, and planning plus that request."""
    floor = percentile([e + r for e, r in zip(embed, raw.latencies, strict=False)], .95)
    outside = [ms - total for ms, total in zip(stdio.latencies, stdio.inside, strict=True)]
    service = [total - searched - e for total, searched, e in zip(stdio.inside, stdio.searched, embed, strict=True)]
    return (f"sequential ({client} client, {len(stdio.latencies)} calls): MCP stdio p50 {stdio.pct(.5):.0f} / p95 "
            f"{stdio.pct(.95):.0f} ms; raw engine p50 {raw.pct(.5):.0f} / p95 {raw.pct(.95):.0f} ms; embedding mean "
            f"{statistics.mean(embed):.1f} ms; ratio p95 {stdio.pct(.95) / floor:.2f} (bar 1.15) → "
            f"{'PASS' if stdio.pct(.95) <= 1.15 * floor else 'FAIL'}\n"
            f"  per MCP call, p50: outside the service (MCP client and server SDK, the tool wrapper, the pipes) "
            f"{percentile(outside, .5):.1f} ms; the service besides "
            f"planning and its engine request {percentile(service, .5):.1f} ms; planning + engine request "
            f"{percentile(stdio.searched, .5):.1f} ms (the raw request alone {raw.pct(.5):.1f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", default="eval-cf2")
    parser.add_argument("--queries", type=Path, default=REPO / "evaluation/sets/construction/queries.jsonl")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 10, 50, 100])
    parser.add_argument("--requests", type=int, default=300, help="Calls per level (at least 3 per client).")
    parser.add_argument("--workers", type=int, default=1, help="HTTP worker processes of the server.")
    parser.add_argument("--redis-url", default=os.environ.get("STROIDOK_REDIS_URL", ""))
    parser.add_argument("--skip-stdio", action="store_true")
    parser.add_argument("--operator", choices=["AUTO", "AND", "OR", "PHRASE"], help="Every call's operator "
                        "(default: the tool's default).")
    parser.add_argument("--mode", choices=["hybrid", "semantic", "fulltext"], help="Every call's search_mode "
                        "(default: the tool's default).")
    parser.add_argument("--server-log", type=Path, help="Keep the HTTP servers' stderr (their log) in this file.")
    parser.add_argument("--stdio-clients", nargs="+", choices=["python", "node"], default=["python"],
                        help="MCP clients of the sequential stdio probe: the Python SDK's, and/or the TypeScript "
                        "SDK's (Claude Code's; needs `npm ci --prefix clients/node`), each its own line.")
    parser.add_argument("--http-clients", nargs="+", choices=["python", "node"], default=["python"],
                        help="MCP clients of the HTTP levels: the Python SDK's, and/or the TypeScript SDK's (Claude "
                        "Code's, all sessions in one node process), each its own row.")
    parser.add_argument("--inflight", type=int, nargs="+", default=[ServerSettings().max_inflight],
                        help="STROIDOK_SERVER_MAX_INFLIGHT of the server; several values: one server each, side by "
                        "side (each gets its verdict and CPU row).")
    parser.add_argument("--engine-cpus", type=int, nargs="*", default=[],
                        help="Pin the local engine's process to these CPUs and this benchmark and its servers to the "
                        "others (as when the engine has machines of its own); restored afterwards.")
    parser.add_argument("--stdio-rounds", type=int, default=3,
                        help="Times the sequential stdio probe asks every question (the p95 of 60 calls is the "
                             "3rd-slowest one; of 180, the 9th).")
    parser.add_argument("--standin-ms", type=float, default=0.0,
                        help="Also run the top level against the same server with a stand-in service that answers a "
                        "stored answer after this many ms (no search): the server's CPU per call without search.")
    parser.add_argument("--raw-threads", type=int, default=0,
                        help="Also send the raw requests from only this many threads (the server's in-flight gate, "
                        "say) at each level: its own row, and the engine's CPU per call at that queue depth.")
    args = parser.parse_args()
    logger.remove()  # the service's DEBUG lines (its query log) would interleave with the tables
    logger.add(sys.stderr, level="INFO", format="{time:HH:mm:ss} {level:<7} {message}")

    settings = eval_settings(Settings(), args.alias)
    questions = [json.loads(line)["text"] for line in args.queries.read_text(encoding="utf-8").splitlines() if line]
    service = SearchService(settings, build_client(settings), build_embedder(settings.embedder))
    principal = stdio_principal(settings.server)
    extra = {k: v for k, v in (("operator", args.operator), ("search_mode", args.mode)) if v}
    bodies = [call_requests(service, {"query": question, **extra}, principal) for question in questions]
    env = server_env(args.alias, **UNCACHED_UNLIMITED,
                     **({"STROIDOK_REDIS_URL": args.redis_url} if args.redis_url else {}))
    print(f"index {args.alias}, {len(questions)} questions, {args.requests} calls per level, "
          f"arguments {extra or 'defaults'}, "
          f"server workers {args.workers}, cache off, CPU cores {os.cpu_count()}"
          + (f", engine pinned to CPUs {args.engine_cpus}, server and clients to the others"
             if args.engine_cpus else ""))
    print("| path | clients | p50 ms | p95 ms | p99 ms | calls/s | errors |\n|---|---|---|---|---|---|---|")
    raws: dict[int, Run] = {}
    raw_pair: dict[int, tuple[Run, Run]] = {}
    cpu_rows = []
    raw_depths: list[tuple[int, int, float, float]] = []
    inside_rows: list[tuple[str, int, Run]] = []
    with ExitStack() as stack:
        if args.engine_cpus:
            stack.enter_context(pinned(settings, set(args.engine_cpus)))
        servers = {n: stack.enter_context(http_server({**env, "STROIDOK_SERVER_MAX_INFLIGHT": str(n)},
                                                      workers=args.workers, log_path=args.server_log))
                   for n in args.inflight}
        first_pid = next(iter(servers.values()))[1]  # the raw levels' "server" CPU: ~0, a check
        for url, _ in servers.values():
            asyncio.run(mcp_level(url, questions, 2, 10))  # warm-up: every question once through each path
            asyncio.run(mcp_level(url, questions, 2, len(questions)))
        raw_level(settings, bodies, 2, len(bodies))
        for clients in args.clients:
            requests = max(args.requests, clients * 3)
            meters = []
            # raw before and after the MCP rows (their throughputs together set the bound), so a drift of the
            # machine's speed during the level falls on both paths alike
            with CpuMeter(settings, first_pid) as before_cpu:
                before = raw_level(settings, bodies, clients, requests)
            print(before.row("raw OpenSearch", clients), flush=True)
            for (inflight, (url, server_pid)), http_client in itertools.product(servers.items(), args.http_clients):
                parts = ([f"in flight {inflight}"] if len(servers) > 1 else []) + (
                    [f"{http_client} client"] if args.http_clients != ["python"] else [])
                name = "MCP HTTP" + (f" ({', '.join(parts)})" if parts else "")
                mcp_cpu = CpuMeter(settings, server_pid)  # over the timed calls only
                mcp = (asyncio.run(mcp_level(url, questions, clients, requests, mcp_cpu,
                                             extra)) if http_client == "python"
                       else node_http_level(url, questions, clients, requests, mcp_cpu))
                print(mcp.row(name, clients), flush=True)
                inside_rows.append((name, clients, mcp))
                meters.append((name, mcp_cpu))
            with CpuMeter(settings, first_pid) as after_cpu:
                after = raw_level(settings, bodies, clients, requests)
            print(after.row("raw OpenSearch (again, after the MCP rows)", clients), flush=True)
            raw, raw_cpu = Run.merged(before, after), CpuMeter.merged(before_cpu, after_cpu)
            raw_pair[clients] = (before, after)
            if args.raw_threads:
                threads = min(args.raw_threads, clients)
                with CpuMeter(settings, first_pid) as few_cpu:
                    few = raw_level(settings, bodies, threads, requests)
                print(few.row(f"raw OpenSearch ({threads} threads)", clients), flush=True)
                raw_depths.append((clients, threads, few_cpu.per_call_ms(requests)[0],
                                   raw_cpu.per_call_ms(2 * requests)[0]))
            cpu_rows += [(name, clients, meter.per_call_ms(requests), raw_cpu.per_call_ms(2 * requests))
                         for name, meter in meters]
            raws[clients] = raw
    print("\nCPU per call, ms (engine / server / this process: the MCP clients, or the raw threads)")
    print("| path | clients | MCP: engine | MCP: server | MCP: clients | raw: engine | raw: client |\n"
          "|---|---|---|---|---|---|---|")
    for name, clients, (engine, server, own), (raw_engine, _, raw_own) in cpu_rows:
        print(f"| {name} | {clients} | {engine} | {server} | {own} | {raw_engine} | {raw_own} |")
    for clients, threads, few_engine, all_engine in raw_depths:
        print(f"raw, {clients} clients: engine CPU per call {few_engine} ms from {threads} threads, "
              f"{all_engine} ms from {clients}")
    print("\nMCP call time seen by the client beside the server's own (its `meta.timings.total_ms`: from the tool "
          "call entering the service, after the server's in-flight gate, to its answer), ms")
    print("| path | clients | client p50 | client p95 | server p50 | server p95 |\n|---|---|---|---|---|---|")
    for name, clients, mcp in inside_rows:
        inside = Run(latencies=mcp.inside)
        print(f"| {name} | {clients} | {mcp.pct(.5):.0f} | {mcp.pct(.95):.0f} | {inside.pct(.5):.0f} | "
              f"{inside.pct(.95):.0f} |")
    for name, clients, mcp in inside_rows:
        if clients != max(raws):
            continue
        raw = raws[clients]
        bound = clients / raw.throughput * 1000 + 200 if raw.throughput else float("inf")
        verdict = "PASS" if mcp.errors == 0 and mcp.pct(.95) <= bound else "FAIL"
        print(f"\n{clients} clients, {name}: errors {mcp.errors}, p95 {mcp.pct(.95):.0f} ms; bound {clients} / "
              f"{raw.throughput:.1f} q/s + 200 ms = {bound:.0f} ms → {verdict}")
    if raw_pair:
        print("\n" + control_line(max(raw_pair), *raw_pair[max(raw_pair)]))
    if args.standin_ms:
        answer = service.search({"query": questions[0]}, principal)
        for line in standin_lines(env, answer, args.standin_ms, questions, max(args.clients), args.requests,
                                  args.http_clients, settings):
            print(line)
    for stdio_client in [] if args.skip_stdio else args.stdio_clients:
        probe = stdio_sequential if stdio_client == "python" else node_stdio_sequential
        rounds = args.stdio_rounds
        stdio, raw, embed = asyncio.run(probe(env, questions * rounds, settings, bodies * rounds))
        print("\n" + sequential_line(stdio_client, stdio, raw, embed))


if __name__ == "__main__":
    main()
