"""A value stated beside a citation checked against its clause: each number with the bound it is stated with
(«не менее 0,8 м» is not «не более 0,8 м»), the modality («допускается» is not «не допускается»), and a quote as
the clause's own words in order. Pure functions."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: a number, not a piece of a clause's label or a date («7.3.1», «01.03.2021» hold none)
_NUMBER_RE = re.compile(r"(?<![\d.,])\d+(?:[ \u00a0]\d{3})*(?:[.,]\d+)?(?![.,]?\d)")
#: a bound right before a number, as norms write it (longest first: «не менее» before «менее»)
_BOUND_RE = re.compile(
    r"(?<![\w])(?P<bound>не\s+менее|не\s+более|не\s+ниже|не\s+выше|не\s+свыше|не\s+превыша\w*|не\s+меньше|не\s+больше|"
    r"более|менее|свыше|больше|меньше|до|от|≥|≤|>=|<=|>|<)\s*(?:чем\s+)?$", re.IGNORECASE)
_BOUND_SENSE = {"не менее": ">=", "не ниже": ">=", "не меньше": ">=", "от": ">=", "≥": ">=", ">=": ">=",
                "не более": "<=", "не выше": "<=", "не свыше": "<=", "не больше": "<=", "до": "<=", "≤": "<=",
                "<=": "<=", "более": ">", "свыше": ">", "больше": ">", ">": ">", "менее": "<", "меньше": "<",
                "<": "<"}
#: a modal word and whether «не» stands before it: «допускается» / «не допускается», «следует» / «не следует»
_MODAL_RE = re.compile(r"(?P<neg>\bне\s+)?\b(?P<word>допуска\w*|следует|должн\w*|разреша\w*|запреща\w*|"
                       r"надлежит|необходимо)", re.IGNORECASE)
_MODAL_STEM = {"допуска": "допуска", "следует": "следует", "должн": "должн", "разреша": "допуска",
               "запреща": "допуска", "надлежит": "следует", "необходимо": "следует"}
_WORD_RE = re.compile(r"\w+")
_ELLIPSIS_RE = re.compile(r"…|\.\.\.|\[\s*…?\s*\]")
_SENTENCE_RE = re.compile(r"(?<=[.;:])\s+(?=[А-ЯЁA-Z0-9])|\n")


@dataclass(frozen=True)
class Stated:
    """What a citation's value states, read once: its numbers with their bounds, its modal words."""

    numbers: list[tuple[str, str | None]]
    modals: list[tuple[str, bool]]


def normalized(text: str) -> str:
    """Text as wording is compared: lower case, «ё» as «е», soft hyphens and a word hyphenated across a line
    joined, spaces collapsed."""
    text = text.replace("\u00ad", "").replace("ё", "е").replace("Ё", "Е")
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def number_key(number: str) -> str:
    """A number as values compare: «2,7» and «2.7» alike, «1 000» as «1000»."""
    return re.sub(r"[ \u00a0]", "", number).replace(",", ".")


def bounded_numbers(text: str) -> list[tuple[str, str | None]]:
    """Each number of ``text`` with the sense of the bound written right before it (``>=``, ``<=``, ``>``,
    ``<``) or None."""
    out = []
    for match in _NUMBER_RE.finditer(text):
        bound = _BOUND_RE.search(text[max(0, match.start() - 20):match.start()])
        sense = _BOUND_SENSE.get(re.sub(r"\s+", " ", bound["bound"].lower())) if bound else None
        if bound and sense is None and bound["bound"].lower().startswith("не") and "превыша" in bound["bound"]:
            sense = "<="
        out.append((number_key(match[0]), sense))
    return out


def modals(text: str) -> list[tuple[str, bool]]:
    """Each modal word of ``text`` as (what it says, whether it says it): «не допускается» → («допуска», False);
    «запрещается» is «допуска» said False, «необходимо» is «следует»."""
    out = []
    for match in _MODAL_RE.finditer(text):
        word = match["word"].lower()
        stem = next(s for s in _MODAL_STEM if word.startswith(s))
        said = match["neg"] is None
        out.append((_MODAL_STEM[stem], not said if stem == "запреща" else said))
    return out


def stated(value: str) -> Stated:
    return Stated(bounded_numbers(value), modals(value))


def bounds_hold(value: str, clause: str) -> bool:
    """Whether each number of ``value`` is in the clause, and stated with a bound the clause states it with
    where both bound it; and each modal word of ``value`` is said as the clause says it where the clause says
    that word at all."""
    said = stated(value)
    held = bounded_numbers(clause)
    for number, sense in said.numbers:
        senses = {s for n, s in held if n == number}
        if not senses:
            return False
        if sense is not None and senses - {None} and sense not in senses:
            return False  # the clause bounds that number otherwise
    clause_modals = modals(clause)
    for word, polarity in said.modals:
        heard = {p for w, p in clause_modals if w == word}
        if heard and polarity not in heard:
            return False
    return True


def words_in_order(quote: str, clause: str) -> bool:
    """Whether a quote is the clause's own words: each piece of it (an ellipsis cuts it) in the clause, the
    pieces in order — compared letter for letter without the spaces, so a word a text layer splits («превыш ает»)
    or hyphenates across a line reads as the word (a flipped modality is caught by ``bounds_hold``)."""
    letters = "".join(_WORD_RE.findall(normalized(clause)))
    at = 0
    for piece in _ELLIPSIS_RE.split(quote):
        wanted = "".join(_WORD_RE.findall(normalized(piece)))
        if not wanted:
            continue
        found = letters.find(wanted, at)
        if found < 0:
            return False
        at = found + len(wanted)
    return True


def wording_matches(value: str, clause: str, quoted: bool) -> bool:
    """Whether a stated value is what the clause says: a quote word for word; any value with its numbers, bounds
    and modality as the clause states them (without numbers, each of its words by its first five letters)."""
    if quoted and not words_in_order(value, clause):
        return False
    if stated(value).numbers:
        return bounds_hold(value, clause)
    folded = normalized(clause)
    words = [w[:5] for w in re.findall(r"[а-яёa-z]{4,}", normalized(value))]
    return bool(words) and all(w in folded for w in words) and bounds_hold(value, clause)


def clause_words(value: str, clause: str, limit: int = 300) -> str | None:
    """The clause's own sentence stating the value's first number (or holding its first word), to show beside a
    value that does not match; None when no sentence does."""
    numbers = [n for n, _ in bounded_numbers(value)]
    words = [w[:5] for w in re.findall(r"[а-яёa-z]{4,}", normalized(value))]
    for sentence in _SENTENCE_RE.split(clause):
        keys = {n for n, _ in bounded_numbers(sentence)}
        if (numbers and numbers[0] in keys) or (not numbers and words and words[0] in normalized(sentence)):
            sentence = re.sub(r"\s+", " ", sentence).strip()
            return sentence if len(sentence) <= limit else sentence[:limit].rsplit(" ", 1)[0] + " …"
    return None
