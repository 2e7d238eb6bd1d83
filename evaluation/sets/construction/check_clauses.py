"""Check the clause set against the documents: every quote stands on its page, and the clause is in effect
there (it starts on that page or an earlier one).
Run: python evaluation/sets/construction/check_clauses.py [DATA_DIR]."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from evaluation.answers import fold, load_answers

DEFAULT = Path(__file__).resolve().parents[4] / "shared/data/construction_ru/russian_construction_standards/metadata"


def problems(data_dir: Path, clauses: Path) -> list[str]:
    found = []
    rows = [json.loads(line) for line in clauses.read_text(encoding="utf-8").splitlines() if line.strip()]
    judged = load_answers(clauses)
    for row in rows:
        pages = [p.get("page_content") or "" for p in
                 json.loads((data_dir / f"{row['doc']}.json").read_text(encoding="utf-8"))["pages"]]
        page = pages[row["page"] - 1]
        if fold(judged[row["_id"]].answers[0]) not in fold(page):
            found.append(f"{row['_id']}: quote not on page {row['page']} of {row['doc']}")
        start = re.compile(rf"(?m)^\s*{re.escape(row['clause'])}\.?\s")
        if not any(start.search(p) for p in pages[: row["page"]]):
            found.append(f"{row['_id']}: clause {row['clause']} does not start on or before page {row['page']}")
    return found


if __name__ == "__main__":
    here = Path(__file__).parent
    issues = problems(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT, here / "clauses.jsonl")
    print("\n".join(issues) or "all quotes and clauses check out")
    sys.exit(1 if issues else 0)
