"""The engine's cost of a default call on two kept indexes side by side (e.g. with and without clause unit
vectors), each searched through the product's service with its own settings: per index, rounds of every
question as a default call, alternating the indexes block by block; engine ``took`` p50 / p95 and the node's
CPU per call (``process.cpu.total_in_millis`` over each index's blocks).

    .venv/bin/python -m benchmarks.index_cost --index n361nu --index 'n361:STROIDOK_EMBEDDER_UNIT_VECTORS=auto'
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from evaluation.evaluate import engine_cpu_ms, eval_settings, load_questions
from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search.service import SearchService
from service.settings import Settings
from tests.support.load import percentile

REPO = Path(__file__).resolve().parents[1]
PUBLIC = Principal.of("bench", [])


def service_for(spec: str) -> tuple[str, SearchService]:
    """``ALIAS[:VAR=VALUE,...]``: the index's alias and a service built with those settings."""
    alias, _, assignments = spec.partition(":")
    changed = dict(part.split("=", 1) for part in assignments.split(",") if part)
    saved = {k: os.environ.get(k) for k in changed}
    os.environ.update(changed)
    try:
        settings = eval_settings(Settings(), alias)
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
    return spec, SearchService(settings, build_client(settings), build_embedder(settings.embedder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", action="append", required=True, help="ALIAS[:VAR=VALUE,...], twice or more.")
    parser.add_argument("--questions", type=Path, action="append")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    questions = [q for path in args.questions or [REPO / "evaluation/sets/construction/clauses.jsonl"]
                 for q in load_questions(path).values()]
    services = [service_for(spec) for spec in args.index]
    took: dict[str, list[float]] = {spec: [] for spec, _ in services}
    cpu: dict[str, float] = dict.fromkeys(took, 0.0)
    for _, service in services:  # warm every index once
        for question in questions:
            service.search({"query": question}, PUBLIC)
    for round_ in range(args.rounds):
        for spec, service in services[::1 if round_ % 2 == 0 else -1]:
            before = engine_cpu_ms(service.client)
            for question in questions:
                took[spec].append(service.search({"query": question}, PUBLIC).meta.timings.search_ms)
            cpu[spec] += engine_cpu_ms(service.client) - before
    calls = args.rounds * len(questions)
    print(json.dumps({spec: {"search_ms_p50": round(percentile(t, 0.5), 1),
                             "search_ms_p95": round(percentile(t, 0.95), 1),
                             "engine_cpu_ms_a_call": round(cpu[spec] / calls, 1)} for spec, t in took.items()},
                     indent=1))


if __name__ == "__main__":
    main()
