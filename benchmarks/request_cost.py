"""What each part of the service's engine request costs, side by side in one run (issue 15).

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

from ingest.evaluate import eval_settings
from service.embedders.factory import build_embedder
from service.opensearch import build_client
from service.query.build import build_request
from service.search import SearchService, validate_request
from service.security import stdio_principal
from service.settings import Settings

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
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", default="eval-cf", help="Index alias to search (kept by `stroidok eval --keep`).")
    parser.add_argument("--queries", type=Path, default=REPO / "eval/construction/queries.jsonl")
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
    principal = stdio_principal(settings.server)
    questions = [json.loads(line)["text"] for line in args.queries.read_text(encoding="utf-8").splitlines() if line]
    variants = {k: v for k, v in VARIANTS.items() if not args.only or k in args.only or k == "shipped"}
    plans = []
    for text in questions:
        request = validate_request({"query": text, "search_mode": args.mode, "operator": args.operator})
        plan, _, _ = service.plan(request, principal)
        plans.append((build_request(plan), service._pipeline(plan.route)))
    took: dict[str, list[float]] = {name: [] for name in variants}
    wall: dict[str, list[float]] = {name: [] for name in variants}
    rng = random.Random(7)
    for body, pipeline in plans[:5]:  # warm-up
        client.search(index=args.target or args.alias, body=body, params={"search_pipeline": pipeline})
    for _ in range(args.rounds):
        for body, pipeline in plans:
            names = list(variants)
            rng.shuffle(names)
            for name in names:
                variant = variants[name](copy.deepcopy(body))
                began = time.perf_counter()
                raw = client.search(index=args.target or args.alias, body=variant, params={"search_pipeline": pipeline,
                                                                            "request_cache": "false"})
                wall[name].append((time.perf_counter() - began) * 1000)
                took[name].append(float(raw["took"]))
    base_p95, base_mean = percentile(took["shipped"], 0.95), statistics.mean(wall["shipped"])
    print(f"{len(plans)} questions × {args.rounds} rounds, mode {args.mode}, operator {args.operator}, "
          f"index {args.alias}")
    print(f"{'variant':<28}{'took p50':>10}{'took p95':>10}{'p95 ×':>8}{'wall p50':>10}{'wall p95':>10}"
          f"{'q/s (1 client)':>16}{'q/s ×':>8}")
    for name in variants:
        mean = statistics.mean(wall[name])
        print(f"{name:<28}{percentile(took[name], .5):>10.0f}{percentile(took[name], .95):>10.0f}"
              f"{percentile(took[name], .95) / max(base_p95, 1):>8.2f}{percentile(wall[name], .5):>10.1f}"
              f"{percentile(wall[name], .95):>10.1f}{1000 / mean:>16.1f}{base_mean / mean:>8.2f}")


if __name__ == "__main__":
    main()
