"""Issue 39 probe: would dense candidates per document close the "answering chunk not among the candidates"
misses? After the shipped request, each result's document gets its ``D`` chunks nearest to the query (a k-NN
query with the document as its filter: exact search over that document's chunks; the text leg as highlight
query so the passage chooser gets its marks), added to the collapse's candidates before the passages are
chosen. A second engine request per page; measured here through `stroidok eval`, not shipped.

    python evaluation/experiments/dense_candidates.py 2 --documents … --queries evaluation/sets/construction/clauses.jsonl \
        --answers evaluation/sets/construction/clauses.jsonl --mode hybrid --index r41 --reuse
"""

from __future__ import annotations

import sys
from typing import Any

from service.search.dsl.build import build_passage_highlight, build_similarity_field
from service.engine.fields import CHUNK_FIELDS
from service.search.tools.search_documents import Searcher

DENSE = int(sys.argv[1])
ADDED: list[int] = []  # per chunk added: 1 when the engine marked its terms (the highlight query ran)
shipped = Searcher.execute


def with_dense_candidates(self: Searcher, plan: Any) -> dict[str, Any]:
    raw = shipped(self, plan)
    hits = raw["hits"]["hits"]
    if plan.vector is None or not hits or DENSE <= 0:
        return raw
    highlight = {**build_passage_highlight(), "highlight_query": plan.legs[0]}
    searches: list[dict[str, Any]] = []
    for hit in hits:
        doc = {"bool": {"filter": [plan.scope, {"term": {"doc_id": hit["_source"]["doc_id"]}}]}}
        body = {"size": DENSE, "_source": {"includes": CHUNK_FIELDS},
                "query": {"knn": {"embedding": {"vector": plan.vector, "k": DENSE, "filter": doc}}},
                "highlight": highlight, "script_fields": build_similarity_field(plan.vector)}
        searches += [{"index": self.settings.index.alias}, body]
    answers = self.client.msearch(body=searches)["responses"]
    for hit, answer in zip(hits, answers, strict=True):
        chunks = hit["inner_hits"]["chunks"]["hits"]["hits"]
        seen = {c["_source"].get("chunk_id") for c in chunks}
        floor = min((c.get("_score") or 0.0 for c in chunks), default=0.0)
        for extra in answer.get("hits", {}).get("hits", []):
            if extra["_source"].get("chunk_id") not in seen:
                extra["_score"] = floor  # no lexical score of its own: it competes by similarity and passage
                chunks.append(extra)
                ADDED.append(int("highlight" in extra))
    return raw


Searcher.execute = with_dense_candidates  # type: ignore[method-assign]

if __name__ == "__main__":
    from service.cli.commands import main

    sys.argv = ["stroidok", "eval", *sys.argv[2:]]
    try:
        main()
    finally:
        print(f"dense candidates added: {len(ADDED)}, with marks: {sum(ADDED)}", file=sys.stderr)
