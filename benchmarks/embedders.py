"""Embedder speed on this machine, side by side in one run, through the shipped path.

1. Raw embedding: the same sample of real chunks (as ``stroidok ingest`` stored them, embedded as the
   product embeds them: title. section. text) through navec and e5 with 1 and 2 OpenMP threads, and e5
   cut to fewer tokens; each configuration in its own process (OpenMP reads its thread count once), in
   rounds of shuffled order so machine noise falls on all of them. Reported: chunks/s, characters/s,
   single-query latency, each relative to navec.
2. Backfill end to end: ``stroidok ingest --vectors later`` of a folder into a throwaway alias, then
   ``stroidok embed --limit N`` through the CLI with (workers x threads) = 1x2 and 2x1: chunks/s of the
   whole read → embed → guarded write → refresh loop.

    .venv/bin/python -m benchmarks.embedders --alias eval-cf2 --folder .stroidok/sample
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = ["какая минимальная ширина эвакуационного выхода", "класс бетона для монолитного фундамента",
             "расстояние между пожарными кранами", "нагрузки на перекрытия жилых зданий",
             "требования к огнестойкости несущих стен"]
CONFIGS = [("navec", {}), ("e5", {"STROIDOK_EMBEDDER_THREADS": "1"}), ("e5", {"STROIDOK_EMBEDDER_THREADS": "2"}),
           ("e5", {"STROIDOK_EMBEDDER_THREADS": "2", "STROIDOK_EMBEDDER_MAX_TOKENS": "256"}),
           ("e5", {"STROIDOK_EMBEDDER_THREADS": "2", "STROIDOK_EMBEDDER_MAX_TOKENS": "128"})]


def sample_texts(alias: str, count: int, seed: int) -> list[str]:
    """``count`` chunks of an index built by ``stroidok ingest``, in the text the product embeds."""
    from ingest.backfill import TEXT_FIELDS, chunk_text
    from service.engine.gateway import build_client
    from service.settings import Settings

    client = build_client(Settings())
    body = {"size": count, "_source": TEXT_FIELDS,
            "query": {"function_score": {"random_score": {"seed": seed, "field": "_seq_no"}}}}
    return [chunk_text(h["_source"]) for h in client.search(index=alias, body=body)["hits"]["hits"]]


def measure(texts: list[str]) -> dict[str, float]:
    """In a worker process: embed ``texts`` with the configured embedder; time passages and queries."""
    from service.embedders.factory import build_embedder
    from service.settings import EmbedderSettings

    embedder = build_embedder(EmbedderSettings())
    if embedder.identity.provider == "navec":
        embedder.fit(texts)
    embedder.embed_documents(texts[:2])  # warm up (load, caches)
    began = time.perf_counter()
    embedder.embed_documents(texts)
    seconds = time.perf_counter() - began
    latencies = []
    for question in QUESTIONS * 4:
        began = time.perf_counter()
        embedder.embed_query(question)
        latencies.append((time.perf_counter() - began) * 1000)
    return {"chunks_per_s": len(texts) / seconds, "chars_per_s": sum(map(len, texts)) / seconds,
            "query_ms": statistics.median(latencies)}


def run_config(provider: str, env: dict[str, str], texts_file: Path) -> dict[str, float]:
    environment = {**os.environ, "DO_NOT_TRACK": "1", "STROIDOK_EMBEDDER_PROVIDER": provider, **env}
    environment.pop("OMP_NUM_THREADS", None)
    done = subprocess.run([sys.executable, "-m", "benchmarks.embedders", "--worker", str(texts_file)], cwd=REPO,
                          env=environment, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def label(provider: str, env: dict[str, str]) -> str:
    if provider != "e5":
        return provider
    return f"e5 {env['STROIDOK_EMBEDDER_THREADS']} thr" + (f", {env['STROIDOK_EMBEDDER_MAX_TOKENS']} tok"
                                                            if "STROIDOK_EMBEDDER_MAX_TOKENS" in env else "")


def raw_speed(alias: str, count: int, rounds: int, seed: int) -> list[tuple[str, dict[str, float]]]:
    texts = sample_texts(alias, count, seed)
    texts_file = Path(f"/tmp/stroidok-bench-texts-{uuid.uuid4().hex[:8]}.json")
    texts_file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    results: dict[str, list[dict[str, float]]] = {label(p, e): [] for p, e in CONFIGS}
    try:
        for _ in range(rounds):
            for provider, env in random.sample(CONFIGS, len(CONFIGS)):
                results[label(provider, env)].append(run_config(provider, env, texts_file))
    finally:
        texts_file.unlink(missing_ok=True)
    print(f"{count} chunks of {alias}, {sum(map(len, texts)) / len(texts):.0f} characters each on average, "
          f"{rounds} rounds (median)")
    return [(name, {k: statistics.median(r[k] for r in runs) for k in runs[0]}) for name, runs in results.items()]


def stroidok(*args: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([str(REPO / ".venv" / "bin" / "stroidok"), *args, "--json"], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"stroidok {' '.join(args)} failed: {done.stderr[-2000:]}")
    parsed: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{"):]) if done.stdout.strip() else {}
    return parsed


def backfill_speed(folder: Path, limit: int) -> list[tuple[str, dict[str, Any]]]:
    """Text-first ingest of ``folder`` into a throwaway alias per configuration, then `stroidok embed`."""
    from service.engine.gateway import build_client
    from service.engine.index_admin.apply import drop_all
    from service.settings import IndexSettings, Settings

    rows = []
    for workers, threads in ((1, 2), (2, 1)):
        alias = f"bench-embed-{uuid.uuid4().hex[:8]}"
        env = {**os.environ, "DO_NOT_TRACK": "1", "STROIDOK_INDEX_ALIAS": alias, "STROIDOK_EMBEDDER_PROVIDER": "e5",
               "STROIDOK_EMBEDDER_THREADS": str(threads)}
        try:
            stroidok("ingest", str(folder), "--vectors", "later", env=env)
            report = stroidok("embed", "--limit", str(limit), "--workers", str(workers), env=env)["embed"]
            rows.append((f"{workers} worker(s) x {threads} thread(s)", report))
        finally:
            drop_all(build_client(Settings()), IndexSettings(alias=alias))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--alias", default="stroidok-chunks", help="An index built by `stroidok ingest`.")
    parser.add_argument("--chunks", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--folder", type=Path, help="Also measure the backfill end to end on this folder.")
    parser.add_argument("--limit", type=int, default=96, help="Chunks embedded per backfill configuration.")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(json.loads(args.worker.read_text(encoding="utf-8")))))
        return
    rows = raw_speed(args.alias, args.chunks, args.rounds, args.seed)
    base = dict(rows)["navec"]["chunks_per_s"]
    print(f"{'embedder':<22}{'chunks/s':>10}{'chars/s':>10}{'vs navec':>10}{'query ms':>10}")
    for name, r in rows:
        print(f"{name:<22}{r['chunks_per_s']:>10.2f}{r['chars_per_s']:>10.0f}{r['chunks_per_s'] / base:>10.4f}"
              f"{r['query_ms']:>10.1f}")
    if args.folder:
        print(f"\nbackfill end to end (`stroidok ingest --vectors later` + `stroidok embed --limit {args.limit}`), "
              f"e5, {args.folder}")
        for name, report in backfill_speed(args.folder, args.limit):
            print(f"{name:<26}{report['chunks_per_s']:>8.2f} chunks/s {report['characters_per_s']:>8.0f} chars/s "
                  f"(embedding {report['embed_s']:.0f} of {report['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
