"""Which passage of a document answers: every candidate window of its chunks scored by a linear model whose
weights are fit on judged answers (``evaluation.passage_fit``), not set by hand. Pure functions.

A window is what a seed unit grows to (``passages.candidate_windows``). Its features are read on the
document's own scale — the answer's other documents never change what one document shows — so a weight
means the same in every call. A chunk's best window is its passage, and the document's chunks are shown in
the order of their passages' scores.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.search.answer.passages import Marked, Span, has_value, span_at, value_offsets
from service.search.answer.text import table_header

#: the features of a window, in the order of ``WEIGHTS``: the query terms it covers (their rarity among the
#: document's candidate units, over the document's rarest), its repeats of them (log), its units' best cosine to
#: the query, whether it states a value (a bound, a quantity with its unit), whether it opens at a clause's
#: start, the length of what it shows (in passage sizes), the share of its characters that are digits (a table's
#: rows, whose cells state values without their units), whether its chunk is front matter the question does not
#: ask for (``sections.aside_for``: scope, foreword, references …), and the query terms of its first words
#: (``lead_terms``: the clause whose subject they are, not one naming them in passing). Signals measured and left
#: out because no set's held-out folds gained by them: the covered share of all terms, the rarest term, the
#: chunk's fused relevance, its place and cosine, the densest unit's cosine, clauses crossed, contents lines, the
#: query's adjacent words held together (docs/relevance.md).
FEATURES = ("terms", "repeats", "cos_best", "value", "clause_start", "length", "numeric", "aside", "lead")

#: fit by ``python -m evaluation.passage_fit`` on the judged clause sets and the table-row questions over real
#: PDFs; ``lead`` added to them, its weight chosen on the same sets' folds (docs/relevance.md has the figures)
WEIGHTS: dict[str, float] = {"terms": 1.699, "repeats": 0.752, "cos_best": 2.267, "value": 2.936,
                             "clause_start": 2.514, "length": -2.743, "numeric": 7.674,
                             "aside": -2.333, "lead": 0.5}


@dataclass(frozen=True)
class Model:
    """The weights for a normative document's windows (one with a designation: СП, ГОСТ …); any other
    document's passage is chosen by term coverage and meaning as before (``passages.choose_passage``): fit on
    TyDi and XQuAD, learned weights did not beat it on their held-out folds."""

    normative: dict[str, float]


#: what the search ships
MODEL = Model(WEIGHTS)


@dataclass(frozen=True)
class DocumentTerms:
    """What a document's windows are measured against: its candidate units' term weights."""

    weights: dict[str, float]
    top: float

    @classmethod
    def of(cls, weights: dict[str, float]) -> DocumentTerms:
        return cls(weights, max(weights.values(), default=0.0) or 1.0)


@dataclass(frozen=True)
class ChunkContext:
    """What a chunk's windows share: its units and their signals."""

    chunk: Marked
    spans: Sequence[Span]
    #: where clauses start in the chunk
    starts: frozenset[int]
    units: list[tuple[int, int]]
    lexical: Sequence[float]
    similarity: dict[int, float]
    #: whether each unit states a value; None: not read yet (``best_window`` reads a window's own text, and only
    #: while its value could still change the winner)
    values: list[bool] | None
    #: each unit's marked terms (read once; a unit is in several windows)
    terms: list[list[str]]
    #: each unit's digits and characters other than spaces
    digits: list[int]
    chars: list[int]
    size: int
    #: the chunk is front matter the query does not ask for (a foreword, references, abbreviations …)
    aside: bool = False


def unit_values(chunk: Marked, units: list[tuple[int, int]]) -> list[bool]:
    """Whether each unit states a value (the chunk read once, not once per window)."""
    offsets = value_offsets(chunk.text)
    return [bisect_left(offsets, a) < bisect_left(offsets, b) for a, b in units]


def window_features(ctx: ChunkContext, window: tuple[int, int], doc: DocumentTerms) -> list[float]:
    """The features of units ``window[0]..window[1]`` of ``ctx``'s chunk, in ``FEATURES`` order."""
    first, last = window
    units = ctx.units
    start, end = units[first][0], units[last][1]
    header = header_terms(ctx, start)  # the header row of a table the window opens inside is shown with it
    terms = [t for i in range(first, last + 1) if ctx.lexical[i] > 0 for t in ctx.terms[i]] + header
    distinct = set(terms)
    similarity = ctx.similarity
    cosine = max((similarity[units[i][0]] for i in range(first, last + 1) if units[i][0] in similarity), default=0.0)
    return [
        math.fsum(doc.weights.get(t, 0.0) for t in distinct) / doc.top,
        math.log1p(len(terms) - len(distinct)),
        cosine,
        float(any(ctx.values[first:last + 1])) if ctx.values is not None else 0.0,
        float(start == 0 or bool(header) or start in ctx.starts),
        min(end - start, ctx.size) / ctx.size,  # a longer window is shown cut to the passage's size
        sum(ctx.digits[first:last + 1]) / max(1, sum(ctx.chars[first:last + 1])),
        float(ctx.aside),
        lead_terms(ctx.chunk, start, end, doc),
    ]


#: how much of a window's opening its subject is read from (a clause's first words, after its number)
LEAD_CHARS = 80


def lead_terms(chunk: Marked, start: int, end: int, doc: DocumentTerms) -> float:
    """The query's terms in the window's first words (its clause's subject: «Ширина эвакуационных выходов должна
    быть …»), their rarity over the document's rarest, as ``terms`` counts them."""
    first, last = bisect_left(chunk.starts, start), bisect_left(chunk.starts, min(end, start + LEAD_CHARS))
    if first == last:
        return 0.0
    return math.fsum(doc.weights.get(k, 0.0) for k in set(chunk.keys[first:last])) / doc.top


def best_window(ctx: ChunkContext, windows: list[tuple[tuple[int, int], list[float]]],
                weights: dict[str, float]) -> tuple[float, tuple[int, int]]:
    """The window with the highest score under ``weights`` (ties: the earlier one), for features read
    without values (``ctx.values`` None). Windows are read best first and whether one states a value only
    while its weight could still lift it to the top: a chunk's tables hold many numbers, and scanning every
    window's text was most of the ranker's cost. A window left unread cannot win, with or without it."""
    bonus = weights["value"]
    base = window_scores([f for _, f in windows], weights)
    if bonus < 0:
        return max(zip(base, (w for w, _ in windows), strict=True), key=lambda sw: (sw[0], -sw[1][0]))
    best: tuple[float, int] = (-math.inf, 0)
    chosen = windows[0][0]
    for i in sorted(range(len(windows)), key=lambda i: -base[i]):
        if base[i] + bonus < best[0]:
            break
        (first, last), _ = windows[i]
        start = ctx.units[first][0]
        score = base[i] + (bonus if has_value(ctx.chunk.text[start:ctx.units[last][1]]) else 0.0)
        if (score, -start) > best:
            best, chosen = (score, -start), windows[i][0]
    return best[0], chosen


def best_windows(ctx: ChunkContext, windows: list[tuple[tuple[int, int], list[float]]],
                 weights: dict[str, float], count: int) -> list[tuple[float, tuple[int, int]]]:
    """The ``count`` best windows under ``weights`` that share no unit, best first (ties: the earlier one): a
    call inside one document may show several of a chunk. Features are read without values (``ctx.values``
    None) and, as in ``best_window``, whether a window states one only while it could still be chosen."""
    bonus = max(weights["value"], 0.0)
    base = window_scores([f for _, f in windows], weights)
    scored: list[tuple[float, tuple[int, int]]] = []
    chosen: list[tuple[float, tuple[int, int]]] = []
    for i in sorted(range(len(windows)), key=lambda i: (-base[i], windows[i][0])):
        if len(chosen) == count and base[i] + bonus < chosen[-1][0]:
            break  # no window left can pass the ones chosen
        (first, last), _ = windows[i]
        stated = has_value(ctx.chunk.text[ctx.units[first][0]:ctx.units[last][1]])
        scored.append((base[i] + (weights["value"] if stated else 0.0), windows[i][0]))
        chosen = non_overlapping(scored, count)
    return chosen


def non_overlapping(scored: list[tuple[float, tuple[int, int]]], count: int) -> list[tuple[float, tuple[int, int]]]:
    """The best of ``scored`` windows, best first (ties: the earlier), skipping any that shares a unit with
    one already taken, up to ``count``."""
    chosen: list[tuple[float, tuple[int, int]]] = []
    for score, window in sorted(scored, key=lambda sw: (-sw[0], sw[1])):
        if all(window[1] < first or last < window[0] for _, (first, last) in chosen):
            chosen.append((score, window))
            if len(chosen) == count:
                break
    return chosen


def header_terms(ctx: ChunkContext, start: int) -> list[str]:
    """The terms of the header row shown above a window that opens inside a table below it (the window then
    opens at a start, the table's): «обозначение единицы удельного объема» is answered by the row of «Удельный
    объем» under «Обозначение единицы»."""
    if " | " not in ctx.chunk.text:
        return []
    span = table_header(ctx.chunk.text, start)
    return ctx.chunk.terms(*span) if span is not None else []


def leading_clause_trimmed(ctx: ChunkContext, window: tuple[int, int]) -> tuple[int, int]:
    """``window`` without its leading units of another clause than the next unit's when they add no term of
    their own (a heading «7 Эвакуация» before «7.1 …»): the passage is labelled with the clause that answers."""
    first, last = window
    while first < last:
        here, after = span_at(ctx.spans, ctx.units[first][0]), span_at(ctx.spans, ctx.units[first + 1][0])
        rest = {t for i in range(first + 1, last + 1) for t in ctx.terms[i]}
        if here is None or after is None or here.clause == after.clause or not set(ctx.terms[first]) <= rest:
            break
        first += 1
    return first, last


def unit_digits_and_chars(text: str, units: Sequence[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """How many of each unit's characters are ASCII digits, and how many are not spaces or line breaks."""
    return units_digits_and_chars([text], [units])[0]


def units_digits_and_chars(texts: Sequence[str], units: Sequence[Sequence[tuple[int, int]]]
                           ) -> list[tuple[list[int], list[int]]]:
    """``unit_digits_and_chars`` of each text's units, for many texts in one pass: running counts over the
    code points of all the texts joined, read at the units' bounds (a call reads ~100 chunks' units; an array
    pass per chunk was most of the count)."""
    offsets = np.cumsum([0, *map(len, texts)])
    bounds = np.asarray([(a + shift, b + shift) for shift, chunk in zip(offsets.tolist(), units, strict=False)
                         for a, b in chunk], dtype=np.int64).reshape(-1, 2)
    points = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    digits = np.concatenate(([0], np.cumsum((points >= 48) & (points <= 57))))
    blanks = np.concatenate(([0], np.cumsum((points == 32) | (points == 10))))
    first, last = bounds[:, 0], bounds[:, 1]
    unit_digits = (digits[last] - digits[first]).tolist()
    unit_chars = (last - first - (blanks[last] - blanks[first])).tolist()
    out, at = [], 0
    for chunk in units:
        out.append((unit_digits[at:at + len(chunk)], unit_chars[at:at + len(chunk)]))
        at += len(chunk)
    return out


def window_scores(features: list[list[float]], weights: dict[str, float]) -> list[float]:
    """Each window's score under ``weights`` (a few windows a chunk: plain products, no arrays)."""
    vector = [weights[name] for name in FEATURES]
    return [sum(map(operator.mul, vector, row)) for row in features]
