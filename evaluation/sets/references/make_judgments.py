"""Reference lists of 30 documents, read from the source pages line by line (not by the ingest's parser).

For each document: the lines of its «Нормативные ссылки» section (from the heading line to the next section
heading), every designation that opens a line (an entry of the list; a wrapped name never starts with one).
The lists were then checked by hand against the pages (docs/ingest.md says how); corrections go into
``corrections.json`` and are applied here, so the judgments can be regenerated.

    python evaluation/sets/references/make_judgments.py \
        ../shared/data/construction_ru/russian_construction_standards/metadata
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from ingest.parse.references import plausible
from service.search.citations.designations import DESIGNATION_RE, find_designation, normalize_designation

HEADING = re.compile(r"^\s*2\.?\s+Нормативные\s+ссылки\s*$", re.IGNORECASE)
NEXT = re.compile(r"^\s*3\.?\s+[А-ЯЁ]")
COUNT = 30
HERE = Path(__file__).parent


def section_lines(pages: list[str]) -> list[str]:
    lines = [line for page in pages for line in page.splitlines()]
    start = next((i for i, line in enumerate(lines) if HEADING.match(line)), None)
    if start is None:
        return []
    out = []
    for line in lines[start + 1:]:
        if NEXT.match(line):
            break
        out.append(line)
    return out


def listed(lines: list[str]) -> list[str]:
    found = []
    for line in lines:
        match = DESIGNATION_RE.match(" ".join(line.split()).lstrip("\"«"))  # «"ГОСТ 14202-69. …";» lists too
        if match:
            found.append(normalize_designation(match["kind"], match["number"]))
    return list(dict.fromkeys(found))


def main(metadata: Path) -> None:
    corrections = json.loads((HERE / "corrections.json").read_text(encoding="utf-8"))
    candidates = []
    for path in sorted(metadata.glob("*.json")):
        pages = [p["page_content"] for p in json.loads(path.read_text(encoding="utf-8")).get("pages", [])]
        own = find_designation(path.stem)
        # a running header inside the section repeats the document's own designation: it cites others only
        references = [r for r in listed(section_lines(pages)) if r != own and plausible(r)]
        if len(references) >= 3:
            candidates.append((path.stem, references))
    step = max(1, len(candidates) // COUNT)
    with (HERE / "judgments.jsonl").open("w", encoding="utf-8") as out:
        for stem, references in candidates[::step][:COUNT]:
            fix = corrections.get(stem, {})
            references = [r for r in references if r not in fix.get("remove", [])] + fix.get("add", [])
            out.write(json.dumps({"file": stem, "references": references}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
