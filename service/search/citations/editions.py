"""A clause across editions: the word-level difference of two texts, the numbers that changed."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from service.search.citations.grammar import numbers_of

#: words of unchanged text kept on each side of a change
CONTEXT_WORDS = 4
#: the longest difference shown
DIFFERENCE_CHARS = 1500
_NUMBER_RE = re.compile(r"^\d+(?:[.,]\d+)?$")


def words(text: str) -> list[str]:
    return text.split()


def word_difference(old: str, new: str) -> tuple[str, list[str]]:
    """``new`` against ``old`` word by word: changes as ``[-removed-] {+added+}`` with a few words around them,
    the rest elided by «…» (empty when the texts agree); and the numbers that changed («2,5 → 2,7»)."""
    a, b = words(old), words(new)
    parts: list[str] = []
    changed: list[str] = []
    opcodes = SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            kept = a[i1:i2]
            head = kept[:CONTEXT_WORDS] if n else []
            tail = kept[-CONTEXT_WORDS:] if n + 1 < len(opcodes) else []
            if len(kept) > len(head) + len(tail):
                parts += [*head, "…", *tail]
            else:
                parts += kept
            continue
        if i2 > i1:
            parts.append(f"[-{' '.join(a[i1:i2])}-]")
        if j2 > j1:
            parts.append(f"{{+{' '.join(b[j1:j2])}+}}")
        changed += numbers_changed(" ".join(a[i1:i2]), " ".join(b[j1:j2]))
    if all(tag == "equal" for tag, *_ in opcodes):
        return "", []
    text = " ".join(part for part in parts if part).strip()
    return (text[:DIFFERENCE_CHARS].rstrip() + " …" if len(text) > DIFFERENCE_CHARS else text), changed


def numbers_changed(removed: str, added: str) -> list[str]:
    """The numbers one side of a change has and the other has not, paired in order («2,5 → 2,7»), a lone one
    as «2,5 → —» or «— → 2,7»."""
    before = [n for n in numbers_of(removed) if n not in numbers_of(added)]
    after = [n for n in numbers_of(added) if n not in numbers_of(removed)]
    pairs = [f"{x} → {y}" for x, y in zip(before, after, strict=False)]
    pairs += [f"{x} → —" for x in before[len(after):]] + [f"— → {y}" for y in after[len(before):]]
    return [p.replace(".", ",") for p in pairs]
