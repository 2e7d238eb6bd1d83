"""How the first document read whole is read: its chunks read (the best N holding a query term), the windows one
chunk may show, the units embedded for the cosine — each replayed on captured calls (``evaluation.capture``, made
with the whole read at its largest, 300), answer@1 / answer@5 per set and way of asking, the answer sized as a
call's (docs/relevance.md, «The first document read whole»).

    python -m evaluation.experiments.first_document dev-user=/tmp/cap/dev-user.pkl dev-agent=… \\
        tables=/tmp/cap/tables-user.pkl+/tmp/cap/tables-agent.pkl
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
from pathlib import Path

import evaluation.passage_fit as fit
import service.search.answer.map as mapping
from evaluation.capture import Captured
from service.embedders.factory import build_embedder
from service.settings import Settings

#: (chunks read, windows a chunk may show, units embedded)
VARIANTS = [(20, 3, 20), (25, 3, 20), (30, 3, 20), (40, 3, 20), (60, 3, 20), (100, 3, 20), (300, 3, 20),
            (30, 1, 20), (30, 3, 10), (30, 3, 40)]


def read(rows: list[Captured], chunks: int) -> list[Captured]:
    """The captured calls as if their first document's best ``chunks`` had been read."""
    return [dataclasses.replace(r, whole={k: v[:chunks] for k, v in fit.whole_of(r).items()}) for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+", help="name=path of a capture (name=a.pkl+b.pkl: one set)")
    args = parser.parse_args()
    embedder = build_embedder(Settings().embedder)
    sets = {name: [row for path in paths.split("+") for row in pickle.loads(Path(path).read_bytes())]
            for name, paths in (item.split("=", 1) for item in args.captures)}
    shipped = (mapping.WHOLE_DOCUMENT_PER_CHUNK, mapping.WHOLE_DOCUMENT_SEMANTIC_UNITS)
    print("chunks, windows a chunk, units | " + " | ".join(sets))
    for chunks, per_chunk, units in VARIANTS:
        mapping.WHOLE_DOCUMENT_PER_CHUNK, mapping.WHOLE_DOCUMENT_SEMANTIC_UNITS = per_chunk, units
        figures = [fit.answered(read(rows, chunks), embedder, None) for rows in sets.values()]
        print(f"{chunks:>6} {per_chunk:>2} {units:>3} | "
              + " | ".join(f"{f['answer@1']:.3f} / {f['answer@5']:.3f}" for f in figures), flush=True)
    mapping.WHOLE_DOCUMENT_PER_CHUNK, mapping.WHOLE_DOCUMENT_SEMANTIC_UNITS = shipped


if __name__ == "__main__":
    main()
