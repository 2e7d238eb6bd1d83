"""How many first passages are not a norm's content: front matter the question does not ask for (a foreword,
normative references, abbreviations, a correction sheet, bibliography) or page furniture (a line of page numbers
«С. 16 ГОСТ 5264-80»). Each captured call (``evaluation.capture``) is replayed as shipped; its first passage's
chunk is found in ``--index`` (the index whose section kinds classify it: the same text, any parser version).

    python -m evaluation.experiments.furniture --index norms17 dev-user=/tmp/cap/dev-user.pkl …
"""

from __future__ import annotations

import argparse
import pickle
from collections import defaultdict
from pathlib import Path

from opensearchpy import OpenSearch

import evaluation.passage_fit as fit
from evaluation.capture import Captured
from ingest.parse.text import is_page_mark
from service.search.dsl.sections import aside_for
from service.embedders.base import Embedder
from service.engine.gateway import build_client, scan
from service.search.answer.budget import fit_budget
from service.search.answer.map import map_hits
from service.search.answer.models import ChunkResult, Facets, Pagination, SearchMeta, SearchResponse, Suggestions, \
    Timings
from service.settings import SearchSettings, Settings

Kinds = dict[str, list[tuple[str, str | None]]]


def kinds_of(client: OpenSearch, alias: str) -> Kinds:
    """Every chunk's text and section kind, by document id."""
    out: Kinds = defaultdict(list)
    for hit in scan(client, index=alias, query={"_source": ["doc_id", "text", "section_kind"]}):
        src = hit["_source"]
        out[src["doc_id"]].append((src["text"], src.get("section_kind")))
    return out


def first_passage(row: Captured, embedder: Embedder) -> tuple[str, ChunkResult] | None:
    """The first passage of the call replayed as shipped, with its document id."""
    response = fit.replayed_response(row, embedder, None)
    if not response.results or not response.results[0].context_chunks:
        return None
    return str(row.hits[0]["_source"]["doc_id"]), response.results[0].context_chunks[0]


def kind_of(kinds: Kinds, doc_id: str, text: str) -> str | None:
    """The section kind of the chunk of ``doc_id`` that holds ``text`` (its first 80 characters)."""
    probe = text.strip(" …")[:80]
    return next((kind for chunk, kind in kinds.get(doc_id, []) if probe in chunk), None)


def furniture(row: Captured, kinds: Kinds, embedder: Embedder) -> str | None:
    """What the call's first passage is, if it is not content: its kind, or «page marks»."""
    found = first_passage(row, embedder)
    if found is None:
        return None
    doc_id, passage = found
    if any(is_page_mark(line) for line in passage.text.splitlines()):
        return "page marks"
    kind = kind_of(kinds, doc_id, passage.text)
    texts = [str(row.request["query"]), *row.request.get("queries", [])]
    return kind if kind in aside_for(texts) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+", help="name=path of a capture")
    parser.add_argument("--index", required=True, help="the alias whose chunks' section kinds classify passages")
    args = parser.parse_args()
    from service.embedders.factory import build_embedder

    settings = Settings()
    embedder = build_embedder(settings.embedder)
    kinds = kinds_of(build_client(settings), args.index)
    for item in args.captures:
        name, path = item.split("=", 1)
        rows: list[Captured] = pickle.loads(Path(path).read_bytes())
        found = [(row.query_id, f) for row in rows if (f := furniture(row, kinds, embedder))]
        print(f"{name:12s} {len(found)} of {len(rows)} first passages not content: {found}", flush=True)


if __name__ == "__main__":
    main()
