"""Text repair before chunking, shared by every parser: words broken at line ends joined, letter-spaced
words collapsed. Each repair is conservative: when in doubt, the text stays as it was.

- ``при\\xad\\nменять`` → ``применять`` (a soft hyphen before a line break always joins);
- ``об-\\nразцов`` → ``образцов`` when the joined word is a dictionary word, while ``северо-\\nзападный``
  and ``А500С-\\n1`` keep their hyphen (the joined form is not a word, or a part is not Cyrillic);
- ``П р и м е ч а н и е`` → ``Примечание``, ``Т а б л и ц а  2`` → ``Таблица 2``: runs of four or more
  letters separated by single spaces collapse when the result is a dictionary word, so runs of real
  one-letter words (``в и с``) and formula symbols (``Р п и К З``) stay.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_SOFT_BREAK_RE = re.compile(r"[\u00ad\ufffe]\s*\n\s*")
_HYPHEN_BREAK_RE = re.compile(r"(?<![\w-])([А-Яа-яЁё]{1,30})[-‐‑]\s*\n\s*([а-яё]{1,30})(?![\w-])")
_LETTER_SPACED_RE = re.compile(r"(?<![\w])((?:[А-Яа-яЁёA-Za-z] ){3,}[А-Яа-яЁёA-Za-z])(?![\w])")
_VERTICAL_RE = re.compile(r"(?m)^((?:[А-Яа-яЁёA-Za-z] ?\n){3,}[А-Яа-яЁёA-Za-z]) ?$")
_ONE_LETTER_WORDS = frozenset("вксяоуиаВКСЯОУИА")


@lru_cache(maxsize=1)
def _morph() -> Any:
    import pymorphy3

    return pymorphy3.MorphAnalyzer()


@lru_cache(maxsize=50_000)
def is_word(word: str) -> bool:
    """Whether pymorphy3's dictionary knows ``word`` (not a guess from its ending)."""
    return bool(_morph().word_is_known(word.lower().replace("ё", "е")))


def _join_hyphen(match: re.Match[str]) -> str:
    head, tail = match[1], match[2]
    joined = head + tail
    if is_word(joined) and not (is_word(head) and is_word(tail) and is_word(f"{head}-{tail}")):
        return joined
    return f"{head}-{tail}"


def _collapse(match: re.Match[str]) -> str:
    """The letters as one word when the dictionary knows it; formula symbols («Р п и К З») and runs of
    real one-letter words («а и в с») stay as they are."""
    letters = match[1].split(" ")
    joined = "".join(letters)
    if all(letter in _ONE_LETTER_WORDS for letter in letters) or not is_word(joined):
        return match[1]
    return joined


def join_broken_words(text: str) -> str:
    """Soft hyphen + line break always joins; hyphen + line break joins when the result is a word."""
    text = _SOFT_BREAK_RE.sub("", text)
    return _HYPHEN_BREAK_RE.sub(_join_hyphen, text)


def collapse_letter_spacing(text: str) -> str:
    """``П р и м е ч а н и е`` → ``Примечание`` (GOST typesetting spaces out headings); a word set
    vertically, one letter per line, is joined too."""
    text = _VERTICAL_RE.sub(lambda m: m[1].replace("\n", ""), text)
    return _LETTER_SPACED_RE.sub(_collapse, text)


_SPACE_LIKE_RE = re.compile(r"[\u00a0\u2000-\u200a\u202f\u205f]")


def repair_text(text: str) -> str:
    """Every repair, in order, on a page or paragraph of raw text (line breaks still in place); no-break
    and thin spaces count as spaces (typesetters space letters out with them)."""
    return collapse_letter_spacing(join_broken_words(_SPACE_LIKE_RE.sub(" ", text)))
