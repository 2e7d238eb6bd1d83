"""Where a dense leg's scores fall: the evidence behind a k-NN floor (``STROIDOK_INDEX_DENSE_LOWER_BOUND``).

For each query of a set, the dense leg exactly as the hybrid search sends it (the configured embedder,
``knn_k`` candidates) runs alone against a kept index; printed: the median and lowest top score, the
median and lowest k-th score, and the share of all candidate scores under the floor (a score under it
falls back to plain min-max in the engine, so a good floor leaves that share near 0).

    .venv/bin/python -m benchmarks.dense_scores --alias ev16-constr-e5 \
        --queries evaluation/sets/construction/queries.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from service.engine.gateway import build_client
from service.engine.index_meta import read_embedder_meta
from service.search.dsl.build import build_knn_leg, build_search_body
from service.search.vectors import embedder_for
from service.settings import Settings


def leg_scores(settings: Settings, alias: str, texts: list[str]) -> list[list[float]]:
    """The dense leg's candidate scores, best first, per query, embedded as the search service embeds them
    (the embedder the index records, with its fitted statistics)."""
    client = build_client(settings)
    index_settings = settings.index.model_copy(update={"alias": alias})
    embedder = embedder_for(read_embedder_meta(client, index_settings), None, settings)
    k = settings.search.knn_k
    out = []
    for text in texts:
        leg = build_knn_leg([float(x) for x in embedder.embed_query(text)], k)
        hits = client.search(index=alias, body=build_search_body(leg, k), params={"_source": "false"})
        out.append([h["_score"] for h in hits["hits"]["hits"]])
    return out


def summary(scores: list[list[float]], floor: float) -> str:
    tops, lasts = [s[0] for s in scores if s], [s[-1] for s in scores if s]
    every = [x for s in scores for x in s]
    under = sum(x < floor for x in every) / max(len(every), 1)
    return (f"{len(scores)} queries, {len(every)} scores: top median {statistics.median(tops):.3f} "
            f"min {min(tops):.3f}; k-th median {statistics.median(lasts):.3f} min {min(lasts):.3f}; "
            f"under the floor {floor}: {under:.2%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alias", required=True)
    parser.add_argument("--queries", type=Path, required=True, help="JSONL with a 'text' per line")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--floor", type=float, help="default: STROIDOK_INDEX_DENSE_LOWER_BOUND as configured")
    args = parser.parse_args()
    settings = Settings()
    lines = args.queries.read_text(encoding="utf-8").splitlines()[: args.limit]
    texts = [json.loads(line)["text"] for line in lines if line.strip()]
    floor = args.floor if args.floor is not None else settings.index.dense_lower_bound
    print(f"{args.alias}: "
          f"{summary(leg_scores(settings, args.alias, texts), floor if floor is not None else 0.0)}")


if __name__ == "__main__":
    main()
