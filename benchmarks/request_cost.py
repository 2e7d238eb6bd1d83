"""What each part of the service's engine request costs, side by side in one run.

The service plans each question exactly as a search call does (``SearchService.plan`` → ``build_request``);
each variant then removes or changes one part of that body, and every variant of a question is sent in a
shuffled order within the same round, so machine noise falls on all of them alike. Reported: the engine's
``took`` and the wall time per request (p50/p95), each relative to the shipped body.

    .venv/bin/python -m benchmarks.request_cost --alias eval-cf            # an index kept by `stroidok eval`
    .venv/bin/python -m benchmarks.request_cost --alias eval-cf --rounds 5 --mode fulltext
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from evaluation.evaluate import eval_settings
from service.caller.principal import stdio_principal
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search.dsl.build import SOURCE_EXCLUDES, build_request
from service.search.request.contract import validate_request
from service.search.service import SearchService
from service.settings import Settings
from tests.support.load import percentile

Body = dict[str, Any]
REPO = Path(__file__).resolve().parents[1]


def without(*keys: str) -> Callable[[Body], Body]:
    def change(body: Body) -> Body:
        for key in keys:
            body.pop(key, None)
        return body
    return change


def depth(value: int) -> Callable[[Body], Body]:
    def change(body: Body) -> Body:
        if "hybrid" in body["query"]:
            body["query"]["hybrid"]["pagination_depth"] = value
        return body
    return change


def knn_k(value: int) -> Callable[[Body], Body]:
    def change(body: Body) -> Body:
        for leg in body["query"].get("hybrid", {}).get("queries", []):
            if "knn" in leg:
                for spec in leg["knn"].values():
                    spec["k"] = value
        return body
    return change


def no_inner_highlight(body: Body) -> Body:
    body.get("collapse", {}).get("inner_hits", {}).pop("highlight", None)
    return body


def only_aggregation(name: str) -> Callable[[Body], Body]:
    def change(body: Body) -> Body:
        body["aggs"] = {name: body["aggs"][name]}
        return body
    return change


def no_total_hits(body: Body) -> Body:
    body["track_total_hits"] = False
    return body


def whole_source(body: Body) -> Body:
    """Every stored field but the vector on hits and inner hits."""
    body["_source"] = body["collapse"]["inner_hits"]["_source"] = copy.deepcopy(SOURCE_EXCLUDES)
    return body


VARIANTS: dict[str, Callable[[Body], Body]] = {
    "shipped": lambda body: body,
    "no aggregations": without("aggs"),
    "only total_docs agg": only_aggregation("total_docs"),
    "no collapse": without("collapse"),
    "no inner highlight": no_inner_highlight,
    "no suggester": without("suggest"),
    "no script_fields": without("script_fields"),
    "track_total_hits off": no_total_hits,
    "pagination depth 100": depth(100),
    "pagination depth 300": depth(300),
    "k-NN k 50": knn_k(50),
    "no aggs+suggest+collapse": without("aggs", "suggest", "collapse"),
    "no aggs+suggest": without("aggs", "suggest"),
    "whole _source": whole_source,
}


Plans = list[tuple[Body, str]]


def service_bodies(service: SearchService, questions: list[str], mode: str = "hybrid",
                   operator: str = "AUTO") -> Plans:
    """The request body and pipeline the service builds for each question (embedding included)."""
    principal = stdio_principal(service.settings.server)
    plans = []
    for text in questions:
        request = validate_request({"query": text, "search_mode": mode, "operator": operator})
        plan = service.searcher.plan(request, principal).plan
        plans.append((build_request(plan), service.reads.pipeline(plan.route)))
    return plans


def measure(client: OpenSearch, index: str, plans: Plans, variants: dict[str, Callable[[Body], Body]],
            rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """Engine ``took`` and wall ms per variant; each question's variants in a shuffled order per round."""
    took: dict[str, list[float]] = {name: [] for name in variants}
    wall: dict[str, list[float]] = {name: [] for name in variants}
    rng = random.Random(7)
    for body, pipeline in plans[:5]:  # warm-up
        client.search(index=index, body=body, params={"search_pipeline": pipeline})
    for _ in range(rounds):
        for body, pipeline in plans:
            names = list(variants)
            rng.shuffle(names)
            for name in names:
                variant = variants[name](copy.deepcopy(body))
                began = time.perf_counter()
                raw = client.search(index=index, body=variant, params={"search_pipeline": pipeline,
                                                                       "request_cache": "false"})
                wall[name].append((time.perf_counter() - began) * 1000)
                took[name].append(float(raw["took"]))
    return {name: (took[name], wall[name]) for name in variants}


def format_table(results: dict[str, tuple[list[float], list[float]]]) -> str:
    took_base, wall_base = results["shipped"]
    base_p95, base_mean = percentile(took_base, 0.95), statistics.mean(wall_base)
    lines = ["| variant | took p50 ms | took p95 ms | p95 × | wall p50 ms | wall p95 ms | q/s (1 client) | q/s × |",
             "|---|---|---|---|---|---|---|---|"]
    for name, (took, wall) in results.items():
        mean = statistics.mean(wall)
        lines.append(f"| {name} | {percentile(took, .5):.0f} | {percentile(took, .95):.0f} | "
                     f"{percentile(took, .95) / max(base_p95, 1):.2f} | {percentile(wall, .5):.1f} | "
                     f"{percentile(wall, .95):.1f} | {1000 / mean:.1f} | {base_mean / mean:.2f} |")
    return "\n".join(lines)


def read_questions(path: Path) -> list[str]:
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", default="eval-cf", help="Index alias to search (kept by `stroidok eval --keep`).")
    parser.add_argument("--queries", type=Path, default=REPO / "evaluation/sets/construction/queries.jsonl")
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "fulltext", "semantic"])
    parser.add_argument("--operator", default="AUTO")
    parser.add_argument("--target", help="Index to send the bodies to (default: the alias), e.g. a copy of it "
                        "with another shard count.")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="Variant names to run (default: all).")
    args = parser.parse_args()

    settings = eval_settings(Settings(), args.alias)
    client = build_client(settings)
    service = SearchService(settings, client, build_embedder(settings.embedder))
    plans = service_bodies(service, read_questions(args.queries), args.mode, args.operator)
    variants = {k: v for k, v in VARIANTS.items() if not args.only or k in args.only or k == "shipped"}
    results = measure(client, args.target or args.alias, plans, variants, args.rounds)
    print(f"{len(plans)} questions × {args.rounds} rounds, mode {args.mode}, operator {args.operator}, "
          f"index {args.target or args.alias}")
    print(format_table(results))


if __name__ == "__main__":
    main()
