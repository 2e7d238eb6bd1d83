"""Where a clause set's misses are, through the shipped default call on a kept eval index.

Per question: the judged document's rank, whether its answering chunk was among the engine's candidates for
it (the chunks request of the same call), whether it was shown with another passage, and the
embedder's own view — the query's cosine to the answering chunk and that chunk's rank among its document's
chunks by cosine. Each miss is one of: the document not in the first five; the answering chunk not among
the candidates; a candidate not shown; shown with another passage of it.

    .venv/bin/python -m benchmarks.answer_misses --alias c56e5 --embedder e5 --documents /tmp/clause56 \\
        [--phrasings evaluation/sets/construction/phrasings.jsonl]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.answers import Judged, contains_answer
from evaluation.evaluate import Phrasing, eval_settings, load_phrasings, open_kept_clause_set, phrased_request
from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.search.answer.hits import document_chunks, marked_of
from service.search.request.contract import validate_request
from service.search.service import SearchService
from service.settings import Settings

REPO = Path(__file__).resolve().parents[1]
PUBLIC = Principal.of("eval", [])


def chunk_vectors(client: Any, alias: str, doc_id: str) -> list[tuple[str, np.ndarray]]:
    hits = client.search(index=alias, body={"size": 2000, "_source": ["text", "embedding"],
                                            "query": {"term": {"doc_id": doc_id}}})["hits"]["hits"]
    return [(h["_source"]["text"], np.asarray(h["_source"].get("embedding") or [], dtype=np.float32)) for h in hits]


def model_view(client: Any, alias: str, doc_id: str, vector: np.ndarray, judged: Judged) -> str:
    """The query's cosine to the answering chunk, and that chunk's rank among its document's by cosine."""
    chunks = [(t, v) for t, v in chunk_vectors(client, alias, doc_id) if v.size]
    if not chunks:
        return "no vectors"
    cosines = [float(v @ vector / (np.linalg.norm(v) * np.linalg.norm(vector) or 1.0)) for _, v in chunks]
    order = sorted(range(len(chunks)), key=lambda i: -cosines[i])
    answering = [i for i, (t, _) in enumerate(chunks) if contains_answer(t, list(judged.answers))]
    if not answering:
        return "answer spans chunks"
    best = min(order.index(i) for i in answering)
    top = cosines[order[0]]
    return f"cos {max(cosines[i] for i in answering):.3f} (rank {best + 1} of {len(chunks)}, top {top:.3f})"


def classify(service: SearchService, ids: dict[str, str], question: str, phrasing: Phrasing | None,
             judged: Judged) -> tuple[str, str, str | None]:
    """The outcome of one default call, where an answer @5 is shown (else empty), and the judged document's
    engine id when it was found."""
    arguments = phrased_request(question, phrasing)
    response = service.search(arguments, PUBLIC)
    found = [r for r in response.results[:5] if ids.get(r.id) == judged.document]
    shown = [c.text for r in response.results[:5] for c in r.context_chunks or []]
    first = response.results[0].context_chunks if response.results and response.results[0].context_chunks else []
    if first and contains_answer(first[0].text, list(judged.answers)):
        return "answered @1", "", found[0].id if found else None
    if any(contains_answer(t, list(judged.answers)) for t in shown):
        where = next((i + 1, j + 1) for i, r in enumerate(response.results[:5])
                     for j, c in enumerate(r.context_chunks or []) if contains_answer(c.text, list(judged.answers)))
        first_doc = "the judged document first" if ids.get(response.results[0].id) == judged.document \
            else "another document first"
        return "answered @5", f" (result {where[0]}, passage {where[1]}; {first_doc})", found[0].id if found else None
    if not found:
        return "document not in the first five", "", None
    plan = service.searcher.plan(validate_request(arguments), PUBLIC).plan
    answer = service.searcher.execute(plan)  # the same requests the call made: its candidates per document
    hits = [h for h in answer.raw["hits"]["hits"] if h["_source"].get("doc_id") == found[0].id]
    candidates = [marked_of(c).text for chunks in document_chunks(hits, answer.chunks) for c in chunks]
    if not any(contains_answer(t, list(judged.answers)) for t in candidates):
        return "answering chunk not among the candidates", "", found[0].id
    mine = [c.text for c in found[0].context_chunks or []]
    if len(mine) < len(candidates) and not any(contains_answer(t, list(judged.answers)) for t in mine):
        return "answering chunk a candidate, shown with another passage or not shown", "", found[0].id
    return "shown with another passage", "", found[0].id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--documents", type=Path, required=True, help="The page-JSON folder the index was built from.")
    parser.add_argument("--answers", type=Path, default=REPO / "evaluation/sets/construction/clauses.jsonl")
    parser.add_argument("--phrasings", type=Path)
    parser.add_argument("--embedder", help="The provider the index was built with (navec, e5, http).")
    args = parser.parse_args()
    kept = open_kept_clause_set(args.alias, args.documents, args.answers,
                                build_embedder(eval_settings(Settings(), args.alias, args.embedder).embedder),
                                args.embedder)
    service, ids, questions, answers, client = kept.service, kept.ids, kept.questions, kept.answers, kept.service.client
    _, embedder = service.resolver.current()
    phrasings = load_phrasings(args.phrasings) if args.phrasings else {}
    outcomes: Counter[str] = Counter()
    for qid, text in questions.items():
        judged = answers[qid]
        outcome, where, doc_id = classify(service, ids, text, phrasings.get(qid), judged)
        outcomes[outcome] += 1
        engine_doc = doc_id or next((d for d, e in ids.items() if e == judged.document), None)
        view = model_view(client, args.alias, engine_doc, np.asarray(embedder.embed_query(text)), judged) \
            if engine_doc else "document not indexed"
        print(f"{qid}\t{outcome}{where}\t{view}\t{text}")
    print()
    for outcome, count in outcomes.most_common():
        print(f"{count:3d}  {outcome}")


if __name__ == "__main__":
    main()
