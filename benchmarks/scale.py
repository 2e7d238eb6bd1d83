"""How search behaves as the index grows: the construction corpus ingested again and again.

Each round writes the 361 normative documents as TXT files under a new folder, every page carrying a
line of its own (so no copy is the same bytes as another), and ingests it with the product's ingest
(``run_ingest``, default settings). Whenever the index passes the next size, it measures, on the same 60
construction questions through ``SearchService.search`` (the tool's path, cache off, defaults):
p50/p95 and throughput at 1, 10 and 100 concurrent callers; the index's size on disk, heap used, and the
ingest rate since the last size (the index merged with ``index optimize`` before measuring); and, side by side on the
service's own request bodies, what the settings that dominate cost (pagination depth, k-NN k, aggregations, collapse).

    .venv/bin/python -m benchmarks.scale                                    # 100K, 300K, 1M chunks
    .venv/bin/python -m benchmarks.scale --sizes 100000 300000 --out docs/scale-run.jsonl
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.request_cost import VARIANTS, format_table, measure, read_questions, service_bodies
from evaluation.sample import DEFAULT_SHARED, write_txt_corpus
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.engine.index_admin.maintenance import optimize
from service.search.service import SearchService
from service.settings import Settings
from tests.support.load import percentile

REPO = Path(__file__).resolve().parents[1]
SIDE_BY_SIDE = ("shipped", "pagination depth 100", "k-NN k 50", "no aggregations", "no collapse")


def level(service: SearchService, questions: list[str], clients: int, calls: int) -> dict[str, float]:
    """``calls`` searches from ``clients`` threads: p50/p95 ms and calls/s."""
    latencies: list[float] = []
    principal = Principal.of("scale", [])

    def one(i: int) -> None:
        began = time.perf_counter()
        service.search({"query": questions[i % len(questions)]}, principal, f"scale-{i % clients}")
        latencies.append((time.perf_counter() - began) * 1000)

    began = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(calls)))
    wall = time.perf_counter() - began
    return {"p50": percentile(latencies, .5), "p95": percentile(latencies, .95), "qps": calls / wall}


def index_facts(service: SearchService) -> dict[str, Any]:
    client, alias = service.client, service.settings.index.alias
    client.indices.refresh(index=alias)
    stats = client.indices.stats(index=alias, metric="store,docs")["_all"]["primaries"]
    nodes = client.nodes.stats(metric="jvm")["nodes"].values()
    return {"chunks": stats["docs"]["count"], "store_mb": round(stats["store"]["size_in_bytes"] / 2**20),
            "heap_used_mb": sum(n["jvm"]["mem"]["heap_used_in_bytes"] for n in nodes) // 2**20,
            "heap_max_mb": sum(n["jvm"]["mem"]["heap_max_in_bytes"] for n in nodes) // 2**20}


def index_facts_count(client: Any, alias: str) -> int:
    client.indices.refresh(index=alias)
    return int(client.count(index=alias)["count"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", default="scale")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--calls", type=int, default=200, help="Searches per concurrency level.")
    parser.add_argument("--rounds", type=int, default=1, help="Rounds of the side-by-side settings.")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/stroidok-scale"))
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--queries", type=Path, default=REPO / "evaluation/sets/construction/queries.jsonl")
    parser.add_argument("--out", type=Path, help="Append one JSON line per size here.")
    parser.add_argument("--keep", action="store_true", help="Keep the index (default: drop it at the end).")
    parser.add_argument("--resume", action="store_true", help="Go on filling an index kept by an earlier --keep "
                        "run (copies numbered after the ones it holds; sizes it already passed are skipped).")
    args = parser.parse_args()

    settings = Settings()
    settings.index = settings.index.model_copy(update={"alias": args.alias})
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "100000000/minute"
    client = build_client(settings)
    embedder = build_embedder(settings.embedder)
    questions = read_questions(args.queries)
    sizes = sorted(args.sizes)
    copy, ingest_s, chunks_at_last = 0, 0.0, 0
    if args.resume:
        held = client.count(index=settings.index.files_index)["count"]
        copy, chunks_at_last = held // 361 + (held % 361 > 0), index_facts_count(client, args.alias)
        sizes = [size for size in sizes if size > chunks_at_last]
        print(f"resuming after copy {copy}: {chunks_at_last} chunks", flush=True)
    try:
        while sizes:
            folder = args.workdir / f"copy-{copy:03d}"
            write_txt_corpus(args.shared, folder, marker=f"Экземпляр архива № {copy}.")
            began = time.perf_counter()
            report = run_ingest(IngestOptions([folder]), settings, client, embedder, quiet=True)
            ingest_s += time.perf_counter() - began
            shutil.rmtree(folder)  # the index holds it now; the disk need not
            copy += 1
            service = SearchService(settings, client, embedder)
            facts = index_facts(service)
            print(f"copy {copy}: {report.counts.get('indexed', 0)} files, index {facts['chunks']} chunks", flush=True)
            if facts["chunks"] < sizes[0]:
                continue
            sizes.pop(0)
            before, _ = optimize(client, settings.index)  # as `stroidok index optimize` after a big load
            row: dict[str, Any] = {**facts, "copies": copy, "segments_before_optimize": before,
                                   "ingest_chunks_per_s": round((facts["chunks"] - chunks_at_last) / ingest_s, 1)}
            chunks_at_last, ingest_s = facts["chunks"], 0.0
            for clients in args.clients:
                row[f"c{clients}"] = level(service, questions, clients, max(args.calls, clients * 2))
            variants = {name: VARIANTS[name] for name in SIDE_BY_SIDE}
            results = measure(client, args.alias, service_bodies(service, questions), variants, args.rounds)
            row["settings"] = {name: {"took_p50": percentile(took, .5), "took_p95": percentile(took, .95)}
                               for name, (took, _) in results.items()}
            print(json.dumps({k: v for k, v in row.items() if k != "settings"}), flush=True)
            print(format_table(results), flush=True)
            if args.out:
                with args.out.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(row) + "\n")
    finally:
        if not args.keep:
            from service.engine.index_admin.apply import drop_all

            drop_all(client, settings.index)


if __name__ == "__main__":
    main()
