"""Gradient-boosted trees (LightGBM's LambdaRank) in place of the passage ranker's linear weights: the same window
features, the same captures and folds as ``evaluation.passage_fit``, the held-out folds replayed through the
product's own passage choice with the trees scoring each normative document's windows.

Folds split by question (a question asked several ways is never both fitted and reported on); sets named in
``--report-only`` are never fitted on. ``--by-document``: the heading questions' folds split by document instead,
so a document's headings are never both fitted and reported on.

    pip install -e ".[experiments]"   # lightgbm: the experiment's own dependency, not the product's
    python -m evaluation.experiments.ranker_trees dev-user=/tmp/cap/dev-user.pkl … headings=/tmp/cap/headings.pkl \
        [--report-only tables] [--rounds 200] [--leaves 7]
"""

from __future__ import annotations

import argparse
import math
import pickle
import time
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np

import service.search.answer.map as mapping
from evaluation.capture import Captured
from evaluation.passage_fit import Group, answered, folding, groups_of
from service.search.answer.passages import has_value
from service.search.answer.ranker import FEATURES, ChunkContext, Model, non_overlapping


def train(groups: Sequence[Group], rounds: int, leaves: int) -> Any:
    """A LambdaRank booster over the groups' windows, every set weighing alike."""
    import lightgbm as lgb

    per_set: dict[str, int] = {}
    for g in groups:
        per_set[g.set_name] = per_set.get(g.set_name, 0) + 1
    x = np.vstack([g.features for g in groups])
    y = np.concatenate([g.labels.astype(int) for g in groups])
    # one weight a window, its group's: every set weighs alike, however many questions it has
    weight = np.concatenate([np.full(len(g.labels), len(groups) / (per_set[g.set_name] * len(per_set)))
                             for g in groups])
    data = lgb.Dataset(x, y, group=[len(g.labels) for g in groups], weight=weight, feature_name=list(FEATURES))
    params = {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": 0.05, "min_data_in_leaf": 20,
              "lambdarank_truncation_level": 5, "eval_at": [1], "verbose": -1, "num_threads": 1, "seed": 7}
    return lgb.train(params, data, num_boost_round=rounds)


def scored(booster: Any, ctx: ChunkContext, windows: list[tuple[tuple[int, int], list[float]]]) -> list[float]:
    """The trees' score of each window, whether it states a value read off its own text."""
    value = FEATURES.index("value")
    rows = []
    for (first, last), features in windows:
        row = list(features)
        row[value] = float(has_value(ctx.chunk.text[ctx.units[first][0]:ctx.units[last][1]]))
        rows.append(row)
    return [float(s) for s in booster.predict(np.asarray(rows, dtype=float), num_threads=1)]


@contextmanager
def trees_choose(booster: Any) -> Iterator[None]:
    """The product's passage choice with the trees scoring windows (ties: the earlier window)."""
    shipped = mapping.best_window, mapping.best_windows

    def best_window(ctx: ChunkContext, windows: Any, weights: dict[str, float]) -> tuple[float, tuple[int, int]]:
        scores = scored(booster, ctx, windows)
        return max(zip(scores, (w for w, _ in windows), strict=True), key=lambda sw: (sw[0], -sw[1][0]))

    def best_windows(ctx: ChunkContext, windows: Any, weights: dict[str, float],
                     count: int) -> list[tuple[float, tuple[int, int]]]:
        return non_overlapping(list(zip(scored(booster, ctx, windows), (w for w, _ in windows), strict=True)), count)

    mapping.best_window, mapping.best_windows = best_window, best_windows  # type: ignore[assignment]
    try:
        yield
    finally:
        mapping.best_window, mapping.best_windows = shipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+", help="name=path of a capture (name=a.pkl+b.pkl: one set)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--leaves", type=int, default=7)
    parser.add_argument("--report-only", default="")
    parser.add_argument("--by-document", default="", help="sets whose folds split by document")
    args = parser.parse_args()
    from service.embedders.factory import build_embedder
    from service.settings import Settings

    embedder = build_embedder(Settings().embedder)
    sets = {name: [row for path in paths.split("+") for row in pickle.loads(Path(path).read_bytes())]
            for name, paths in (item.split("=", 1) for item in args.captures)}
    fold = folding(sets, set(args.by_document.split(",")) - {""}, args.folds)

    unfitted = set(args.report_only.split(",")) - {""}
    groups = [g for name, rows in sets.items() if name not in unfitted for row in rows
              for g in groups_of(name, row, embedder)]
    print(f"{len(groups)} documents with an answering window, {sum(len(g.labels) for g in groups)} windows")
    held: dict[str, list[tuple[list[Captured], Any]]] = {name: [] for name in sets}
    fit_s = 0.0
    for k in range(args.folds):
        began = time.perf_counter()
        booster = train([g for g in groups if fold(g) != k], args.rounds, args.leaves)
        fit_s += time.perf_counter() - began
        for name, rows in sets.items():
            held[name].append(([r for r in rows if fold(r) == k], booster))
    print(f"fit: {fit_s / args.folds:.1f} s a fold; {args.rounds} rounds of {args.leaves} leaves")
    print(f"{'set':16s} {'shipped a@1 a@5 cited':>24s} | {'trees, held-out folds':>22s} | replay s (shipped/trees)")
    for name, rows in sets.items():
        began = time.perf_counter()
        before = answered(rows, embedder, None)
        shipped_s = time.perf_counter() - began
        tallies, trees_s = [], 0.0
        for part, booster in held[name]:
            if part:
                began = time.perf_counter()
                with trees_choose(booster):
                    tallies.append(answered(part, embedder, Model({n: 0.0 for n in FEATURES})) | {"n": len(part)})
                trees_s += time.perf_counter() - began
        n = sum(t["n"] for t in tallies)
        after = {k: sum(t[k] * t["n"] for t in tallies) / n for k in ("answer@1", "answer@5", "cited@5")}
        print(f"{name:16s} {before['answer@1']:.3f} {before['answer@5']:.3f} {before['cited@5']:.3f}        "
              f"| {after['answer@1']:.3f} {after['answer@5']:.3f} {after['cited@5']:.3f}        "
              f"| {shipped_s:.1f} / {trees_s:.1f}")
    if not math.isnan(fit_s):
        importance = train(groups, args.rounds, args.leaves).feature_importance("gain")
        print("gain by feature (fit on everything):",
              {n: round(float(v), 1) for n, v in zip(FEATURES, importance, strict=True)})


if __name__ == "__main__":
    main()
