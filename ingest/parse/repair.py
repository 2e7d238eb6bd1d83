"""Text repair before chunking, shared by every parser: words broken at line ends joined, letter-spaced
words collapsed. Each repair is conservative: when in doubt, the text stays as it was.

- ``при\\xad\\nменять`` → ``применять`` (a soft hyphen before a line break always joins);
- ``об-\\nразцов`` → ``образцов`` when the joined word is a dictionary word, while ``северо-\\nзападный``
  and ``А500С-\\n1`` keep their hyphen (the joined form is not a word, or a part is not Cyrillic);
- ``П р и м е ч а н и е`` → ``Примечание``, ``Т а б л и ц а  2`` → ``Таблица 2``: runs of four or more
  letters separated by single spaces collapse when the result is a dictionary word, so runs of real
  one-letter words (``в и с``) and formula symbols (``Р п и К З``) stay;
- ``Авто м о бильны е`` → ``Автомобильные``, ``Зд ания`` → ``Здания``: fragments of words a PDF's
  letter-spacing left (a stray letter, or a piece the dictionary does not know) join their neighbours when
  the join is a dictionary word of four letters or more; two longer words the dictionary knows never join
  (``феде рации`` stays), nor do numbers, codes or Latin symbols;
- ``проти-\\nвооткольной`` → ``противооткольной`` when the document writes the word whole elsewhere (compounds
  the dictionary does not know): a parser with a whole document at hand passes its ``DocumentWords``;
- ``ис-\\nпы-\\nта-\\nний`` → ``испытаний``: a word a narrow table column breaks at several line ends joins
  whole when the dictionary or the document knows it, else break by break from the last.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

#: white space holding a line break, read from its first break on (``\s*\n\s*`` matches the same text, but tries
#: every break of a long run of them when what follows does not match: quadratic in the run)
_LINE_BREAK = r"[^\S\n]*\n\s*"
_SOFT_BREAK_RE = re.compile(r"[\u00ad\ufffe]" + _LINE_BREAK)
#: a word a hyphen breaks at one line's end or more («обо-⏎значе-⏎ние», a narrow table column); at most eight
#: pieces a match, so a hostile run of them costs linear time
_HYPHEN_BREAK_RE = re.compile(r"(?<![\w-])[А-Яа-яЁё]{1,30}(?:[-‐‑]" + _LINE_BREAK + r"[а-яё]{1,30}){1,7}(?![\w-])")
_BREAK_RE = re.compile(r"[-‐‑]" + _LINE_BREAK)
_LETTER_SPACED_RE = re.compile(r"(?<![\w])((?:[А-Яа-яЁёA-Za-z] ){3,}[А-Яа-яЁёA-Za-z])(?![\w])")
_VERTICAL_RE = re.compile(r"(?m)^((?:[А-Яа-яЁёA-Za-z] ?\n){3,}[А-Яа-яЁёA-Za-z]) ?$")
_ONE_LETTER_WORDS = frozenset("вксяоуиаВКСЯОУИА")


@lru_cache(maxsize=1)
def _morph() -> Any:
    import pymorphy3

    return pymorphy3.MorphAnalyzer()


def folded(text: str) -> str:
    """Lower case with «ё» as «е»: the form words are compared in, with the dictionary or a document."""
    return text.lower().replace("ё", "е")


@lru_cache(maxsize=50_000)
def is_word(word: str) -> bool:
    """Whether pymorphy3's dictionary knows ``word`` (not a guess from its ending)."""
    return bool(_morph().word_is_known(folded(word)))


_LETTER_RUN_RE = re.compile(r"[^\W\d_]+")


class DocumentWords:
    """The words a document writes whole: a second witness beside the dictionary for the archive's compounds
    («противооткольной», «трещиностойкости»). The set is built once, on the first question a document asks, so
    the cost stays linear in the document's size however many breaks it holds."""

    def __init__(self, pages: Sequence[str]) -> None:
        self._pages = pages
        self._words: frozenset[str] | None = None

    def writes(self, word: str) -> bool:
        """Whether the document holds ``word`` with no letter either side (case and «ё» folded)."""
        if self._words is None:
            self._words = frozenset(_LETTER_RUN_RE.findall(folded("\n".join(self._pages))))
        return folded(word) in self._words


def hyphen_joins(head: str, tail: str, words: DocumentWords | None = None) -> bool:
    """Whether ``head-⏎tail`` is one word a line break split: the dictionary knows the joined form (unless both
    pieces and the hyphenated form are words: «северо-западный»), or the document writes it whole elsewhere and
    not both pieces are dictionary words (where both are, the hyphen may be the compound's own)."""
    both = is_word(head) and is_word(tail)
    if is_word(head + tail) and not (both and is_word(f"{head}-{tail}")):
        return True
    return words is not None and not both and words.writes(head + tail)


def _collapse(match: re.Match[str]) -> str:
    """The letters as one word when the dictionary knows it; formula symbols («Р п и К З») and runs of
    real one-letter words («а и в с») stay as they are."""
    letters = match[1].split(" ")
    joined = "".join(letters)
    if all(letter in _ONE_LETTER_WORDS for letter in letters) or not is_word(joined):
        return match[1]
    return joined


def join_broken_words(text: str, words: DocumentWords | None = None) -> str:
    """Soft hyphen + line break always joins; hyphen + line break joins when ``hyphen_joins`` says so; so does a
    line break inside a word whose hyphen the source lost («нормативных до⏎кументов»)."""

    def join(match: re.Match[str]) -> str:
        *heads, tail = _BREAK_RE.split(match[0])
        whole = "".join(heads) + tail
        if len(heads) > 1 and (is_word(whole) or (words is not None and words.writes(whole))):
            return whole  # «ис-⏎пы-⏎та-⏎ний», a narrow column's word
        for head in reversed(heads):  # from the line's end back: «значе-⏎ние» is «значение» before «обо-» joins it
            tail = head + tail if hyphen_joins(head, tail, words) else f"{head}-{tail}"
        return tail

    text = _SOFT_BREAK_RE.sub("", text)
    text = _HYPHEN_BREAK_RE.sub(join, text)
    return _BARE_BREAK_RE.sub(_join_bare, text)


#: a lone letter at a line's end or start is a table's column more often than half a word: two letters or more
_BARE_BREAK_RE = re.compile(r"(?<![\w-])([А-Яа-яЁё]{2,30})[ \t]*\r?\n[ \t]*([а-яё]{2,30})(?![\w-])")


def _join_bare(match: re.Match[str]) -> str:
    """Two pieces a line break separates join when one is a fragment and the join a dictionary word."""
    head, tail = match[1], match[2]
    joined = head + tail
    if (is_fragment(head) or is_fragment(tail)) and len(joined) >= 4 and reads_as_one_word(joined) \
            and is_word(joined):
        return joined
    return match[0]


def collapse_letter_spacing(text: str) -> str:
    """``П р и м е ч а н и е`` → ``Примечание`` (GOST typesetting spaces out headings); a word set
    vertically, one letter per line, is joined too; then split words (``Зд ания``) on each line."""
    text = _VERTICAL_RE.sub(lambda m: m[1].replace("\n", ""), text)
    text = _LETTER_SPACED_RE.sub(_collapse, text)
    return "\n".join(join_word_fragments(line) for line in text.split("\n"))


_CYRILLIC_TOKEN_RE = re.compile(r"[А-Яа-яЁё]+")
_TOKEN_RE = re.compile(r"\S+")
#: short words common enough that a line made of them needs no look-up (the pre-filter of fragments)
_SHORT_WORDS = frozenset([
    "в", "к", "с", "я", "о", "у", "и", "а", "на", "по", "от", "до", "за", "из", "для", "при", "или", "без",
    "под", "над", "об", "со", "во", "ко", "то", "же", "ли", "бы", "их", "его", "ее", "её", "не", "ни", "но",
    "да", "как", "так", "все", "там", "тут", "мм", "см", "км", "кг", "м", "т", "г", "л", "ч", "шт", "др", "пр"
])
MAX_JOINED = 20  # tokens one joined word may be made of («А к ту а л и зи р о в а н н а я»: 15)


def is_fragment(token: str) -> bool:
    """A piece of a word: a lone letter that is not a one-letter word, or letters the dictionary lacks."""
    return token not in _ONE_LETTER_WORDS if len(token) == 1 else not is_word(token)


def reads_as_one_word(word: str) -> bool:
    """Letter case a word can have: «здания», «Здания», «ЗДАНИЯ» (never «наРу», «ВКУс»)."""
    return word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower())


def _has_candidates(tokens: list[str]) -> bool:
    """Whether a line may hold a split word: a short token that is not a common word, or a token of four
    or five letters the dictionary lacks («М О НИТО РИНГ», «ЭЛЕКТРО СНАБЖ ЕНИЯ»)."""
    return any(_CYRILLIC_TOKEN_RE.fullmatch(t) and ((len(t) <= 3 and t.lower() not in _SHORT_WORDS)
                                                    or (len(t) <= 5 and not is_word(t))) for t in tokens)


_WIDE_SPACE_RE = re.compile(r"( {2,}|\t)")


def join_word_fragments(line: str) -> str:
    """The fewest words a line's split words make: consecutive Cyrillic tokens join when one of them is a
    fragment and the join is a dictionary word of ≥ 4 letters (a dynamic programme over the line). Two or more
    spaces (between letter-spaced words, between table cells) are a boundary no join crosses."""
    if "  " in line.strip() or "\t" in line:
        return "".join(part if _WIDE_SPACE_RE.fullmatch(part) else join_word_fragments(part)
                       for part in _WIDE_SPACE_RE.split(line))
    tokens = _TOKEN_RE.findall(line)
    if len(tokens) < 2 or not _has_candidates(tokens):
        return line  # nothing short and unusual: left as is
    letters = [bool(_CYRILLIC_TOKEN_RE.fullmatch(t)) for t in tokens]
    fragment = [ok and is_fragment(t) for t, ok in zip(tokens, letters, strict=True)]
    n = len(tokens)
    best: list[tuple[int, int]] = [(0, 0)] + [(n + 1, 0)] * n  # (groups so far, where the last group starts)
    for end in range(1, n + 1):
        best[end] = (best[end - 1][0] + 1, end - 1)
        for start in range(end - 2, max(-1, end - 1 - MAX_JOINED), -1):
            if not letters[start]:
                break
            if best[start][0] + 1 < best[end][0] and any(fragment[start:end]) and all(letters[start:end]):
                joined = "".join(tokens[start:end])
                if len(joined) >= 4 and reads_as_one_word(joined) and is_word(joined):
                    best[end] = (best[start][0] + 1, start)
    if best[n][0] == n:
        return line
    groups, end = [], n
    while end > 0:
        start = best[end][1]
        groups.append("".join(tokens[start:end]))
        end = start
    leading = line[:len(line) - len(line.lstrip())]
    return leading + " ".join(reversed(groups))


_SPACE_LIKE_RE = re.compile(r"[\u00a0\u2000-\u200a\u202f\u205f]")


def repair_text(text: str, words: DocumentWords | None = None) -> str:
    """Every repair, in order, on a page or paragraph of raw text (line breaks still in place); no-break
    and thin spaces count as spaces (typesetters space letters out with them). ``words``: the whole
    document's, where the parser has it."""
    return collapse_letter_spacing(join_broken_words(_SPACE_LIKE_RE.sub(" ", text), words))
