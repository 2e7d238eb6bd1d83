"""The passage of a chunk that answers the query, cut at clause or sentence boundaries and labelled with
its own clause and page. Pure functions; the engine supplies the signals.

The engine returns each candidate chunk whole, with the query's terms marked by its own highlighter (so
stems, synonyms and phrases are the index's analysis, not ours), its BM25 score and its cosine to the query.
A chunk is split into units — its blocks (paragraphs, clause starts), long blocks into sentences — and each
unit is scored by the marked terms it holds, weighted by how rare they are among all candidate units of the
answer (a term in every unit tells nothing), and how many of the query's terms it covers. The passage grows
from the best unit to the whole clause it belongs to, then to its best neighbours, up to the passage size;
it always starts and ends at a unit boundary, never inside a word.

The units' cosines to the query come from the engine where the index keeps unit vectors (the dense leg's
inner hits name each found chunk's nearest units); the nearest unit also seeds a passage, so a clause that
shares no word with the question can be shown. A passage that opens inside a table below its header row
shows that row first (and counts its terms): a cell means nothing without its column.

``spans`` (written by the chunker) say where in the chunk the page or the clause in effect changes; the
passage carries the clause and page in effect at its start, and the clause at its end when it differs.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from service.search.answer.text import header_text, passage_text, table_header
from service.search.answer.words import UNIT_CHARS, phrase_spans, split_units, term_key

PRE, POST = "\ue000", "\ue001"  # the highlighter's marks: private-use characters no document contains
_MARK_RE = re.compile(f"{PRE}(.*?){POST}", re.DOTALL)
_TOC_LEADER_RE = re.compile(r"…\s*\d{1,3}\b")
#: a requirement's value: a bound («не менее», «не более» …) or a number followed by a unit of measure or a
#: percent (two simple scans: one alternation tried at every character is 2.5× slower on 80 chunks)
_BOUND_RE = re.compile(r"[Нн]е\s+(?:менее|более|ниже|выше|реже|чаще|превыша)")
_NUMBER_RE = re.compile(r"\d[.,\d]*")
_UNIT_RE = re.compile(r"\s*(?:%|мм|см|м|км|м2|м²|м3|м³|кг|т|°\s*[СC]|дБА?|МПа|кПа|Па|ч|мин|сут|лет|кВ|Вт|кВт|лк|"
                      r"раз)(?![а-яёА-ЯЁa-zA-Z])")
#: a number with its unit, found by one search (a number cut short cannot end before a unit: a unit starts with no
#: digit, stop or comma; a start inside a number reads the same unit as its first digit)
_VALUE_RE = re.compile(_NUMBER_RE.pattern + _UNIT_RE.pattern)


@dataclass(frozen=True)
class Marked:
    """A chunk's text with the query's matched terms located (offsets into ``text``, in order)."""

    text: str
    marks: tuple[tuple[int, int], ...]
    #: each mark's term key, computed once (a chunk's units ask for them many times)
    keys: tuple[str, ...] = field(init=False, repr=False, compare=False)
    starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    #: ``terms`` by (start, end): a unit's terms are asked for its weights, its score and each of its windows
    read: dict[tuple[int, int], list[str]] = field(init=False, repr=False, compare=False)
    #: ``unit_terms`` by the units asked for
    by_units: dict[tuple[tuple[int, int], ...], list[list[str]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(term_key(self.text[a:b]) for a, b in self.marks))
        object.__setattr__(self, "starts", tuple(a for a, _ in self.marks))
        object.__setattr__(self, "read", {})
        object.__setattr__(self, "by_units", {})

    def unit_terms(self, units: Sequence[tuple[int, int]]) -> list[list[str]]:
        """``terms`` of each of ``units`` (in order, not overlapping), each mark placed in its unit by bisection
        over the units' starts and the answer kept for these units: a call reads ~2,000 units, most without a mark,
        and asks for their terms three times (the weights, the lexical scores, the windows). Not to be changed."""
        key = tuple(units)
        found = self.by_units.get(key)
        if found is None:
            found = self.by_units[key] = [[] for _ in units]
            if self.marks:
                firsts = [a for a, _ in units]
                for start, term in zip(self.starts, self.keys, strict=True):
                    i = bisect_right(firsts, start) - 1
                    if i >= 0 and start < units[i][1]:
                        found[i].append(term)
        return found

    def terms(self, start: int, end: int) -> list[str]:
        """The keys of the marks that start in ``[start, end)`` (the same list on every ask: not to be changed)."""
        found = self.read.get((start, end))
        if found is None:
            found = self.read[start, end] = list(self.keys[bisect_left(self.starts, start):bisect_left(self.starts,
                                                                                                       end)])
        return found


@dataclass(frozen=True)
class Span:
    """From ``offset`` on, the chunk is on ``page`` and in ``clause``."""

    offset: int
    page: int | None
    clause: str | None


@dataclass(frozen=True)
class Passage:
    text: str
    start: int
    end: int
    score: float
    clause: str | None
    clause_end: str | None
    page: int | None
    page_end: int | None
    #: the passage holds every phrase the query binds (a quoted phrase, PHRASE) — or none was asked
    has_phrases: bool = True


def unmark(marked: str) -> Marked:
    """The highlighter's output → plain text (exactly the stored text) and where the marks were."""
    first, *rest = marked.split(PRE)
    first = first.replace(POST, "")
    parts, marks, length = [first], [], len(first)
    for part in rest:
        inner, closed, after = part.partition(POST)
        if closed:
            marks.append((length, length + len(inner)))
        after = after.replace(POST, "")
        parts += [inner, after]
        length += len(inner) + len(after)
    return Marked("".join(parts), tuple(marks))


def term_weights(chunks: Sequence[Marked], unit_chars: int = UNIT_CHARS) -> dict[str, float]:
    """Each marked term's weight: log of how rare it is among every candidate unit of the answer."""
    units = 0
    frequency: dict[str, int] = {}
    for chunk in chunks:
        found = chunk.unit_terms(split_units(chunk.text, unit_chars))
        units += len(found)
        for terms in found:
            if terms:
                for term in set(terms):
                    frequency[term] = frequency.get(term, 0) + 1
    return {term: math.log(1 + units / count) for term, count in frequency.items()}


def unit_score(terms: list[str], weights: dict[str, float]) -> float:
    """Distinct terms count fully, repeats a little: a clause naming three of the query's terms beats one
    repeating one of them."""
    distinct = set(terms)
    return math.fsum(weights.get(t, 0.0) for t in distinct) + 0.1 * (len(terms) - len(distinct))


def is_contents(text: str) -> bool:
    """A table-of-contents line or block: titles followed by leaders and page numbers («… 12»)."""
    return len(_TOC_LEADER_RE.findall(text)) >= 2


class Spans(tuple[Span, ...]):
    """A chunk's spans in order, with what finding the span and the clause at an offset needs, read once: a
    chunk's every candidate window asks for them (``span_at``, ``clause_bounds``)."""

    @functools.cached_property
    def offsets(self) -> list[int] | None:
        """The spans' offsets, when they strictly increase (the chunker writes them so); None otherwise."""
        offsets = [span.offset for span in self]
        return offsets if all(a < b for a, b in itertools.pairwise(offsets)) else None

    @functools.cached_property
    def runs(self) -> list[int]:
        """The index of the first span of each run of spans in one clause."""
        return [i for i in range(len(self)) if i == 0 or self[i].clause != self[i - 1].clause]


def span_at(spans: Sequence[Span], offset: int) -> Span | None:
    """The span in effect at ``offset``."""
    if isinstance(spans, Spans) and spans.offsets is not None:
        i = bisect_right(spans.offsets, offset) - 1
        return spans[i] if i >= 0 else None
    current = None
    for span in spans:
        if span.offset > offset:
            break
        current = span
    return current


def clause_bounds(spans: Sequence[Span], offset: int, length: int) -> tuple[int, int]:
    """Where the clause in effect at ``offset`` starts and ends in the chunk."""
    if isinstance(spans, Spans) and (offsets := spans.offsets) is not None:
        i = bisect_right(offsets, offset) - 1
        if i < 0:
            return 0, length
        runs = spans.runs
        r = bisect_right(runs, i) - 1
        return offsets[runs[r]], offsets[runs[r + 1]] if r + 1 < len(runs) else length
    here = span_at(spans, offset)
    if here is None:
        return 0, length
    start = max((s.offset for s in spans if s.offset <= offset and s.clause != here.clause), default=-1)
    begin = min((s.offset for s in spans if s.offset > start and s.clause == here.clause), default=0)
    end = min((s.offset for s in spans if s.offset > offset and s.clause != here.clause), default=length)
    return begin, end


def has_value(text: str) -> bool:
    """Whether ``text`` states a value: a bound or a quantity with its unit (what a requirement sets)."""
    if any(m.start() == 0 or not text[m.start() - 1].isalpha() for m in _BOUND_RE.finditer(text)):
        return True
    return _VALUE_RE.search(text) is not None


def value_offsets(text: str) -> list[int]:
    """Where in ``text`` values are stated (``has_value``'s signs), in order: one scan of a whole chunk."""
    bounds = [m.start() for m in _BOUND_RE.finditer(text) if m.start() == 0 or not text[m.start() - 1].isalpha()]
    numbers = [m.start() for m in _NUMBER_RE.finditer(text) if _UNIT_RE.match(text, m.end())]
    return sorted(bounds + numbers)


def lexical_scores(chunk: Marked, units: list[tuple[int, int]], weights: dict[str, float]) -> list[float]:
    """Each unit's lexical score; a contents line scores nothing."""
    return [0.0 if not terms or is_contents(chunk.text[a:b]) else unit_score(terms, weights)
            for (a, b), terms in zip(units, chunk.unit_terms(units), strict=True)]


def choose_passage(chunk: Marked, spans: Sequence[Span], weights: dict[str, float], size: int,
                   unit_chars: int = UNIT_CHARS, similarity: dict[int, float] | None = None,
                   semantic_weight: float = 0.0, phrases: Sequence[str] = (),
                   lexical: Sequence[float] | None = None) -> Passage:
    """The best ≤ ``size``-character passage of ``chunk``, labelled by ``spans``.

    Each unit that matches a term seeds a passage: the unit widened to its whole clause where that fits, a
    short clause (under half of ``size``) going on with the text after it. A passage scores by the distinct
    terms it covers (rare ones count more) plus ``semantic_weight`` × its best unit's cosine to the query
    (``similarity``: unit start → cosine): «вместимость» answers «сколько вмещает» though no stem is shared.
    When the query binds ``phrases``, only windows holding one of their occurrences compete (when the chunk
    holds any: a document can match a phrase in its title alone). ``lexical``: the units' scores, when the
    caller has them already. (A normative document's passages are chosen by ``ranker`` instead.)"""
    units = split_units(chunk.text, unit_chars) or [(0, len(chunk.text))]
    if lexical is None or len(lexical) != len(units):
        lexical = lexical_scores(chunk, units, weights)
    windows, occurrences = candidate_windows(chunk, spans, units, lexical, similarity or {}, phrases, size)
    scored = [(window_score(chunk, units, window, lexical, weights, similarity or {}, semantic_weight), window)
              for window in windows]
    if " | " in chunk.text:
        scored = with_headers(chunk, units, scored, weights)
    # equal coverage: the window within fewer clauses (its label is the answer's own), then the earlier one
    score, window = max(scored, key=lambda sw: (sw[0], -crossings(spans, units, sw[1]), -sw[1][0]))
    return passage_of(chunk, spans, units, window, size, occurrences, phrases, score)


def candidate_windows(chunk: Marked, spans: Sequence[Span], units: list[tuple[int, int]], lexical: Sequence[float],
                      similarity: dict[int, float], phrases: Sequence[str],
                      size: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The windows a chunk's passage is chosen among, and where the query's bound phrases occur in it. Each
    unit that matches a term seeds one: the unit widened to its whole clause where that fits, a short clause
    (under half of ``size``) going on with the text after it; the nearest unit by meaning seeds one too,
    though it may share no word with the question. When the query binds ``phrases`` and the chunk holds
    one, only windows holding an occurrence compete (a document can match a phrase in its title alone)."""
    occurrences = [o for phrase in phrases for o in phrase_spans(chunk.text, phrase)]
    seeds = ([unit_at(units, a) for a, _ in occurrences] if occurrences
             else [i for i, score in enumerate(lexical) if score > 0] or [0])
    if similarity and not occurrences:
        nearest = max(similarity, key=lambda start: similarity[start])
        seeds += [i for i, (a, _) in enumerate(units) if a == nearest and i not in seeds]
    windows = dict.fromkeys(cover(units, grow_forward(units, *grow_to_clause(units, i, clause_bounds(
        spans, units[i][0], len(chunk.text)), size), size // 2), occurrences) for i in seeds)
    return list(windows), occurrences


def passage_of(chunk: Marked, spans: Sequence[Span], units: list[tuple[int, int]], window: tuple[int, int],
               size: int, occurrences: Sequence[tuple[int, int]], phrases: Sequence[str], score: float) -> Passage:
    """Units ``window[0]..window[1]`` as a passage of at most ``size`` characters, labelled by ``spans``,
    with the header row of the table it opens inside of."""
    first, last = window
    start, end = units[first][0], units[last][1]
    inside = [o for o in occurrences if start <= o[0] and o[1] <= end]
    if end - start > size:
        start, end = fit_around_marks(chunk, start, end, size, inside[0] if inside else None)
    opening, closing = span_at(spans, start), span_at(spans, max(start, end - 1))
    clause = opening.clause if opening else None
    header = header_text(chunk.text, table_header(chunk.text, start))
    return Passage(header + passage_text(chunk.text[start:end]), start, end, score, clause,
                   closing.clause if closing and closing.clause != clause else None,
                   opening.page if opening else None,
                   closing.page if closing and opening and closing.page != opening.page else None,
                   not phrases or any(start <= a and b <= end for a, b in occurrences))


def with_headers(chunk: Marked, units: list[tuple[int, int]], scored: list[tuple[float, tuple[int, int]]],
                 weights: dict[str, float]) -> list[tuple[float, tuple[int, int]]]:
    """Windows that open inside a table below its header also cover the header's terms (it is shown with
    them): «обозначение единицы удельного объема» is answered by the row of «Удельный объем» under the header
    «Обозначение единицы», not by the header and the first rows."""
    out = []
    for score, window in scored:
        span = table_header(chunk.text, units[window[0]][0])
        if span is not None:
            inside = set(chunk.terms(units[window[0]][0], units[window[1]][1]))
            score += math.fsum(weights.get(t, 0.0) for t in set(chunk.terms(*span)) - inside)
        out.append((score, window))
    return out


def unit_at(units: list[tuple[int, int]], offset: int) -> int:
    """The index of the unit holding ``offset`` (the last one starting at or before it)."""
    return max((i for i, (a, _) in enumerate(units) if a <= offset), default=0)


def cover(units: list[tuple[int, int]], window: tuple[int, int], occurrences: list[tuple[int, int]]) -> tuple[int, int]:
    """``window`` widened forward to the end of a phrase occurrence that starts in it (a phrase can run over
    a line break into the next unit)."""
    first, last = window
    ends = [b for a, b in occurrences if units[first][0] <= a < units[last][1] and b > units[last][1]]
    while ends and last + 1 < len(units) and units[last][1] < min(ends):
        last += 1
    return first, last


def crossings(spans: Sequence[Span], units: list[tuple[int, int]], window: tuple[int, int]) -> int:
    """How many clause changes fall inside units ``window[0]..window[1]``."""
    start, end = units[window[0]][0], units[window[1]][1]
    return sum(1 for span in spans if start < span.offset < end)


def window_score(chunk: Marked, units: list[tuple[int, int]], window: tuple[int, int], lexical: Sequence[float],
                 weights: dict[str, float], similarity: dict[int, float], semantic_weight: float) -> float:
    """How well units ``window[0]..window[1]`` answer: the distinct terms they cover (a contents line
    covers nothing) plus the semantic share of the cosine of their best-matching unit (a short heading,
    all topic words, would otherwise outshine the clause under it)."""
    first, last = window
    terms = [t for i in range(first, last + 1) if lexical[i] > 0 for t in chunk.terms(*units[i])]
    densest = max(range(first, last + 1), key=lambda i: lexical[i])
    # repeats of a term spread over lines add nothing; fsum: the same total whatever order the set iterates in
    # (it follows the process's string hashing), so equal passages tie the same way in every process
    covered = math.fsum(weights.get(t, 0.0) for t in set(terms))
    return covered + semantic_weight * similarity.get(units[densest][0], 0.0)


def grow_to_clause(units: list[tuple[int, int]], best: int, clause: tuple[int, int], size: int) -> tuple[int, int]:
    """Units around ``best`` out to its clause's bounds while the passage fits ``size``: back to the clause's
    start first (its opening names the subject and the label), then on towards its end."""
    first = last = best
    begin, end = clause
    while first > 0 and units[first - 1][0] >= begin and units[last][1] - units[first - 1][0] <= size:
        first -= 1
    while last + 1 < len(units) and units[last + 1][1] <= end and units[last + 1][1] - units[first][0] <= size:
        last += 1
    return first, last


def grow_forward(units: list[tuple[int, int]], first: int, last: int, size: int) -> tuple[int, int]:
    """Add the units after ``last`` while the passage stays within ``size``."""
    while last + 1 < len(units) and units[last + 1][1] - units[first][0] <= size:
        last += 1
    return first, last


def fit_around_marks(chunk: Marked, start: int, end: int, size: int,
                     phrase: tuple[int, int] | None = None) -> tuple[int, int]:
    """A unit longer than ``size``: the ``size`` characters from shortly before its first mark (or the
    ``phrase`` occurrence it must show), cut at spaces (never inside a word)."""
    marks = [a for a, _ in chunk.marks if start <= a < end]
    anchor = phrase[0] if phrase else marks[0] if marks else start
    begin = max(start, anchor - size // 5)
    if begin > start:
        space = chunk.text.find(" ", begin, anchor + 1)
        begin = space + 1 if space >= 0 else begin
    stop = min(end, begin + size)
    if stop < end:
        space = chunk.text.rfind(" ", begin + size // 2, stop)
        stop = space if space > 0 else stop
    return begin, stop


def parse_spans(raw: object) -> Spans:
    """The chunk's stored ``spans`` (``[{"o", "p", "c"}]``); empty when it has none (an older index)."""
    if not isinstance(raw, list):
        return Spans()
    return Spans(Span(int(s.get("o", 0)), s.get("p"), s.get("c")) for s in raw if isinstance(s, dict))
