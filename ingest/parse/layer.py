"""Is a page's text layer language? And the repairs of the faults that are known and reversible.

A PDF's text layer can be present and still not be text: fonts without a Unicode map give glyph numbers
(«\\x12\\x13'\\x16(» — symbol soup), old Cyrillic fonts give cp1251 read as Latin-1 («ÈÇÌÅÐÅÍÈß» for
«ИЗМЕРЕНИЯ»), some fonts give the alphabet shifted by a constant («M]heh\\guc» for «Уголовный»), and scans
carry a few spam words over a page image. Length says nothing of this; content does. A page is judged by:

- control characters among its characters (glyph numbers);
- the share of its Cyrillic words a Russian dictionary knows (pymorphy3), mojibake words counted as unknown;
- the share of its tokens that mix letters with characters no word holds (``]``, ``\\``, ``^`` …).

A repair is kept only when the dictionary says the repaired page is Russian; the rest goes to OCR, and a page
OCR cannot read either is reported as unread — never indexed as garbage.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

#: at least this share of a page's Cyrillic words must be dictionary words for the page to read as Russian
KNOWN_SHARE = 0.5
#: the words a page needs before its shares mean anything (a stamp, a page number, a drawing's labels)
MIN_WORDS = 8
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")  # not \t \n \x0c (form feed) \r
_WORD_RE = re.compile(r"[^\W\d_]{3,}")
_CYRILLIC_WORD_RE = re.compile(r"^[а-яё]+(?:-[а-яё]+)*$")
_MOJIBAKE_RE = re.compile(r"[À-ÿ]")
_ODD_TOKEN_RE = re.compile(r"[^\W\d_][\]\[\\^_`{|}~@<>=]|[\]\[\\^_`{|}~@<>=][^\W\d_]")
_DIGITS_AND_MARKS = set("0123456789.,;:()-%/")
#: Cyrillic А..я: the target of an alphabet shift
_CYRILLIC = range(0x410, 0x450)
#: cp1251 bytes 0x80-0xFF as Latin-1 characters → what cp1251 means by them
_CP1251 = {i: bytes([i]).decode("cp1251", errors="ignore") or chr(i) for i in range(0x80, 0x100)}


@dataclass(frozen=True)
class Verdict:
    """What a page's text is made of."""

    chars: int
    words: int
    cyrillic: int
    known: int
    mojibake: int
    controls: int
    odd_tokens: int
    tokens: int

    @property
    def known_share(self) -> float:
        judged = self.cyrillic + self.mojibake
        return self.known / judged if judged else 1.0

    @property
    def empty(self) -> bool:
        return self.words == 0 and self.controls == 0

    @property
    def garbage(self) -> bool:
        """Not language: glyph numbers, mojibake, a shifted alphabet, or Russian-looking words no dictionary has."""
        if self.chars and self.controls / self.chars > 0.05:
            return True
        if self.words < MIN_WORDS:
            return False
        if self.cyrillic + self.mojibake >= MIN_WORDS and self.known_share < KNOWN_SHARE:
            return True
        return bool(self.tokens) and self.odd_tokens / self.tokens > 0.2


@lru_cache(maxsize=1)
def _morph() -> Any:
    import pymorphy3

    return pymorphy3.MorphAnalyzer()


@lru_cache(maxsize=200_000)
def is_known(word: str) -> bool:
    """A Russian dictionary word (any form), by pymorphy3's dictionary, not its guesser."""
    return bool(_morph().word_is_known(word))


def judge(text: str) -> Verdict:
    words = _WORD_RE.findall(text)
    lower = [w.lower() for w in words]
    cyrillic = [w for w in lower if _CYRILLIC_WORD_RE.match(w)]
    mojibake = sum(1 for w in words if _MOJIBAKE_RE.search(w))
    tokens = text.split()
    return Verdict(chars=sum(1 for c in text if not c.isspace()), words=len(words), cyrillic=len(cyrillic),
                   known=sum(1 for w in cyrillic if is_known(w)), mojibake=mojibake,
                   controls=len(_CONTROL_RE.findall(text)),
                   odd_tokens=sum(1 for t in tokens if _ODD_TOKEN_RE.search(t)), tokens=len(tokens))


def from_cp1251(text: str) -> str:
    """cp1251 bytes that were read as Latin-1 («ÃÎÑÒ» → «ГОСТ»)."""
    return text.translate(_CP1251)


def shift_offsets(text: str) -> list[int]:
    """Offsets that would map the page's most frequent non-space characters onto the commonest Russian letters."""
    common = [c for c, _ in Counter(c for c in text if not c.isspace() and ord(c) < 0x400).most_common(6)]
    return sorted({ord(target) - ord(c) for c in common for target in "оеаинт" if ord(target) > ord(c)})


def shifted(text: str, offset: int) -> str:
    """Every character that ``offset`` moves into А..я moved there; control characters, which such fonts give
    for digits and punctuation, moved by the offset that makes most of them digits and marks."""
    moved = "".join(chr(ord(c) + offset) if not c.isspace() and ord(c) < 0x400 and ord(c) + offset in _CYRILLIC
                    else c for c in text)
    controls = [c for c in moved if _CONTROL_RE.match(c)]
    if not controls:
        return moved
    best = max(range(0x10, 0x31), key=lambda k: sum(chr(ord(c) + k) in _DIGITS_AND_MARKS for c in controls))
    if sum(chr(ord(c) + best) in _DIGITS_AND_MARKS for c in controls) * 2 < len(controls):
        return moved
    return _CONTROL_RE.sub(lambda m: chr(ord(m.group()) + best), moved)


def repair(text: str) -> tuple[str, str] | None:
    """The page repaired and the repair's name, when a known fault explains it and the dictionary agrees
    (at least ``KNOWN_SHARE`` of its Cyrillic words known, and more known words than before); else None."""
    before = judge(text)
    candidates: list[tuple[str, str]] = []
    if before.mojibake:
        candidates.append((from_cp1251(text), "cp1251"))
    if before.words >= MIN_WORDS and (before.odd_tokens or before.cyrillic < before.words / 2):
        candidates += [(shifted(text, k), f"shift {k:+#x}") for k in shift_offsets(text)]
    best: tuple[int, str, str] | None = None
    for fixed, name in candidates:
        after = judge(fixed)
        if after.cyrillic >= MIN_WORDS and after.known_share >= KNOWN_SHARE and after.known > before.known \
                and not after.garbage and (best is None or after.known > best[0]):
            best = (after.known, fixed, name)
    return (best[1], best[2]) if best else None


def strip_controls(text: str) -> str:
    return _CONTROL_RE.sub(" ", text)
