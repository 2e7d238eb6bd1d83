"""Clause units ranked by the engine, as the passages' candidates: a prototype measured before building it.

From an index kept by ``stroidok eval --documents … --index NAME --keep``, every body chunk is cut into units
at its clause changes (``spans``), long clauses into pieces of at most ``--unit-chars`` at line, sentence or
word ends, repeats of the chunks' overlap dropped; the units go into a side index (the product's analyzers
copied, a navec vector of «section. unit» each). Then, over the clause set:

* ``rank``: where the unit holding the judged quote ranks among its document's units, by the product's hybrid
  legs restricted to that document (``--pipeline``: the search pipeline that fuses them);
* ``product``: every default search's candidates replaced by each document's best ``--per-doc`` units (BM25 on
  the unit text), then chosen and sized by the product's own mapping: answer@1 / answer@5 as ``stroidok eval``
  reports them, against the unchanged product on the same requests.

    python evaluation/experiments/clause_units.py --index r37 --units units37 --build
    python evaluation/experiments/clause_units.py --index r37 --units units37 --pipeline r37-hybrid

Results: docs/relevance.md («Clause units in the engine»).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

REPO = Path(__file__).resolve().parents[2]
CLAUSES = REPO / "evaluation/sets/construction/clauses.jsonl"


def pieces(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """``text[start:end]`` in pieces of at most ``size``, cut at a line, sentence or word end."""
    out = []
    while end - start > size:
        cut = max(text.rfind("\n", start + size // 3, start + size), text.rfind(". ", start + size // 3, start + size))
        cut = cut if cut >= 0 else text.rfind(" ", start + size // 3, start + size)
        cut = cut if cut >= 0 else start + size - 1
        out.append((start, cut + 1))
        start = cut + 1
    return [*out, (start, end)]


def units_of(source: dict[str, Any], size: int) -> list[dict[str, Any]]:
    """A chunk's units: one per clause in effect (its ``spans``), long ones in pieces."""
    text = source["text"]
    spans = [s for i, s in enumerate(source.get("spans") or [{"o": 0, "p": None, "c": None}])
             if i == 0 or s["c"] != source["spans"][i - 1]["c"]]
    units = []
    for i, span in enumerate(spans):
        end = spans[i + 1]["o"] if i + 1 < len(spans) else len(text)
        for a, b in pieces(text, span["o"], end, size):
            if len(body := text[a:b].strip()) >= 15:
                units.append({"doc_id": source["doc_id"], "chunk_index": source["chunk_index"], "text": body,
                              "clause": span["c"], "page": span["p"], "section_title": source.get("section_title")})
    return units


def build(client: OpenSearch, alias: str, target: str, size: int) -> int:
    from service.embedders.factory import build_embedder
    from service.engine.gateway import bulk_outcomes, scan
    from service.engine.index_meta import load_embedder_state
    from service.settings import Settings

    settings = Settings()
    embedder = build_embedder(settings.embedder)
    load_embedder_state(client, embedder, settings.index)
    physical = next(iter(client.indices.get_alias(name=alias)))
    analysis = client.indices.get_settings(index=physical)[physical]["settings"]["index"]["analysis"]
    fields = client.indices.get_mapping(index=physical)[physical]["mappings"]["properties"]
    client.indices.delete(index=target, ignore=[404])
    client.indices.create(index=target, body={
        "settings": {"index": {"analysis": analysis, "knn": True, "number_of_shards": 1, "number_of_replicas": 0}},
        "mappings": {"properties": {**{f: fields[f] for f in ("text", "section_title", "embedding")},
                                    "doc_id": {"type": "keyword"}, "clause": {"type": "keyword"},
                                    "page": {"type": "integer"}, "chunk_index": {"type": "integer"}}}})
    seen: set[tuple[str, str]] = set()
    units = []
    query = {"query": {"bool": {"must_not": {"exists": {"field": "role"}}}},
             "_source": ["doc_id", "chunk_index", "text", "spans", "section_title"]}
    for hit in scan(client, index=alias, query=query, size=500):
        for unit in units_of(hit["_source"], size):
            key = (unit["doc_id"], re.sub(r"\s+", " ", unit["text"]))
            if key not in seen:
                seen.add(key)
                units.append(unit)
    for at in range(0, len(units), 2000):
        batch = units[at:at + 2000]
        vectors = embedder.embed_documents([f"{u['section_title'] or ''}. {u['text']}" for u in batch])
        refused = [o for o in bulk_outcomes(client, ({"_index": target,
                                                     "_source": {**u, **({"embedding": [float(x) for x in v]}
                                                                        if any(v) else {})}}
                                                    for u, v in zip(batch, vectors, strict=True)),
                                            request_timeout=120) if not o.ok]
        if refused:
            raise SystemExit(f"{len(refused)} units refused: {refused[0].reason}")
    client.indices.refresh(index=target)
    return len(units)


def measure(alias: str, units: str, pipeline: str, per_doc: int) -> None:
    os.environ.update(STROIDOK_INDEX_ALIAS=alias, STROIDOK_SEARCH_CACHE_TTL_S="0",
                      STROIDOK_SEARCH_RATE_LIMIT="100000/minute")
    from evaluation.answers import AnswerTally, Judged, contains_answer
    from evaluation.evaluate import response_size, shown_passages
    from ingest.index import load_registry
    from service.embedders.factory import build_embedder
    from service.engine.gateway import build_client
    from service.search.answer.budget import fit_budget
    from service.search.dsl.build import build_hybrid_body, build_passage_highlight
    from service.search.service import SearchService, validate_request
    from service.caller.principal import Principal
    from service.settings import Settings

    settings = Settings()
    client = build_client(settings)
    service = SearchService(settings, client, build_embedder(settings.embedder))
    principal = Principal.of("experiment", [])
    by_name = {Path(e["file_path"]).stem: d for d, e in load_registry(client, settings.index).items()}
    ranks: list[int | None] = []
    product, prototype = AnswerTally(), AnswerTally()
    for row in map(json.loads, CLAUSES.read_text(encoding="utf-8").splitlines()):
        judged = Judged((row["quote"],), row["doc"], row["clause"], row["page"])
        request = validate_request({"query": row["text"]})
        answered = service.searcher.answer(request, principal, service.coverage.get(principal.groups))
        plan, parsed, raw = answered.planned.plan, answered.planned.parsed, answered.raw
        body = build_hybrid_body(list(plan.legs), 20, {"term": {"doc_id": by_name[row["doc"].replace("/", "_")]}})
        body |= {"_source": ["clause"], "highlight": build_passage_highlight()}
        hits = client.search(index=units, body=body, params={"search_pipeline": pipeline})["hits"]["hits"]
        texts = [h.get("highlight", {}).get("text", [""])[0].replace("\ue000", "").replace("\ue001", "") for h in hits]
        ranks.append(next((i for i, t in enumerate(texts) if contains_answer(t, [row["quote"]])), None))
        for tally, swap in ((product, False), (prototype, True)):
            answer = json.loads(json.dumps(raw))
            for hit in answer["hits"]["hits"] if swap else []:
                got = client.search(index=units, body={
                    "size": per_doc, "highlight": build_passage_highlight(),
                    "_source": ["clause", "page", "chunk_index", "section_title"],
                    "query": {"bool": {"filter": [{"term": {"doc_id": hit["_source"]["doc_id"]}}],
                                       "should": [{"match": {"text": parsed[0].plain}}]}}})["hits"]["hits"]
                if got:
                    hit["inner_hits"]["chunks"]["hits"]["hits"] = [{
                        "_id": g["_id"], "_score": g["_score"], "highlight": g.get("highlight", {}),
                        "_source": {"chunk_id": g["_id"], "chunk_index": g["_source"]["chunk_index"],
                                    "page_number": g["_source"]["page"], "clause": g["_source"]["clause"],
                                    "section_title": g["_source"].get("section_title"),
                                    "spans": [{"o": 0, "p": g["_source"]["page"], "c": g["_source"]["clause"]}]}}
                        for g in got]
            response = fit_budget(service.searcher.map(request, parsed[0], plan, answer),
                                  settings.search.response_budget_chars, settings.search.answer_chars)
            names = {by_name[row["doc"].replace("/", "_")]: row["doc"]}
            tally.add(shown_passages(response, names), judged, response_size(response))
    n = len(ranks)
    print("judged unit's rank in its document:",
          {k: round(sum(1 for r in ranks if r is not None and r < k) / n, 3) for k in (1, 3, 5, 8, 15)})
    print("product:  ", product.metrics())
    print("prototype:", prototype.metrics())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", required=True, help="a kept eval index (alias) of the 361 documents")
    parser.add_argument("--units", required=True, help="the side index of units (built with --build)")
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--unit-chars", type=int, default=700)
    parser.add_argument("--pipeline", default="", help="search pipeline fusing the legs (default: the index's hybrid)")
    parser.add_argument("--per-doc", type=int, default=8)
    args = parser.parse_args()
    from service.engine.gateway import build_client
    from service.settings import Settings

    os.environ["STROIDOK_INDEX_ALIAS"] = args.index
    if args.build:
        print("units:", build(build_client(Settings()), args.index, args.units, args.unit_chars))
    measure(args.index, args.units, args.pipeline or f"{args.index}-hybrid", args.per_doc)


if __name__ == "__main__":
    main()
