"""Fit the passage ranker's weights on judged answers, on folds, and report the held-out folds per set.

Reads captures (``evaluation.capture``: what each default call's passages are chosen from). Every window of
every candidate chunk of a document in the answer is labelled by whether its passage holds the judged quote;
the weights maximise the likelihood of an answering window under a softmax over the document's windows
(L2-regularised, features standardised). Folds split by question, so a question asked several ways is
never both fitted and reported on. Prints, per set and fold-held-out, answer@1 / answer@5 / cited@5 with the
shipped weights and with the fitted ones, and the weights fit on everything (what ``service.search.answer.ranker``
ships).

    python -m evaluation.passage_fit dev-user=/tmp/cap/dev-user.pkl dev-agent=/tmp/cap/dev-agent.pkl … \
        tables=/tmp/cap/tables-user.pkl+/tmp/cap/tables-agent.pkl
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.answers import AnswerTally, Judged, contains_answer
from evaluation.capture import Captured
from evaluation.evaluate import eval_settings, shown_passages
from service.embedders.base import Embedder
from service.search.answer.budget import fit_budget
from service.search.answer.map import chunk_contexts, document_signals, document_windows, map_hits
from service.search.answer.models import Facets, Pagination, SearchMeta, SearchResponse, Suggestions, Timings
from service.search.answer.passages import passage_of
from service.search.answer.ranker import FEATURES, DocumentTerms, Model
from service.search.dsl.build import unweighted_keys
from service.search.dsl.sections import aside_for
from service.search.request.parse import parse_query
from service.settings import SearchSettings

Similarity = Callable[[list[str]], list[float]]


@dataclass(frozen=True)
class Group:
    """One document of one call: its windows' features and labels."""

    set_name: str
    query_id: str
    features: np.ndarray
    labels: np.ndarray


@functools.cache
def index_embedder(alias: str) -> Embedder:
    """The embedder the service searches ``alias`` with: the configured one with the statistics the index's ingest
    recorded (navec's word weights), as ``EmbedderResolver`` gives it to a call."""
    from service.embedders.factory import build_embedder
    from service.engine.gateway import build_client
    from service.search.vectors import EmbedderResolver
    from service.settings import Settings

    settings = eval_settings(Settings(), alias)
    return EmbedderResolver(build_client(settings), settings, build_embedder(settings.embedder)).current()[1]


def row_embedder(row: Captured, embedder: Embedder) -> Embedder:
    """The embedder a captured call's units are embedded with in a replay: its index's (a replay with another
    one's statistics chooses other passages than the call did); ``embedder`` for a capture that kept no alias."""
    alias = getattr(row, "alias", "")
    return index_embedder(alias) if alias else embedder


def similarity_for(embedder: Embedder, vector: list[float] | None) -> Similarity | None:
    """The unit similarity the service builds for a static embedder and this query vector."""
    if vector is None:
        return None
    query = np.asarray(vector, dtype=np.float32)
    return lambda texts: [float(v) for v in embedder.embed_documents(texts) @ query]


def fold_of(query_id: str, folds: int) -> int:
    """A question's fold: the same for every way of asking it."""
    return int(hashlib.sha1(query_id.encode()).hexdigest(), 16) % folds


def folding(sets: dict[str, list[Captured]], by_document: set[str], folds: int) -> Callable[[Any], int]:
    """The fold of a row or group: by its question, or by its judged document in the sets ``by_document`` names
    (questions the archive writes itself: a document's are never both fitted and reported on)."""
    documents = {row.query_id: str(row.judged.document) for name in by_document for row in sets.get(name, [])}
    return lambda item: fold_of(documents.get(item.query_id, item.query_id), folds)


def groups_of(set_name: str, row: Captured, embedder: Embedder) -> list[Group]:
    """The labelled windows of every document of a call that holds an answering window."""
    s = row.settings
    phrases = tuple(s["phrases"])
    candidates, weights, lexical, cosines = document_signals(row.hits, s["lexical_weight"],
                                                             similarity_for(row_embedder(row, embedder), row.vector),
                                                             s["dense_floor"], row.chunks, whole_of(row),
                                                             naming_of(row), aside_of(row))
    out = []
    for hit, group, w, lex, cos in zip(row.hits, candidates, weights, lexical, cosines, strict=True):
        if not hit["_source"].get("designation"):
            continue  # the learned weights choose a normative document's passages only (``ranker.Model``)
        contexts = chunk_contexts(group, cos, list(lex), w, s["passage_chars"])
        rows, labels = [], []
        per_chunk = document_windows(contexts, DocumentTerms.of(w), phrases)
        for ctx, (windows, occurrences) in zip(contexts, per_chunk, strict=True):
            for window, features in windows:
                passage = passage_of(ctx.chunk, ctx.spans, ctx.units, window, ctx.size, occurrences, phrases, 0.0)
                rows.append(features)
                labels.append(shows(passage.text, row.judged))
        if any(labels):
            out.append(Group(set_name, row.query_id, np.asarray(rows, dtype=float), np.asarray(labels, dtype=bool)))
    return out


def names_of(row: Captured) -> dict[str, str]:
    """The set's names of the call's documents (a capture made before they were kept: the judged one's alone)."""
    names: dict[str, str] = getattr(row, "names", None) or {}
    return names or ({row.right: row.judged.document} if row.right and row.judged.document else {})


def whole_of(row: Captured) -> dict[str, list[dict[str, Any]]]:
    """The documents a captured call read whole (none in a capture made before the first document was)."""
    return getattr(row, "whole", None) or {}


def naming_of(row: Captured) -> frozenset[str]:
    """The term keys no passage is chosen by in a captured call's phrasings, by today's rule
    (``build.unweighted_keys``)."""
    return unweighted_keys([parse_query(q) for q in [row.request["query"], *row.request.get("queries", [])]])


def aside_of(row: Captured) -> frozenset[str]:
    """The front-matter kinds a captured call weighs down, by today's rule (``sections.aside_for``)."""
    return aside_for([str(row.request["query"]), *row.request.get("queries", [])])


def cells_as_line(text: str) -> str:
    """A passage with a table row's cells joined as the text layer gives them (a judged row is one line)."""
    return text.replace(" | ", " ")


def shows(text: str, judged: Judged) -> bool:
    """Whether a passage holds the judged quote (a table row's, cells joined or not)."""
    return contains_answer(text, list(judged.answers)) or contains_answer(cells_as_line(text), list(judged.answers))


def fit(groups: Sequence[Group], l2: float = 0.01, steps: int = 400, rate: float = 0.5,
        names: Sequence[str] = ()) -> dict[str, float]:
    """Weights maximising the softmax likelihood of the answering windows of each group (full-batch gradient
    descent on standardised features, returned on the features' own scale)."""
    stacked = np.vstack([g.features for g in groups])
    mean, std = stacked.mean(axis=0), stacked.std(axis=0)
    std[std == 0] = 1.0
    xs = [(g.features - mean) / std for g in groups]
    per_set: dict[str, int] = {}
    for g in groups:
        per_set[g.set_name] = per_set.get(g.set_name, 0) + 1
    # every set counts alike, however many questions it has
    shares = [1.0 / (per_set[g.set_name] * len(per_set)) for g in groups]
    w = np.zeros(stacked.shape[1])
    for _ in range(steps):
        grad = l2 * w
        for x, g, share in zip(xs, groups, shares, strict=True):
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            q = p * g.labels
            q /= q.sum()
            grad += share * ((p - q) @ x)
        w -= rate * grad
    return dict(zip(names or FEATURES, (float(v) for v in w / std), strict=True))


def fit_model(groups: Sequence[Group], l2: float, drop: Sequence[str] = ()) -> Model:
    """Weights for normative documents, without the features ``drop`` names (their weight 0)."""
    keep = [i for i, name in enumerate(FEATURES) if name not in drop]
    names = [FEATURES[i] for i in keep]
    fitted = fit([Group(g.set_name, g.query_id, g.features[:, keep], g.labels) for g in groups], l2, names=names)
    return Model({name: fitted.get(name, 0.0) if name in names else 0.0 for name in FEATURES})


def replayed_response(row: Captured, embedder: Embedder, model: Model | None) -> SearchResponse:
    """A captured call's answer with passages chosen by ``model``, sized as a call's is."""
    s = row.settings
    search = SearchSettings()
    results = map_hits(row.hits, s["include_context"], s["max_chunks"], s["passage_chars"], s["lexical_weight"],
                       similarity_for(row_embedder(row, embedder), row.vector), s["phrases"], s["dense_floor"],
                       row.chunks, model, whole_of(row), naming_of(row), aside_of(row))
    meta = getattr(row, "meta", None)  # the call's own (a capture made before they were kept: a bare one)
    return fit_budget(SearchResponse(results=results, meta=meta.model_copy(deep=True) if meta else SearchMeta(
        query=str(row.request["query"]), total_results=len(results), route_used="hybrid", timings=Timings(),
        facets=Facets(), suggestions=Suggestions(),
        pagination=Pagination(page=1, limit=10, total_pages=1, has_more=False))),
        search.response_budget_chars, search.answer_chars)


def answered(rows: Sequence[Captured], embedder: Embedder, model: Model | None) -> dict[str, float]:
    """answer@1/@5 and cited@5 of ``rows`` with passages chosen by ``model``, the answer sized as a call's is."""
    tally = AnswerTally()
    for row in rows:
        response = replayed_response(row, embedder, model)
        shown = shown_passages(response, names_of(row))
        tally.add([dataclasses.replace(s, text=cells_as_line(s.text)) for s in shown], row.judged, 0)
    return tally.metrics()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+", help="name=path of a capture (name=a.pkl+b.pkl: one set)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--drop", default="", help="comma-separated features left out (ablation)")
    parser.add_argument("--report-only", default="", help="comma-separated sets measured but not fitted on")
    parser.add_argument("--by-document", default="", help="comma-separated sets whose folds split by document")
    args = parser.parse_args()
    from service.embedders.factory import build_embedder
    from service.settings import Settings

    embedder = build_embedder(Settings().embedder)
    drop = [name for name in args.drop.split(",") if name]
    # name=a.pkl+b.pkl: one set of several captures (a question asked two ways, folded together)
    sets = {name: [row for path in paths.split("+") for row in pickle.loads(Path(path).read_bytes())]
            for name, paths in (item.split("=", 1) for item in args.captures)}
    unfitted = set(args.report_only.split(",")) - {""}
    fold_of_item = folding(sets, set(args.by_document.split(",")) - {""}, args.folds)
    groups = [g for name, rows in sets.items() if name not in unfitted for row in rows
              for g in groups_of(name, row, embedder)]
    print(f"{len(groups)} documents with an answering window, {sum(len(g.labels) for g in groups)} windows")
    held: dict[str, list[tuple[list[Captured], Model]]] = {name: [] for name in sets}
    for fold in range(args.folds):
        weights = fit_model([g for g in groups if fold_of_item(g) != fold], args.l2, drop)
        for name, rows in sets.items():
            held[name].append(([r for r in rows if fold_of_item(r) == fold], weights))
    print(f"{'set':16s} {'shipped (in-sample) a@1 a@5 cited':>34s} | {'fitted, held-out folds':>24s}")
    for name, rows in sets.items():
        before = answered(rows, embedder, None)
        tallies = [answered(part, embedder, w) | {"n": len(part)} for part, w in held[name] if part]
        n = sum(t["n"] for t in tallies)
        after = {k: sum(t[k] * t["n"] for t in tallies) / n for k in ("answer@1", "answer@5", "cited@5")}
        print(f"{name:16s} {' ' * 16}{before['answer@1']:.3f} {before['answer@5']:.3f} {before['cited@5']:.3f}"
              f"  | {after['answer@1']:.3f} {after['answer@5']:.3f} {after['cited@5']:.3f}")
    final = fit_model(groups, args.l2, drop)
    print("weights fit on everything:", {k: round(v, 3) for k, v in final.normative.items()})


if __name__ == "__main__":
    main()
