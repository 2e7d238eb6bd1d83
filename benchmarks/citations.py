"""What checking a draft's citations costs: one ``check_citations`` call with 20 citations against 20
``get_document(designation, clause)`` calls for the same citations, through the service with its defaults on an
index ``stroidok ingest`` built; wall time (median and p95 over rounds) and the engine's shard query phases
(requests × shards) a call.

    STROIDOK_INDEX_ALIAS=norms python -m benchmarks.citations [--rounds 20] [--count 20]

The 20 citations are the first of each kind of ``evaluation/sets/citations/citations.jsonl`` in turn (real
clauses, tables, appendices, values, wrong numbers, editions, missing documents, replaced ones).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from contextlib import suppress
from itertools import zip_longest
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from evaluation.citations import load_citations
from service.caller.principal import Principal
from service.engine.gateway import build_client
from service.errors import StroidokError
from service.search.citations.grammar import find_citations
from service.search.service import SearchService
from service.settings import Settings

SET = Path(__file__).resolve().parents[1] / "evaluation" / "sets" / "citations" / "citations.jsonl"
READER = Principal.of("bench", [])


def mixed(rows: list[dict[str, Any]], count: int) -> list[str]:
    """``count`` citations, one of each kind in turn."""
    kinds: dict[str, list[str]] = {}
    for row in rows:
        kinds.setdefault(row["kind"], []).append(row["text"])
    return [t for group in zip_longest(*kinds.values()) for t in group if t][:count]


def query_phases(client: OpenSearch, alias: str) -> int:
    stats = client.indices.stats(index=alias, metric="search")
    return int(stats["_all"]["primaries"]["search"]["query_total"])


def shards(client: OpenSearch, alias: str) -> int:
    settings = client.indices.get_settings(index=alias).values()
    return sum(int(s["settings"]["index"]["number_of_shards"]) for s in settings)


def measure(run: Callable[[], object], rounds: int, client: OpenSearch, alias: str) -> tuple[list[float], float]:
    """Wall times in ms over ``rounds`` (after one warm-up), and engine requests a round."""
    run()
    before = query_phases(client, alias)
    walls = []
    for _ in range(rounds):
        began = time.perf_counter()
        run()
        walls.append((time.perf_counter() - began) * 1000)
    return walls, (query_phases(client, alias) - before) / rounds / shards(client, alias)


def open_each(service: SearchService, texts: list[str]) -> None:
    for text in texts:
        cited = find_citations(text)[0]
        with suppress(StroidokError):  # an invented citation: NOT_FOUND is the answer
            service.get_document(None, READER, "bench", cited.clause, designation=cited.designation)


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def bench_service() -> tuple[Settings, OpenSearch, SearchService]:
    """The service with its defaults, as a benchmark runs it: no cache, no rate limit, no query log."""
    settings = Settings()
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "1000000/minute"
    settings.search.log_queries = False
    client = build_client(settings)
    return settings, client, SearchService(settings, client, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--count", type=int, default=20)
    args = parser.parse_args()
    settings, client, service = bench_service()
    texts = mixed(load_citations(SET), args.count)
    text = "\n".join(texts)
    one, one_requests = measure(lambda: service.check_citations({"text": text}, READER, "bench"), args.rounds,
                                client, settings.index.alias)
    each, each_requests = measure(lambda: open_each(service, texts), args.rounds, client, settings.index.alias)
    print(f"index {settings.index.alias}, {len(texts)} citations, {args.rounds} rounds")
    print(f"{'':<40}{'median ms':>10}{'p95 ms':>10}{'requests':>10}")
    print(f"{'check_citations, one call':<40}{statistics.median(one):>10.1f}{p95(one):>10.1f}{one_requests:>10.1f}")
    print(f"{f'get_document × {len(texts)}':<40}{statistics.median(each):>10.1f}{p95(each):>10.1f}"
          f"{each_requests:>10.1f}")
    print(f"ratio (one call / one by one): wall {statistics.median(one) / statistics.median(each):.2f}×, "
          f"requests {one_requests / each_requests:.2f}×")


if __name__ == "__main__":
    main()
