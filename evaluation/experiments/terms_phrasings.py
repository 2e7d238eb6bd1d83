"""Issue 39's "terms" bridge probe: a question's nouns that a norm defines in its «Термины и определения»
(«3.1.32 туалет: Санитарно-гигиеническое помещение, оборудованное …») get the terms the same norm defines
with the same genus (the definition's first three words: «уборная: Санитарно-гигиеническое помещение,
оборудованное …») added, written as a phrasings file that `stroidok eval --phrasings` sends as a default
call's `queries` (the shipped multi-phrasing path).

    python evaluation/experiments/terms_phrasings.py ../shared/data/construction_ru/russian_construction_standards/metadata \
        > /tmp/terms.jsonl
    stroidok eval --documents … --queries evaluation/sets/construction/clauses.jsonl --answers evaluation/sets/construction/clauses.jsonl \
        --phrasings /tmp/terms.jsonl --mode hybrid --index r41 --reuse
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import pymorphy3

CLAUSES = Path(__file__).resolve().parents[1] / "sets" / "construction" / "clauses.jsonl"
DEFINITION = re.compile(r"(?m)^\s*\d+(?:\.\d+){1,3}\s+([а-яё][а-яё\-]{3,40})(?:\s*\([^)]*\))?\s*:\s+(.{10,300}?)(?:\.|$)")
GENUS_WORDS = 3


def genus(definition: str) -> str:
    """The definition's head (its first words), e.g. «санитарно-гигиеническое помещение, оборудованное»."""
    return " ".join(re.findall(r"[а-яё\-]+", definition.lower())[:GENUS_WORDS])


def siblings(folder: Path, morph: pymorphy3.MorphAnalyzer) -> dict[str, set[str]]:
    """Term lemma → the terms its norm defines with the same genus."""
    out: dict[str, set[str]] = defaultdict(set)
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        pages = ast.literal_eval(data["pages"]) if isinstance(data["pages"], str) else data["pages"]
        text = "\n".join(p.get("page_content", "") for p in pages)
        by_genus: dict[str, set[str]] = defaultdict(set)
        for term, definition in DEFINITION.findall(text):
            by_genus[genus(definition)].add(morph.parse(term)[0].normal_form)
        for terms in by_genus.values():
            for term in terms:
                out[term] |= terms - {term}
    return out


def main() -> None:
    morph = pymorphy3.MorphAnalyzer()
    related = siblings(Path(sys.argv[1]), morph)
    for line in CLAUSES.read_text(encoding="utf-8").splitlines():
        question = json.loads(line)
        words = question["text"].split()
        added = sorted({s for w in words for s in related.get(morph.parse(w.strip("?,."))[0].normal_form, ())})
        print(json.dumps({"_id": question["_id"], "queries": [" ".join(words + added[:4])] if added else []},
                         ensure_ascii=False))


if __name__ == "__main__":
    main()
