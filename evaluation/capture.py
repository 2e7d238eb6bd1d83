"""Capture what a default call's passages are chosen from, question by question, for offline fitting.

Each question of a clause set is sent as a default call (the user's words or a set of phrasings) to a kept
index; what ``map_hits`` receives — the collapsed hits, each document's candidate chunks, the call's passage
settings and the query vector — is written with the judged answer to one pickle per set and way of asking.
``evaluation.passage_fit`` then re-chooses passages from these inputs without the engine.

    python -m evaluation.capture --alias normsnew --documents $D/russian_construction_standards/metadata \\
        --answers $D/dev_clause_set/clauses.jsonl [--phrasings …] --out /tmp/captures/dev-user.pkl
"""

from __future__ import annotations

import argparse
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import service.search.tools.search_documents as searching
from evaluation.answers import Judged, load_answers
from evaluation.evaluate import (
    KeptClauseSet,
    eval_settings,
    load_beir,
    load_phrasings,
    open_kept_clause_set,
    phrased_request,
    reuse_index,
)
from service.caller.principal import Principal
from service.embedders.base import Embedder
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search.answer.hits import chunks_by_document
from service.search.answer.models import SearchMeta, SearchResponse
from service.search.dsl.build import SearchPlan, build_chunks_request, build_document_chunks_request
from service.search.service import SearchService
from service.settings import Settings


@dataclass
class Captured:
    """One call's passage inputs and its judged answer."""

    query_id: str
    request: dict[str, Any]
    judged: Judged
    right: str | None  #: the engine doc_id of the judged document (None: not in the index)
    hits: list[dict[str, Any]] = field(default_factory=list)
    chunks: dict[str, list[dict[str, Any]]] | None = None
    #: the documents read whole: document id → every chunk of it that holds a query term
    whole: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    vector: list[float] | None = None
    #: the first documents read whole, each as the first would be (``--read-whole N``: a document's place replayed)
    wholes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: every document's best chunks by the chunks request (the first's too), with ``--read-whole``
    evidence: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: the set's name of each document of the answer (engine doc_id → eval id): a passage of an ``also`` document
    #: labelled with its clause answers in a replay as in the live call
    names: dict[str, str] = field(default_factory=dict)
    #: the alias the call searched: its embedder, with the statistics its ingest recorded, is the one a replay
    #: must embed the passages' units with (``passage_fit.row_embedder``)
    alias: str = ""
    #: the answer's meta as the call sized it (its facets, suggestions …): a replay sizes its answer with it
    meta: SearchMeta | None = None


def open_kept_passage_set(alias: str, corpus: Path, queries: Path, qrels: Path, answers: Path,
                          embedder: Embedder) -> tuple[KeptClauseSet, dict[str, str]]:
    """A BEIR passage set (TyDi, XQuAD) kept under ``alias`` by ``stroidok eval --keep``, with each
    question's judged passage."""
    settings = eval_settings(Settings(), alias)
    evalset = load_beir(corpus, queries, qrels)
    ids = reuse_index(evalset, settings, build_client(settings))
    if not ids:
        raise SystemExit(f"no kept eval index under {alias}")
    judged = load_answers(answers)
    asked = {q: text for q, text in evalset.queries.items() if q in judged}
    right = {q: next(iter(docs)) for q, docs in evalset.qrels.items() if docs}
    return KeptClauseSet(SearchService(settings, build_client(settings), embedder), ids, asked, judged), right


def open_table_questions(alias: str, questions: Path, agent: bool,
                         embedder: Embedder) -> tuple[KeptClauseSet, Path | None]:
    """The table-row questions (``evaluation/sets/tables/questions.jsonl``) on an index of their PDFs ingested under
    ``alias``, each judged by its row; ``agent``: asked in its phrasing (written to a temporary file)."""
    import json
    import tempfile

    from ingest.index import load_registry

    settings = eval_settings(Settings(), alias)
    client = build_client(settings)
    ids = {doc_id: Path(str(entry["file_path"])).name for doc_id, entry in load_registry(client,
                                                                                         settings.index).items()}
    rows = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = KeptClauseSet(SearchService(settings, client, embedder), ids, {r["id"]: r["query"] for r in rows},
                         {r["id"]: Judged((r["answer"],), r["file"]) for r in rows})
    if not agent:
        return kept, None
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as handle:
        handle.write("\n".join(json.dumps({"id": r["id"], "query": r["phrasing"]}, ensure_ascii=False) for r in rows))
    return kept, Path(handle.name)


def capture(kept: KeptClauseSet, phrasings: Path | None, right: dict[str, str] | None = None,
            read_whole: int = 0) -> list[Captured]:
    """Every question of ``kept`` as a default call, its passage inputs kept. ``right``: each question's
    judged document (eval id) where the answers do not name it. ``read_whole``: the first N documents are also
    read whole, as the first is (offline requests beside the call), so another order can be replayed."""
    asked = load_phrasings(phrasings) if phrasings else {}
    by_eval_id = {eval_id: doc_id for doc_id, eval_id in kept.ids.items()}
    original = getattr(searching, "map_hits")  # noqa: B009 (the name the search calls, replaced below)
    out: list[Captured] = []

    def recording(hits: list[dict[str, Any]], include_context: bool, max_chunks: int, passage_chars: int,
                  lexical_weight: float, similarity: Any = None, phrases: tuple[str, ...] = (),
                  dense_floor: float | None = None,
                  chunks: dict[str, list[dict[str, Any]]] | None = None, model: Any = None,
                  whole: dict[str, list[dict[str, Any]]] | None = None, naming: frozenset[str] = frozenset(),
                  aside: frozenset[str] = frozenset()) -> Any:
        out[-1].hits, out[-1].chunks, out[-1].whole = hits, chunks, whole or {}
        out[-1].names = {i: kept.ids[i] for i in (str(h["_source"].get("doc_id")) for h in hits) if i in kept.ids}
        out[-1].settings = {"include_context": include_context, "max_chunks": max_chunks,
                            "passage_chars": passage_chars, "lexical_weight": lexical_weight,
                            "phrases": phrases, "dense_floor": dense_floor, "aside": aside}
        return original(hits, include_context, max_chunks, passage_chars, lexical_weight, similarity, phrases,
                        dense_floor, chunks, model, whole, naming, aside)

    unit_similarity = kept.service.searcher.unit_similarity

    def remembering(vector: list[float] | None) -> Any:
        out[-1].vector = vector
        return unit_similarity(vector)

    execute = kept.service.searcher.execute

    def executing(plan: SearchPlan) -> Any:
        found = execute(plan)
        ids = [str(hit["_source"]["doc_id"]) for hit in found.raw["hits"]["hits"]][:read_whole]
        out[-1].wholes = {i: found.whole.get(i) or kept.service.reads.send(build_document_chunks_request(
            plan, i, plan.first_document_chunks))["hits"]["hits"] for i in ids}
        every = [str(hit["_source"]["doc_id"]) for hit in found.raw["hits"]["hits"]]
        if read_whole and every:
            out[-1].evidence = chunks_by_document(kept.service.reads.send(build_chunks_request(plan, every)))
        return found

    sizing: Callable[[SearchResponse, int, int | None], SearchResponse] = getattr(searching, "fit_budget")  # noqa: B009

    def sized(response: SearchResponse, budget_chars: int, answer_chars: int | None = None) -> SearchResponse:
        out[-1].meta = response.meta.model_copy(deep=True)
        return sizing(response, budget_chars, answer_chars)

    setattr(searching, "map_hits", recording)  # noqa: B010
    setattr(searching, "fit_budget", sized)  # noqa: B010
    kept.service.searcher.unit_similarity = remembering  # type: ignore[method-assign]
    kept.service.searcher.execute = executing  # type: ignore[method-assign]
    try:
        for query_id, text in kept.questions.items():
            judged = kept.answers[query_id]
            request = phrased_request(text, asked.get(query_id))
            document = judged.document or (right or {}).get(query_id) or ""
            out.append(Captured(query_id, request, judged, by_eval_id.get(document),
                                alias=kept.service.settings.index.alias))
            kept.service.search(request, Principal.of("eval", []))
    finally:
        setattr(searching, "map_hits", original)  # noqa: B010
        setattr(searching, "fit_budget", sizing)  # noqa: B010
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alias", required=True)
    parser.add_argument("--documents", type=Path, help="a clause set's documents (page-level JSON folder)")
    parser.add_argument("--corpus", type=Path, help="a BEIR passage set: corpus.jsonl (with --queries, --qrels)")
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--qrels", type=Path)
    parser.add_argument("--tables", type=Path, help="the table-row questions (evaluation/sets/tables/questions.jsonl) "
                        "on an index of their PDFs; with --agent, asked in their phrasings")
    parser.add_argument("--agent", action="store_true")
    parser.add_argument("--answers", type=Path)
    parser.add_argument("--phrasings", type=Path)
    parser.add_argument("--read-whole", type=int, default=0, help="also read the first N documents whole")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    embedder = build_embedder(Settings().embedder)
    if args.tables is not None:
        kept, phrasings = open_table_questions(args.alias, args.tables, args.agent, embedder)
        rows = capture(kept, phrasings, read_whole=args.read_whole)
    elif args.corpus is not None:
        kept, right = open_kept_passage_set(args.alias, args.corpus, args.queries, args.qrels, args.answers, embedder)
        rows = capture(kept, args.phrasings, right, args.read_whole)
    else:
        rows = capture(open_kept_clause_set(args.alias, args.documents, args.answers, embedder), args.phrasings,
                       read_whole=args.read_whole)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(pickle.dumps(rows))
    print(f"{len(rows)} calls captured → {args.out}")


if __name__ == "__main__":
    from evaluation.capture import main as main_of_module  # pickled rows name evaluation.capture.Captured

    main_of_module()
