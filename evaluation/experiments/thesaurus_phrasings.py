"""Issue 39's "cheap bridge" probe: the clause set's questions with each noun's Wiktionary synonyms added
(wiki-ru-wordnet's synsets, nouns of 4+ letters, 2 synonyms a noun), written as a phrasings file, so that
`stroidok eval --phrasings` sends them as a default call's `queries` (the shipped multi-phrasing path).

    pip install wiki-ru-wordnet        # 20 MB sdist with its SQLite; not a dependency of the product
    python evaluation/experiments/thesaurus_phrasings.py > /tmp/thesaurus.jsonl
    stroidok eval --documents … --queries evaluation/sets/construction/clauses.jsonl --answers evaluation/sets/construction/clauses.jsonl \
        --phrasings /tmp/thesaurus.jsonl --mode hybrid --index r41 --reuse
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pymorphy3

CLAUSES = Path(__file__).resolve().parents[1] / "sets" / "construction" / "clauses.jsonl"


def synonyms(wordnet: object, morph: pymorphy3.MorphAnalyzer, word: str, most: int = 2) -> list[str]:
    """A noun's single-word synonyms of 4+ letters from its Wiktionary synsets; none for other words."""
    core = word.strip("?,.«»()").lower()
    parsed = morph.parse(core)[0] if len(core) >= 4 else None
    if parsed is None or parsed.tag.POS != "NOUN":
        return []
    found: list[str] = []
    synsets = sorted(wordnet.get_synsets(parsed.normal_form), key=hash)  # type: ignore[attr-defined]
    for synset in synsets:  # in a fixed order (the package keeps them in sets)
        for lemma in sorted(word.lemma() for word in synset.get_words()):
            if lemma != parsed.normal_form and " " not in lemma and len(lemma) >= 4 and lemma not in found:
                found.append(lemma)
    return found[:most]


def main() -> None:
    from wiki_ru_wordnet import WikiWordnet

    wordnet, morph = WikiWordnet(), pymorphy3.MorphAnalyzer()
    for line in CLAUSES.read_text(encoding="utf-8").splitlines():
        question = json.loads(line)
        words = question["text"].split()
        added = [s for w in words for s in synonyms(wordnet, morph, w)]
        print(json.dumps({"_id": question["_id"], "queries": [" ".join(words + added)]}, ensure_ascii=False))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
