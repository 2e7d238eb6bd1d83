"""The dense leg on its own, outside the engine: navec SIF options and fastText vectors trained on the corpus
itself (gensim), scored by exact cosine (one vector per passage, or per chunk with a document's best chunk).

    uv pip install -e ".[experiments]"    # gensim; not a product dependency
    python evaluation/experiments/static_vectors.py tydi --beir ../shared/data/tydiqa_ru/derived \
        [--distractors 20000 --documents ../shared/data/construction_ru/russian_construction_standards/metadata]
    python evaluation/experiments/static_vectors.py construction \
        --documents ../shared/data/construction_ru/russian_construction_standards/metadata

Prints nDCG@10 and success@5 per variant: navec SIF as the product builds it (title context), without the
title, SIF a 1e-2 / 1e-4, no lemma fallback, fastText alone, navec ⊕ fastText.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
from ir_measures import Success, nDCG

from evaluation.evaluate import (
    distractor_passages,
    load_beir,
    load_page_documents,
    load_qrels,
    prepared,
    read_jsonl,
)
from ingest.index import embedding_texts
from service.embedders.base import EmbedderIdentity
from service.embedders.navec import NavecEmbedder, tokenize
from service.settings import EmbedderSettings, IngestSettings, Settings


class SubwordVectors:
    """gensim fastText vectors behind navec's lookup interface (every word has a subword vector)."""

    def __init__(self, wv: Any) -> None:
        self.wv = wv

    def __contains__(self, word: str) -> bool:
        return True

    def __getitem__(self, word: str) -> np.ndarray:
        return self.wv[word]


def sif_vectors(texts: list[str], queries: list[str], vectors: Any = None, dim: int = 300,
                **options: Any) -> tuple[np.ndarray, np.ndarray]:
    embedder = NavecEmbedder(EmbedderSettings(**options))
    if vectors is not None:
        embedder.navec, embedder.identity = vectors, EmbedderIdentity("fasttext", "corpus", dim)
    embedder.fit(texts[:: max(1, len(texts) // 20000)])
    return embedder.embed_documents(texts), np.vstack([embedder.embed_query(q) for q in queries])


def train_fasttext(texts: list[str], dim: int = 100, epochs: int = 5) -> Any:
    from gensim.models import FastText

    sentences = [tokenize(t) for t in texts]
    model = FastText(vector_size=dim, window=5, min_count=3, epochs=epochs, workers=2, sg=0, bucket=200_000)
    model.build_vocab(sentences)
    model.train(sentences, total_examples=len(sentences), epochs=epochs)
    return model.wv


def score(name: str, owners: list[str], docs: np.ndarray, queries: dict[str, str], query_vectors: np.ndarray,
          qrels: list[ir_measures.Qrel]) -> None:
    """A document scores by its best chunk; the first 10 distinct documents are judged."""
    run = []
    for row, query_id in zip(query_vectors @ docs.T, queries):
        seen: set[str] = set()
        for j in np.argsort(-row)[:5000]:
            if owners[j] not in seen:
                seen.add(owners[j])
                run.append(ir_measures.ScoredDoc(query_id, owners[j], float(row[j])))
                if len(seen) == 10:
                    break
    result = ir_measures.calc_aggregate([nDCG @ 10, Success @ 5], qrels, run)
    print(f"{name:<34}", {str(k): round(v, 4) for k, v in result.items()}, flush=True)


def load(args: argparse.Namespace) -> tuple[list[str], list[str], list[str], dict[str, str], list[Any]]:
    """(owners, chunk texts with title context, chunk texts without, queries, qrels)."""
    if args.set == "tydi":
        evalset = load_beir(args.beir / "corpus.jsonl", args.beir / "queries.jsonl", args.beir / "qrels.tsv")
        queries, qrels, documents = evalset.queries, evalset.qrels, evalset.documents
        if args.distractors:
            documents = documents + distractor_passages(args.documents, args.distractors, 13)
    else:
        queries = {q["_id"]: q["text"] for q in read_jsonl(args.queries)}
        qrels, documents = load_qrels(args.qrels), load_page_documents(args.documents)
    settings = Settings()
    settings.ingest = settings.ingest.model_copy(update={"chunk_chars": args.chunk_chars,
                                                         "chunk_overlap": args.chunk_overlap})
    owners, with_title, bare = [], [], []
    for doc in documents:
        item = prepared(doc, settings)
        owners += [doc.id] * len(item.chunks)
        with_title += embedding_texts(item)
        bare += [c.text for c in item.chunks]
    return owners, with_title, bare, queries, [ir_measures.Qrel(q, d, s) for q, ds in qrels.items()
                                               for d, s in ds.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", choices=["tydi", "construction"])
    parser.add_argument("--beir", type=Path)
    parser.add_argument("--documents", type=Path, help="page-level JSON folder (construction set, distractors)")
    parser.add_argument("--distractors", type=int, default=0)
    parser.add_argument("--chunk-chars", type=int, default=IngestSettings().chunk_chars)
    parser.add_argument("--chunk-overlap", type=int, default=IngestSettings().chunk_overlap)
    parser.add_argument("--queries", type=Path, default=Path("evaluation/sets/construction/queries.jsonl"))
    parser.add_argument("--qrels", type=Path, default=Path("evaluation/sets/construction/qrels.tsv"))
    args = parser.parse_args()
    owners, texts, bare, queries, qrels = load(args)
    questions = list(queries.values())
    navec_docs, navec_queries = sif_vectors(texts, questions)
    score("navec SIF, title context", owners, navec_docs, queries, navec_queries, qrels)
    bare_docs, bare_queries = sif_vectors(bare, questions)
    score("navec SIF, chunk text only", owners, bare_docs, queries, bare_queries, qrels)
    for name, options in (("SIF a 1e-2", {"sif_a": 1e-2}), ("SIF a 1e-4", {"sif_a": 1e-4}),
                          ("no lemma fallback", {"lemma_fallback": False})):
        docs, query_vectors = sif_vectors(texts, questions, **options)
        score(name, owners, docs, queries, query_vectors, qrels)
    began = time.perf_counter()
    wv = train_fasttext(texts)
    print(f"fastText CBOW d100, 5 epochs: {time.perf_counter() - began:.0f} s, {len(wv.key_to_index)} words")
    ft_docs, ft_queries = sif_vectors(texts, questions, SubwordVectors(wv), 100)
    score("fastText (corpus) SIF", owners, ft_docs, queries, ft_queries, qrels)
    both = np.hstack([navec_docs, ft_docs]) / np.sqrt(2), np.hstack([navec_queries, ft_queries]) / np.sqrt(2)
    score("navec ⊕ fastText", owners, both[0], queries, both[1], qrels)


if __name__ == "__main__":
    main()
