"""Questions answered by one cell of a table that has no ruling (scans' text layers, Word and HTML renders), asked
through the shipped CLI with its defaults (``stroidok search --format json``) on an index the user built with
``stroidok ingest``. For each question, asked in the user's words and as the agent asks: the row holding the answer
shown in a passage of the first five documents, and shown there with a column header of its table.

    mkdir /tmp/tables && cp ../shared/data/real_files/gost_mechanical/{22696-2013,3722-2014,13568-97,24310-80,\\
27365-87,7872-89,34-13-847-84,8338-75,28428-90,3635-78,7242-81,25255-82}.pdf /tmp/tables/
    STROIDOK_INDEX_ALIAS=tables .venv/bin/stroidok ingest /tmp/tables
    STROIDOK_INDEX_ALIAS=tables .venv/bin/python -m benchmarks.table_cells evaluation/sets/tables/questions.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from evaluation.answers import contains_answer


def search(query: str, queries: list[str]) -> dict[str, Any]:
    """One default call through the CLI, as a user or a script makes it."""
    extra = [arg for q in queries for arg in ("--queries", q)]
    out = subprocess.run([sys.executable, "-m", "service.cli", "search", query, *extra, "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    return dict(json.loads(out))


def judged(response: dict[str, Any], answer: str, header: str) -> tuple[bool, bool]:
    """(the row shown among the first five documents' passages, shown with a column header beside it)."""
    texts = [c["text"] for r in response["results"][:5] for c in r["context_chunks"]]
    shown = [text for text in texts if contains_answer(text.replace(" | ", " "), [answer])]  # cells as one line
    return bool(shown), any(header.lower() in text.lower() for text in shown)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    totals = {"user's words": [0, 0], "as the agent asks": [0, 0]}
    for row in rows:
        asked = {"user's words": (row["query"], []), "as the agent asks": (row["phrasing"], [row["query"]])}
        for way, (query, queries) in asked.items():
            row_shown, with_header = judged(search(query, queries), row["answer"], row["header"])
            totals[way][0] += row_shown
            totals[way][1] += with_header
            print(f"{row['id']} {way:18} row shown {row_shown!s:5} with header {with_header}", file=sys.stderr)
    n = len(rows)
    print(f"{n} table-cell questions        row shown in the first 5 documents   with a column header")
    for way, (shown, headed) in totals.items():
        print(f"{way:30} {shown / n:>10.3f}                          {headed / n:.3f}")


if __name__ == "__main__":
    main()
