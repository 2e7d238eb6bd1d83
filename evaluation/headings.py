"""Questions the archive writes itself: each numbered section heading of a norm («5.3 Эвакуационные выходы из
подвальных этажей») asked as a query, answered by the clauses under it («5.3.1 …», «5.3.2 …»).

Read from what the product indexed (the chunks of ``--alias``, their text as the ingest made it), written as a
clause set (``id``, ``query``, ``doc``, ``clause``, ``answer`` and every further quote in ``answers``) that
``evaluation.capture`` replays through the default call, for the passage ranker to learn from thousands of
questions instead of a hundred. A heading's words are the norm's own terms, as an agent asks.

    python -m evaluation.headings --alias norms --out /tmp/headings.jsonl [--per-document 6]
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from service.engine.gateway import build_client, scan
from service.settings import Settings

#: a numbered heading on a line of its own: no final stop, words after the number
_HEADING_RE = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,3}){0,3})\.?\s+(?P<words>[А-ЯЁ][^.;:\n]{12,110})$")
#: the most clauses under a heading taken as its answers, and the characters of each quoted
ANSWERS, QUOTE_CHARS = 8, 60


def document_texts(chunks: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Each document's text (file name without extension → its chunks' texts in order, overlaps kept)."""
    parts: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for src in chunks:
        parts[Path(str(src["file_name"])).stem].append((int(src["chunk_index"]), str(src["text"])))
    return {name: "\n".join(text for _, text in sorted(items)) for name, items in parts.items()}


def indexed_texts(alias: str) -> dict[str, str]:
    """The text of every document of ``alias`` as the ingest made it (its content chunks, in order)."""
    content = {"bool": {"must_not": {"exists": {"field": "role"}}}}
    return document_texts(hit["_source"] for hit in scan(build_client(Settings()), index=alias, query={
        "_source": ["file_name", "chunk_index", "text"], "query": content}))


def heading_questions(name: str, text: str) -> Iterator[dict[str, Any]]:
    """A document's headings with the first sentences of the clauses under them."""
    lines = [line.strip() for line in text.split("\n")]
    seen: set[str] = set()
    for i, line in enumerate(lines):
        match = _HEADING_RE.match(line)
        if match is None or match["num"] in seen:
            continue
        prefix = match["num"] + "."
        quotes = []
        for later in lines[i + 1:i + 200]:
            if later.startswith(prefix) and len(later) > len(prefix) + 20:
                body = later.split(" ", 1)[1] if " " in later else ""
                if len(body) >= 30:
                    quotes.append(body[:QUOTE_CHARS])
            elif (m := _HEADING_RE.match(later)) and not m["num"].startswith(prefix):
                break
            if len(quotes) == ANSWERS:
                break
        if len(quotes) >= 2:
            seen.add(match["num"])
            yield {"query": match["words"], "doc": name, "clause": match["num"], "answer": quotes[0],
                   "answers": quotes}


def question_arguments(description: str) -> argparse.Namespace:
    """The options of a writer of questions the archive writes itself: the alias read, the file written, the most
    questions a document, the sample's seed."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-document", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args()


def write_questions(rows: list[dict[str, Any]], out: Path, prefix: str, kind: str) -> None:
    """``rows`` as a clause set (JSONL, ids ``prefix`` + their number), and a line saying how many."""
    with out.open("w", encoding="utf-8") as handle:
        for n, row in enumerate(rows):
            handle.write(json.dumps({"id": f"{prefix}{n:05d}", **row}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} {kind} questions of {len({r['doc'] for r in rows})} documents → {out}")


def main() -> None:
    args = question_arguments(__doc__.splitlines()[0])
    texts = indexed_texts(args.alias)
    rng = random.Random(args.seed)
    found = {name: list(heading_questions(name, texts[name])) for name in sorted(texts)}
    # a heading many norms share («Общие положения», «Область применения») names no section of one of them
    shared: dict[str, set[str]] = defaultdict(set)
    for name, questions in found.items():
        for q in questions:
            shared[q["query"].lower()].add(name)
    rows = []
    for questions in found.values():
        own = [q for q in questions if len(shared[q["query"].lower()]) <= 2]
        rows += rng.sample(own, min(args.per_document, len(own)))
    write_questions(rows, args.out, "h", "heading")


if __name__ == "__main__":
    main()
