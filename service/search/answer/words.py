"""Words and units of a chunk's text: the stem the index's analyzer gives a word, where a phrase occurs in any
inflection, and the units (paragraphs, long ones cut after sentences) a passage is made of. Pure functions."""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import snowballstemmer

_WORD_RE = re.compile(r"\w+")


#: a sentence's end: its stop, then the whitespace (group 1) before a capital, a digit or an opening quote (the
#: stop matched first: a lookbehind tried at every character made this most of splitting a chunk)
_SENTENCE_RE = re.compile(r"[.;!?](\s+)(?=[«\"(]?[А-ЯЁA-Z0-9])")


UNIT_CHARS = 320  # a block longer than this is split into sentences


#: one Snowball stemmer per thread: a stemmer keeps the word it works on in itself, so two threads sharing
#: one (the MCP server's concurrent calls) read each other's words (IndexError, or a wrong stem)
_STEMMERS = threading.local()


def stem(word: str) -> str:
    stemmer = getattr(_STEMMERS, "russian", None)
    if stemmer is None:
        stemmer = _STEMMERS.russian = snowballstemmer.stemmer("russian")
    return str(stemmer.stemWord(word))


@lru_cache(maxsize=65_536)
def term_key(word: str) -> str:
    """One key for a term's inflections as the highlighter marks them («жилой», «жилых», «жилая» → «жил»):
    the Snowball Russian stem, the stemmer the index's analyzer uses."""
    word = word.lower().replace("ё", "е")
    return stem(word) if word.isalpha() else word


#: words that name the kind of answer a question asks for, not its subject («требования к ширине выходов»): every
#: clause of a norm is a requirement, and a clause saying «требования» in running text («в соответствии с
#: требованиями …») is no nearer the answer; no passage is chosen by them
FRAME_WORDS = ("требования", "нормы", "правила")


FRAME_KEYS = frozenset(term_key(w) for w in FRAME_WORDS)


def content_keys(text: str, stop_words: frozenset[str]) -> frozenset[str]:
    """The term keys of ``text``'s words of letters, but for ``stop_words`` (lower case)."""
    return frozenset(term_key(w) for w in _WORD_RE.findall(text) if w.isalpha() and w.lower() not in stop_words)


def phrase_spans(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where ``phrase`` occurs in ``text`` word for word, each word in any inflection (the index's phrase
    match: stems in order, punctuation between them ignored): (start of its first word, end of its last)."""
    keys = [term_key(w) for w in _WORD_RE.findall(phrase)]
    if not keys:
        return []
    words = [(m.start(), m.end(), term_key(m[0])) for m in _WORD_RE.finditer(text)]
    return [(words[i][0], words[i + len(keys) - 1][1]) for i in range(len(words) - len(keys) + 1)
            if all(words[i + j][2] == key for j, key in enumerate(keys))]


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph: a line, joined to the one before when it continues it (a PDF wraps a
    sentence: the line before ends without a stop and this one starts in lower case)."""
    blocks: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        start = offset + len(line) - len(line.lstrip())
        end = offset + len(line.rstrip())
        offset += len(line) + 1
        if end <= start:
            continue
        if blocks and text[start].islower() and text[blocks[-1][1] - 1] not in ".;:!?":
            blocks[-1] = (blocks[-1][0], end)
        else:
            blocks.append((start, end))
    return blocks


def split_units(text: str, unit_chars: int = UNIT_CHARS) -> list[tuple[int, int]]:
    """(start, end) of each unit: every paragraph, a long one split after its sentences' ends."""
    return list(_split_units(text, unit_chars))


@lru_cache(maxsize=2048)  # one answer splits each candidate chunk three times (weights, similarity, passage)
def _split_units(text: str, unit_chars: int) -> tuple[tuple[int, int], ...]:
    units: list[tuple[int, int]] = []
    for start, end in paragraphs(text):
        if end - start <= unit_chars:
            units.append((start, end))
            continue
        cut = start
        for match in _SENTENCE_RE.finditer(text, start, end):
            if match.start(1) - cut >= 40:
                units.append((cut, match.start(1)))
                cut = match.end(1)
        units.append((cut, end))
    return tuple(units)
