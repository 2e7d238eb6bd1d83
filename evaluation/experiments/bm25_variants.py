"""BM25 variants measured on an index kept by ``stroidok eval --keep`` (fulltext leg only, one chunk per
document, nDCG@10 / Recall@5 / MRR@10 on a BEIR qrels file).

    python evaluation/experiments/bm25_variants.py --index ev-dist --beir ../shared/data/tydiqa_ru/derived
    python evaluation/experiments/bm25_variants.py --index ev-dist --beir ... --similarity 1.6,0.75 --only product

Variants: the product's query (``build_text_query``), the pre-0.2 phrase-or-terms OR query, quoted phrases as
a bonus, whole-question proximity bonus, shingle bonus, question words dropped. ``--similarity k1,b`` closes
the index, sets BM25 k1/b, reopens it, measures, and restores 1.2/0.75.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import ir_measures
from ir_measures import RR, R, nDCG
from opensearchpy import OpenSearch

from evaluation.evaluate import load_beir
from ingest.index import load_registry
from service.search.dsl.operators import build_bm25_leg, build_phrase, build_text_query
from service.search.request.parse import parse_query
from service.settings import IndexSettings

Query = Callable[[str], dict[str, Any]]
QUESTION_WORDS = frozenset(
    "какой какая какое какие каком какому каким какими каких какого какую кто кем кому кого что чем чему чего "
    "когда где куда откуда сколько почему зачем как ли является являлся являлась были был была было называется "
    "называют".split())


def phrase_or_terms(text: str) -> dict[str, Any]:
    """The OR query before: quoted parts as phrase clauses beside the other words."""
    parsed = parse_query(text)
    parts = [build_phrase(p) for p in parsed.phrases]
    if parsed.terms:
        parts.append(build_bm25_leg(parsed.terms, "OR"))
    return parts[0] if len(parts) == 1 else {"bool": {"should": parts, "minimum_should_match": 1}}


def variants() -> Iterator[tuple[str, Query]]:
    yield "product", lambda t: build_text_query(parse_query(t), "OR")
    yield "phrase-or-terms", phrase_or_terms
    yield "words only", lambda t: build_bm25_leg(parse_query(t).plain, "OR")
    for slop in (2, 10):
        yield f"question proximity slop {slop}", lambda t, s=slop: {"bool": {
            "must": build_bm25_leg(t, "OR"), "should": [{"match_phrase": {"text": {"query": t, "slop": s}}}]}}
    for boost in (0.2, 1.0):
        yield f"shingle bonus {boost}", lambda t, b=boost: {"bool": {
            "must": build_bm25_leg(t, "OR"), "should": [{"match": {"text.suggest": {"query": t, "boost": b}}}]}}
    yield "question words dropped", lambda t: build_bm25_leg(
        " ".join(w for w in re.findall(r"\w[\w-]*", t.replace("\u0301", "").replace("\u0300", ""))
                 if w.lower() not in QUESTION_WORDS) or t, "OR")


def eval_ids(client: OpenSearch, alias: str) -> dict[str, str]:
    """Engine doc_id → eval id, from the registry the eval run wrote."""
    return {doc_id: entry["content_hash"] for doc_id, entry in load_registry(client, IndexSettings(alias=alias)).items()}


def measure(client: OpenSearch, alias: str, ids: dict[str, str], queries: dict[str, str],
            qrels: list[ir_measures.Qrel], query: Query) -> dict[str, float]:
    def top(item: tuple[str, str]) -> list[ir_measures.ScoredDoc]:
        qid, text = item
        body = {"size": 10, "query": query(text[:500]), "collapse": {"field": "doc_id"}, "_source": False,
                "fields": ["doc_id"]}
        hits = client.search(index=alias, body=body)["hits"]["hits"]
        return [ir_measures.ScoredDoc(qid, ids[h["fields"]["doc_id"][0]], 10.0 - i) for i, h in enumerate(hits)]

    with ThreadPoolExecutor(2) as pool:
        run = [d for docs in pool.map(top, queries.items()) for d in docs]
    return {str(k): round(v, 4) for k, v in ir_measures.calc_aggregate([nDCG @ 10, R @ 5, RR @ 10], qrels, run).items()}


def set_similarity(client: OpenSearch, alias: str, k1: float, b: float) -> None:
    index = next(iter(client.indices.get_alias(name=alias)))
    client.indices.close(index=index)
    client.indices.put_settings(index=index, body={"index.similarity.default": {"type": "BM25", "k1": k1, "b": b}})
    client.indices.open(index=index, wait_for_active_shards=1)
    client.cluster.health(index=index, wait_for_status="green")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", required=True)
    parser.add_argument("--beir", type=Path, required=True, help="folder with corpus.jsonl, queries.jsonl, qrels.tsv")
    parser.add_argument("--url", default="http://127.0.0.1:9200")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--similarity", nargs="*", default=[], help="k1,b pairs")
    args = parser.parse_args()
    client = OpenSearch(args.url, timeout=120)
    evalset = load_beir(args.beir / "corpus.jsonl", args.beir / "queries.jsonl", args.beir / "qrels.tsv")
    qrels = [ir_measures.Qrel(q, d, s) for q, docs in evalset.qrels.items() for d, s in docs.items()]
    ids = eval_ids(client, args.index)
    chosen = [(n, q) for n, q in variants() if not args.only or any(o in n for o in args.only)]
    for pair in args.similarity or [None]:
        if pair:
            set_similarity(client, args.index, *map(float, pair.split(",")))
        try:
            for name, query in chosen:
                print(f"{pair or 'k1 1.2, b 0.75':<16}{name:<32}", measure(client, args.index, ids,
                                                                          evalset.queries, qrels, query), flush=True)
        finally:
            if pair:
                set_similarity(client, args.index, 1.2, 0.75)


if __name__ == "__main__":
    main()
