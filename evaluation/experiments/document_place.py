"""A document's place from all its evidence, replayed on captured calls (``evaluation.capture --read-whole 5``:
each call's first five documents read whole, and every document's best chunks as the chunks request gives them).

The first ``--top`` documents are re-ordered by a linear score of their evidence (``FEATURES``: the fused score of the
best chunk, the next best chunks' scores, the share of the query's terms its chunks hold, its title's share, its front
matter), fit on folds by question (softmax likelihood of the judged document), and each call is replayed with
its new first document read whole. Prints per set: the judged document first, answer@1 / answer@5, as shipped
and with the fitted order on the held-out folds; then the weights fit on everything.

    python -m evaluation.experiments.document_place dev-user=/tmp/cap/dev-user.pkl dev-agent=… ours-user=…
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import evaluation.passage_fit as fit
from evaluation.capture import Captured
from service.embedders.base import Embedder
from service.search.answer.passages import unmark
from service.search.dsl.sections import ASIDE
from service.search.answer.words import term_key


#: the features of a document, in the order of ``WEIGHTS``: its fused score (the best chunk's, as the engine ranks),
#: its best, second and third chunks' scores over the answer's best, the share of the query's terms (those marked in
#: any of the documents) that its chunks hold, the share its title holds, and the share of its best three chunks
#: that are front matter (foreword, references, abbreviations, a correction sheet, bibliography)
FEATURES = ("fused", "best", "second", "third", "covered", "title", "aside")

_WORD_RE = re.compile(r"\w+")


def marked_keys(chunk: Mapping[str, Any]) -> set[str]:
    """The term keys the engine marked in a chunk's highlighted text."""
    texts = chunk.get("highlight", {}).get("text")
    return set(unmark(str(texts[0])).keys) if texts else set()


def document_features(hits: Sequence[Mapping[str, Any]], evidence: Mapping[str, Sequence[Mapping[str, Any]]],
                      naming: frozenset[str] = frozenset(), aside: frozenset[str] = ASIDE) -> list[list[float]]:
    """Each hit's features (``FEATURES`` order), read against the other hits': ``evidence`` holds each
    document's best chunks by document id (the chunks request, best first)."""
    chunks = [list(evidence.get(str(h["_source"].get("doc_id")), [])) for h in hits]
    scores = [[float(c.get("_score") or 0.0) for c in group[:3]] for group in chunks]
    top = max((s[0] for s in scores if s), default=0.0) or 1.0
    keys = [set().union(*(marked_keys(c) for c in group)) - naming for group in chunks]
    every = set().union(*keys) or {""}
    titles = [{term_key(w) for w in _WORD_RE.findall(str(h["_source"].get("title") or ""))} for h in hits]
    out = []
    for hit, group, s, k, title in zip(hits, chunks, scores, keys, titles, strict=True):
        padded = [*s, 0.0, 0.0, 0.0][:3]
        front = sum(1 for c in group[:3] if c.get("_source", {}).get("section_kind") in aside) / max(1, len(group[:3]))
        out.append([float(hit.get("_score") or 0.0), *(v / top for v in padded), len(k) / len(every),
                    len(every & title) / len(every), front])
    return out


def reordered(hits: Sequence[dict[str, Any]], evidence: Mapping[str, Sequence[Mapping[str, Any]]],
              naming: frozenset[str], weights: Mapping[str, float], top: int,
              aside: frozenset[str] = ASIDE) -> list[dict[str, Any]]:
    """``hits`` with their first ``top`` ordered by the weighted features (ties: the engine's order); the rest
    after them as they came."""
    head = list(hits[:top])
    features = document_features(head, evidence, naming, aside)
    vector = [weights.get(name, 0.0) for name in FEATURES]
    scores = [sum(w * f for w, f in zip(vector, row, strict=True)) for row in features]
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in order] + list(hits[top:])


def features_of(row: Captured, top: int) -> np.ndarray:
    """The features of a captured call's first ``top`` documents."""
    return np.asarray(document_features(row.hits[:top], row.evidence, fit.naming_of(row), aside_of(row)), dtype=float)


def aside_of(row: Captured) -> frozenset[str]:
    """The front-matter kinds the call weighed down."""
    return fit.aside_of(row)


def replayed(row: Captured, weights: dict[str, float] | None, top: int) -> Captured:
    """The call as it would have run with its first ``top`` documents ordered by ``weights`` (None: as shipped)."""
    hits = row.hits if weights is None else reordered(row.hits, row.evidence, fit.naming_of(row), weights, top,
                                                      aside_of(row))
    first = str(hits[0]["_source"]["doc_id"]) if hits else ""
    whole = {first: row.wholes[first]} if first in row.wholes else {}
    return dataclasses.replace(row, hits=hits, whole=whole, chunks=row.evidence)


def first_right(rows: Sequence[Captured]) -> float:
    """The share of calls whose first document is the judged one."""
    return sum(1 for r in rows if r.hits and str(r.hits[0]["_source"]["doc_id"]) == r.right) / max(1, len(rows))


def measured(rows: Sequence[Captured], embedder: Embedder, weights: dict[str, float] | None,
             top: int) -> dict[str, Any]:
    """doc@1, answer@1, answer@5 of ``rows`` replayed."""
    again = [replayed(r, weights, top) for r in rows]
    return {"doc@1": first_right(again), **fit.answered(again, embedder, None), "n": len(rows)}


def groups(name: str, rows: Sequence[Captured], top: int) -> list[fit.Group]:
    """One group a call whose judged document is among its first ``top``."""
    out = []
    for row in rows:
        ids = [str(h["_source"]["doc_id"]) for h in row.hits[:top]]
        if row.right in ids and len(ids) > 1:
            labels = np.asarray([i == row.right for i in ids])
            out.append(fit.Group(name, row.query_id, features_of(row, top), labels))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+", help="name=path of a capture (name=a.pkl+b.pkl: one set)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--drop", default="", help="comma-separated features left out")
    parser.add_argument("--report-only", default="", help="comma-separated sets measured, never fitted on (with the "
                        "weights fit on every other set)")
    args = parser.parse_args()
    from service.embedders.factory import build_embedder
    from service.settings import Settings

    embedder = build_embedder(Settings().embedder)
    sets = {name: [row for path in paths.split("+") for row in pickle.loads(Path(path).read_bytes())]
            for name, paths in (item.split("=", 1) for item in args.captures)}
    drop = {d for d in args.drop.split(",") if d}
    names = [f for f in FEATURES if f not in drop]
    keep = [FEATURES.index(f) for f in names]
    unfitted = {n for n in args.report_only.split(",") if n}
    every = [dataclasses.replace(g, features=g.features[:, keep])
             for name, rows in sets.items() if name not in unfitted for g in groups(name, rows, args.top)]

    def fitted(part: Sequence[fit.Group]) -> dict[str, float]:
        weights = fit.fit(part, args.l2, names=names)
        return {f: weights.get(f, 0.0) for f in FEATURES}

    folds = [fitted([g for g in every if fit.fold_of(g.query_id, args.folds) != k]) for k in range(args.folds)]
    final = fitted(every)
    print(f"{'set':12s} {'shipped doc@1 a@1 a@5':>24s} | {'held-out doc@1 a@1 a@5':>24s}")
    for name, rows in sets.items():
        before = measured(rows, embedder, None, args.top)
        if name in unfitted:
            after = measured(rows, embedder, final, args.top)
            print(f"{name:12s} {before['doc@1']:.3f} {before['answer@1']:.3f} {before['answer@5']:.3f}"
                  f"          | {after['doc@1']:.3f} {after['answer@1']:.3f} {after['answer@5']:.3f} (never fitted on)",
                  flush=True)
            continue
        parts = [measured([r for r in rows if fit.fold_of(r.query_id, args.folds) == k], embedder, w, args.top)
                 for k, w in enumerate(folds)]
        n = sum(p["n"] for p in parts)
        after = {k: sum(p[k] * p["n"] for p in parts if p["n"]) / n for k in ("doc@1", "answer@1", "answer@5")}
        print(f"{name:12s} {before['doc@1']:.3f} {before['answer@1']:.3f} {before['answer@5']:.3f}"
              f"          | {after['doc@1']:.3f} {after['answer@1']:.3f} {after['answer@5']:.3f}", flush=True)
    print("weights fit on everything:", {k: round(v, 3) for k, v in final.items()})


if __name__ == "__main__":
    main()
