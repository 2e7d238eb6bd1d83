"""The engine request of this tree beside another tree's (a ``git worktree`` of an earlier round), on one index.

Each tree plans every question exactly as its own search call does (``SearchService.plan`` → ``build_request``,
run in a subprocess with that tree on ``sys.path``), so the bodies compared are the ones each round ships.
They are then sent to the same index from one process (with the copies lookup a tree makes after its search): per
round, the trees alternate in blocks of every question (the order of the two blocks flips each round, so a drift of the
machine falls on both), and the engine's CPU per call is the node's ``process.cpu.total_in_millis`` over each tree's
blocks. Reported per operator: engine ``took`` p50 / p95, wall p50 / p95, engine CPU ms per call, and the ratios this /
previous.

    git worktree add ../prev <commit>
    .venv/bin/python -m benchmarks.request_rounds --alias r39 --previous ../prev --operators AUTO AND --rounds 5
    .venv/bin/python -m benchmarks.request_rounds --alias r39 --previous ../prev --service --rounds 4 \
        --variant 'extra1:STROIDOK_SEARCH_EXTRA_CANDIDATES=1'
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from evaluation.evaluate import engine_cpu_ms, eval_settings
from service.engine.gateway import build_client
from service.search.answer.hits import content_hash
from service.search.dsl.lookups import build_copies_lookup
from service.settings import Settings
from tests.support.load import percentile

REPO = Path(__file__).resolve().parents[1]
Plans = list[tuple[dict[str, Any], str, dict[str, Any] | None]]

#: run inside a tree: that tree's service plans each question of stdin as a default call with the operator
PLANNER = """
import json, sys
try:
    from evaluation.evaluate import eval_settings
except ImportError:  # a tree from before evaluation/ left ingest/
    from ingest.evaluate import eval_settings
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search.dsl.build import build_request
from service.search.request.contract import validate_request
from service.search.service import SearchService
from service.caller.principal import stdio_principal
from service.settings import Settings
alias, operator, mode = sys.argv[1:4]
settings = eval_settings(Settings(), alias)
service = SearchService(settings, build_client(settings), build_embedder(settings.embedder))
principal = stdio_principal(settings.server)
out = []
for text in json.load(sys.stdin):
    request = validate_request({"query": text, "search_mode": mode, "operator": operator})
    planned = service.searcher.plan(request, principal)
    plan = planned.plan if hasattr(planned, "plan") else planned[0]  # a tree whose plan() gave a tuple
    # a tree that looks its results' copies up after the search gives the lookup's scope
    out.append([build_request(plan), service.reads.pipeline(plan.route), getattr(plan, "scope", None)])
print(json.dumps(out, ensure_ascii=False))
"""


#: run inside a tree: that tree's service answers every question of stdin with the tool's defaults (warm: one
#: untimed round first); per call, the service's own milliseconds (its total less the engine request and the
#: query embedding) and its total
SERVICE_TIMER = """
import json, sys
try:
    from evaluation.evaluate import eval_settings
except ImportError:  # a tree from before evaluation/ left ingest/
    from ingest.evaluate import eval_settings
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search.service import SearchService
from service.caller.principal import stdio_principal
from service.settings import Settings
settings = eval_settings(Settings(), sys.argv[1])
service = SearchService(settings, build_client(settings), build_embedder(settings.embedder))
principal = stdio_principal(settings.server)
questions = json.load(sys.stdin)
for text in questions:
    service.search({"query": text}, principal)
out = []
for text in questions:
    t = service.search({"query": text}, principal).meta.timings
    out.append([t.total_ms - t.search_ms - t.embedding_ms, t.total_ms])
print(json.dumps(out))
"""


def in_tree(tree: Path, script: str, args: list[str], questions: list[str], env: dict[str, str] | None = None) -> Any:
    """``script`` run with ``tree``'s modules (this interpreter) and ``env`` settings, the questions on stdin; its
    JSON answer."""
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=tree,
                          input=json.dumps(questions, ensure_ascii=False), capture_output=True, text=True,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "DO_NOT_TRACK": "1", **(env or {})},
                          check=True)
    return json.loads(done.stdout)


def service_times(tree: Path, alias: str, questions: list[str],
                  env: dict[str, str] | None = None) -> list[tuple[float, float]]:
    """``tree``'s service on every question: (own ms, total ms) per call."""
    return [(own, total) for own, total in in_tree(tree, SERVICE_TIMER, [alias], questions, env)]


Variant = tuple[Path, dict[str, str]]


def compare_service(trees: dict[str, Variant], alias: str, questions: list[str], rounds: int) -> list[str]:
    """The trees' services (each with its settings) in turn (the order flips each round): own and total ms
    p50 / p95 per tree."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for round_ in range(rounds):
        for name in list(trees) if round_ % 2 == 0 else reversed(list(trees)):
            times[name] += service_times(trees[name][0], alias, questions, trees[name][1])
    rows = []
    for name, got in times.items():
        own, total = [o for o, _ in got], [t for _, t in got]
        rows.append(f"| service | {name} | own {percentile(own, .5):.1f} / {percentile(own, .95):.1f} | "
                    f"total {percentile(total, .5):.1f} / {percentile(total, .95):.1f} | |")
    return rows


def tree_bodies(tree: Path, alias: str, operator: str, mode: str, questions: list[str],
                env: dict[str, str] | None = None) -> Plans:
    """The bodies ``tree``'s code builds for ``questions`` (its own modules and ``env`` settings, this
    interpreter)."""
    return [(body, pipeline, scope)
            for body, pipeline, scope in in_tree(tree, PLANNER, [alias, operator, mode], questions, env)]


def send_block(client: OpenSearch, index: str, plans: Plans) -> tuple[list[float], list[float], float]:
    """Every search once (with its copies lookup, where the tree makes one): engine took and wall ms summed
    over a search's requests, and the engine's CPU ms over the block."""
    took, wall = [], []
    cpu_before = engine_cpu_ms(client)
    for body, pipeline, scope in plans:
        began = time.perf_counter()
        raw = client.search(index=index, body=body, params={"search_pipeline": pipeline, "request_cache": "false"})
        spent = float(raw["took"])
        if scope is not None and (hashes := sorted({content_hash(h) or "" for h in raw["hits"]["hits"]} - {""})):
            spent += float(client.search(index=index, body=build_copies_lookup(hashes, scope))["took"])
        wall.append((time.perf_counter() - began) * 1000)
        took.append(spent)
    return took, wall, engine_cpu_ms(client) - cpu_before


def compare(client: OpenSearch, index: str, trees: dict[str, Plans], rounds: int) -> dict[str, dict[str, float]]:
    """Alternating blocks per round; per tree the took / wall percentiles and the engine CPU per call."""
    names = list(trees)
    for name in names:  # warm-up: caches and JIT for both
        send_block(client, index, trees[name][:10])
    took: dict[str, list[float]] = {n: [] for n in names}
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu = dict.fromkeys(names, 0.0)
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            t, w, c = send_block(client, index, trees[name])
            took[name] += t
            wall[name] += w
            cpu[name] += c
    return {n: {"took_p50": percentile(took[n], .5), "took_p95": percentile(took[n], .95),
                "wall_p50": percentile(wall[n], .5), "wall_p95": percentile(wall[n], .95),
                "cpu_ms": cpu[n] / len(took[n])} for n in names}


def format_rows(operator: str, result: dict[str, dict[str, float]]) -> list[str]:
    this, prev = result["this"], result["previous"]
    rows = [f"| {operator} | {name} | {r['took_p50']:.0f} / {r['took_p95']:.0f} | {r['wall_p50']:.1f} / "
            f"{r['wall_p95']:.1f} | {r['cpu_ms']:.1f} |" for name, r in result.items()]
    rows.append(f"| {operator} | this / previous | {this['took_p50'] / max(prev['took_p50'], 1):.2f} / "
                f"{this['took_p95'] / max(prev['took_p95'], 1):.2f} | {this['wall_p50'] / prev['wall_p50']:.2f} / "
                f"{this['wall_p95'] / prev['wall_p95']:.2f} | {this['cpu_ms'] / max(prev['cpu_ms'], 0.1):.2f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", required=True, help="Index alias both trees search (kept by `stroidok eval`).")
    parser.add_argument("--previous", type=Path, required=True, help="Root of the other tree (a git worktree).")
    parser.add_argument("--queries", type=Path, default=REPO / "evaluation/sets/construction/queries.jsonl")
    parser.add_argument("--operators", nargs="+", default=["AUTO", "AND"])
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "fulltext", "semantic"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--service", action="store_true", help="Instead: each tree's whole search call in turn, "
                        "the service's own work per call (its total less the engine request and the embedding).")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:VAR=VALUE[,VAR=VALUE]",
                        help="This tree once more with these settings (e.g. "
                        "'extra1:STROIDOK_SEARCH_EXTRA_CANDIDATES=1').")
    args = parser.parse_args()

    questions = [json.loads(line)["text"] for line in args.queries.read_text(encoding="utf-8").splitlines() if line]
    client = build_client(eval_settings(Settings(), args.alias))
    trees: dict[str, Variant] = {"this": (REPO, {}), "previous": (args.previous.resolve(), {})}
    for spec in args.variant:
        name, _, pairs = spec.partition(":")
        trees[name] = (REPO, dict(pair.split("=", 1) for pair in pairs.split(",") if pair))
    print(f"{len(questions)} questions × {args.rounds} rounds, mode {args.mode}, index {args.alias}, "
          f"previous tree {args.previous}")
    if args.service:
        print("| what | tree | service's own ms p50 / p95 | call total ms p50 / p95 | |\n|---|---|---|---|---|")
        print("\n".join(compare_service(trees, args.alias, questions, args.rounds)))
        return
    print("| operator | tree | took p50 / p95 ms | wall p50 / p95 ms | engine CPU ms a call |\n|---|---|---|---|---|")
    for operator in args.operators:
        bodies = {name: tree_bodies(tree, args.alias, operator, args.mode, questions, env)
                  for name, (tree, env) in trees.items()}
        print("\n".join(format_rows(operator, compare(client, args.alias, bodies, args.rounds))), flush=True)


if __name__ == "__main__":
    main()
