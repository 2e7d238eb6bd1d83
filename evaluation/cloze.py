"""Questions the archive writes itself, by inverse cloze: a requirement's sentence that states a value, with
the value taken out, asked as a query («При толщине защитного слоя бетона следует предусматривать установку
противооткольной сетки из проволоки …»), answered by its clause. The clause's neighbours in the same norm share
its words and are the negatives a passage ranker learns to pass over: what an engineer's question asks of a
norm is a value, and what tells its clause from the next is the subject that value is set for.

Read from what the product indexed (``headings.indexed_texts``), written as a clause set that
``evaluation.capture`` replays through the default call.

    python -m evaluation.cloze --alias norms --out /tmp/cloze.jsonl [--per-document 6]
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

from evaluation.headings import QUOTE_CHARS, indexed_texts, question_arguments, write_questions
from service.search.answer.passages import has_value

#: a numbered clause (two levels or more) opening a line: «5.3.2 Ширина …»
_CLAUSE_RE = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,3}){1,3})\.?\s+(?P<body>[А-ЯЁ].{60,})$")
_SENTENCE_RE = re.compile(r"(?<=[.;])\s+(?=[А-ЯЁ])")
#: a value and what binds it: «не менее 0,8 м», «более 40 мм», «до 25 м», «2—4 мм», «5 %»
_VALUE_RE = re.compile(r"(?:(?:[Нн]е\s+)?(?:менее|более|ниже|выше|превышать|превышает|до|от|свыше)\s+)?"
                       r"\d[\d\s,.]*(?:[—–-]\s*\d[\d,.]*)?\s*(?:%|°\s*[СC]|[а-яА-Я]{1,4}\d?\b)?")
_WORD_RE = re.compile(r"[А-ЯЁа-яё]{4,}")


def without_values(sentence: str) -> str:
    """``sentence`` with its values and their bounds taken out, white space folded."""
    return " ".join(_VALUE_RE.sub(" ", sentence).replace(" ,", ",").split()).strip(" ,.;:—-")


def cloze_questions(name: str, text: str) -> Iterator[dict[str, Any]]:
    """Each clause of a document with a sentence stating a value: that sentence without its value."""
    seen: set[str] = set()
    for line in text.split("\n"):
        match = _CLAUSE_RE.match(line.strip())
        if match is None or match["num"] in seen:
            continue
        body = match["body"]
        for sentence in _SENTENCE_RE.split(body):
            query = without_values(sentence)
            if has_value(sentence) and len(_WORD_RE.findall(query)) >= 4 and len(query) <= 300:
                seen.add(match["num"])
                yield {"query": query, "doc": name, "clause": match["num"], "answer": body[:QUOTE_CHARS]}
                break


def main() -> None:
    args = question_arguments(__doc__.splitlines()[0])
    texts = indexed_texts(args.alias)
    rng = random.Random(args.seed)
    rows = []
    for name in sorted(texts):
        found = list(cloze_questions(name, texts[name]))
        rows += rng.sample(found, min(args.per_document, len(found)))
    write_questions(rows, args.out, "z", "cloze")


if __name__ == "__main__":
    main()
