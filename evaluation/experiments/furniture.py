"""How many first passages are not a norm's content: front matter the question does not ask for (a foreword,
normative references, abbreviations, a correction sheet, bibliography) or page furniture (a line of page numbers
«С. 16 ГОСТ 5264-80»). Each captured call (``evaluation.capture``) is replayed as shipped, or, with ``--live``,
each question of a clause set is asked as a default call on that kept index; the first passage's chunk is found in
``--index`` (the index whose section kinds classify it: the same text, any parser version).

    python -m evaluation.experiments.furniture --index norms17 dev-user=/tmp/cap/dev-user.pkl …
    python -m evaluation.experiments.furniture --index norms --live norms --documents $D/…/metadata \
        dev-user=$D/dev_clause_set/clauses.jsonl dev-agent=$D/dev_clause_set/clauses.jsonl+$D/…/phrasings.jsonl …
"""

from __future__ import annotations

import argparse
import pickle
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

import evaluation.passage_fit as fit
from evaluation.answers import fold
from evaluation.capture import Captured
from evaluation.evaluate import load_phrasings, open_kept_clause_set, phrased_request
from ingest.parse.text import is_page_mark
from service.search.dsl.sections import aside_for
from service.caller.principal import Principal
from service.embedders.base import Embedder
from service.engine.gateway import build_client, scan
from service.search.answer.budget import fit_budget
from service.search.answer.map import map_hits
from service.search.answer.models import ChunkResult, Facets, Pagination, SearchMeta, SearchResponse, Suggestions, \
    Timings
from service.settings import SearchSettings, Settings

Kinds = dict[str, list[tuple[str, str | None]]]


def kinds_of(client: OpenSearch, alias: str) -> Kinds:
    """Every chunk's text (``answers.fold``: a passage is shown with other line breaks than its chunk holds) and
    section kind, by document id."""
    out: Kinds = defaultdict(list)
    for hit in scan(client, index=alias, query={"_source": ["doc_id", "text", "section_kind"]}):
        src = hit["_source"]
        out[src["doc_id"]].append((fold(src["text"]), src.get("section_kind")))
    return out


def first_passage(row: Captured, embedder: Embedder) -> tuple[str, ChunkResult] | None:
    """The first passage of the call replayed as shipped, with its document id."""
    response = fit.replayed_response(row, embedder, None)
    if not response.results or not response.results[0].context_chunks:
        return None
    return str(row.hits[0]["_source"]["doc_id"]), response.results[0].context_chunks[0]


def kind_of(kinds: Kinds, doc_id: str, text: str) -> str | None:
    """The section kind of the chunk of ``doc_id`` that holds ``text`` (its first 80 characters)."""
    probe = fold(text.strip(" …"))[:80]
    return next((kind for chunk, kind in kinds.get(doc_id, []) if probe in chunk), None)


def not_content(doc_id: str, text: str, request: dict[str, Any], kinds: Kinds) -> str | None:
    """What a first passage is, if it is not content for the request: its kind, or «page marks»."""
    if any(is_page_mark(line) for line in text.splitlines()):
        return "page marks"
    kind = kind_of(kinds, doc_id, text)
    texts = [str(request["query"]), *request.get("queries", [])]
    return kind if kind in aside_for(texts) else None


def furniture(row: Captured, kinds: Kinds, embedder: Embedder) -> str | None:
    """What the replayed call's first passage is, if it is not content."""
    found = first_passage(row, embedder)
    return None if found is None else not_content(found[0], found[1].text, row.request, kinds)


Asked = tuple[str, dict[str, Any], str | None, str]


def live_calls(alias: str, documents: Path, spec: str, embedder: Embedder) -> Iterator[Asked]:
    """Each question of a clause set (``clauses.jsonl[+phrasings.jsonl]``) asked as a default call on the kept
    index ``alias``: its id, its request, and its first passage's document id and text."""
    clauses, _, phrasings = spec.partition("+")
    kept = open_kept_clause_set(alias, documents, Path(clauses), embedder)
    asked = load_phrasings(Path(phrasings)) if phrasings else {}
    for query_id, question in kept.questions.items():
        request = phrased_request(question, asked.get(query_id))
        response = kept.service.search(request, Principal.of("eval", []))
        first = response.results[0] if response.results and response.results[0].context_chunks else None
        yield query_id, request, first.id if first else None, first.context_chunks[0].text if first else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+", help="name=path of a capture, or with --live name=clauses[+phrasings]")
    parser.add_argument("--index", required=True, help="the alias whose chunks' section kinds classify passages")
    parser.add_argument("--live", help="ask each question as a default call on this kept index instead")
    parser.add_argument("--documents", type=Path, help="with --live: the clause sets' page-level JSON documents")
    args = parser.parse_args()
    from service.embedders.factory import build_embedder

    settings = Settings()
    embedder = build_embedder(settings.embedder)
    kinds = kinds_of(build_client(settings), args.index)
    for item in args.captures:
        name, path = item.split("=", 1)
        if args.live:
            asked = list(live_calls(args.live, args.documents, path, embedder))
            total = len(asked)
            found = [(query_id, f) for query_id, request, doc_id, text in asked
                     if doc_id and (f := not_content(doc_id, text, request, kinds))]
        else:
            rows: list[Captured] = pickle.loads(Path(path).read_bytes())
            total = len(rows)
            found = [(row.query_id, f) for row in rows if (f := furniture(row, kinds, embedder))]
        print(f"{name:12s} {len(found)} of {total} first passages not content: {found}", flush=True)


if __name__ == "__main__":
    main()
