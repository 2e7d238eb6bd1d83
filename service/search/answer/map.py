"""Engine responses → the public result models. Pure functions."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.engine.fields import UNITS_FIELD
from service.search.answer.hits import (
    document_chunks,
    engine_cosines,
    marked_of,
    spans_of,
)
from service.search.answer.models import ChunkResult, DocumentResult, Edition
from service.search.answer.passages import (
    Marked,
    Passage,
    Span,
    candidate_windows,
    choose_passage,
    is_contents,
    lexical_scores,
    passage_of,
    term_weights,
)
from service.search.answer.ranker import (
    MODEL,
    ChunkContext,
    DocumentTerms,
    Model,
    best_window,
    best_windows,
    leading_clause_trimmed,
    unit_values,
    units_digits_and_chars,
    window_features,
)
from service.search.answer.text import MARK, cut_at_word, marked_snippet
from service.search.answer.words import split_units

#: a text → cosine with the query, for many texts at once (None: no semantic signal for units)
Similarity = Callable[[list[str]], list[float]]

HIGHLIGHT_CHARS = 120
#: how much a chunk's best passage counts in ranking a document's chunks (the rest: its fused relevance)
PASSAGE_SHARE = 0.5
#: a unit's cosine to the query, in units of the answer's highest term weight (docs/relevance.md)
SEMANTIC_WEIGHT = 0.5
#: the most units of one document embedded for the semantic signal (its best-matching ones)
SEMANTIC_UNITS = 10
#: the same in a call inside one document, which ranks every chunk of it (navec: ~20 µs a unit)
WHOLE_DOCUMENT_SEMANTIC_UNITS = 20
#: the most passages one chunk gives a call inside one document (the rest of its windows compete with the others')
WHOLE_DOCUMENT_PER_CHUNK = 3


def similarity_of(hit: dict[str, Any]) -> float | None:
    """The chunk's cosine to the query (the ``similarity`` script field), clamped to 0-1; None without one."""
    values = hit.get("fields", {}).get("similarity") or [None]
    return None if values[0] is None else clamp(float(values[0]))


def map_chunk(hit: dict[str, Any], score: float, limit: int) -> ChunkResult:
    """A chunk looked up by id: its stored text, cut at a word to ``limit`` characters."""
    src = hit["_source"]
    return ChunkResult(chunk_id=src["chunk_id"], chunk_index=src["chunk_index"],
                       text=cut_at_word(src.get("text", ""), limit),
                       page_number=src.get("page_number"), page_label=src.get("page_label"),
                       page_end=src.get("page_end") if src.get("page_end") != src.get("page_number") else None,
                       section_title=src.get("section_title"), clause=src.get("clause"),
                       relevance_score=round(score, 4), similarity=similarity_of(hit))


def clamp(score: float | None) -> float:
    return round(min(1.0, max(0.0, score or 0.0)), 4)


def map_document(src: dict[str, Any], score: float) -> DocumentResult:
    """A document's fields as the source has them (a search asks only for the ones it shows)."""
    return DocumentResult(id=src["doc_id"], title=src.get("title") or src["file_name"],
                          designation=src.get("designation"), file_path=src["file_path"],
                          file_type=src["file_type"], file_size=src.get("file_size"),
                          created_at=src.get("created_at"), updated_at=src.get("updated_at"),
                          page_count=src.get("page_count"), relevance_score=clamp(score),
                          superseded_by=Edition(id=src["superseded_by"], designation=src.get(
                              "superseded_by_designation") or "") if src.get("superseded_by") else None,
                          introduced=src.get("introduced"), amendments=src.get("amendments") or None,
                          withdrawn=src.get("withdrawn"))


class Pending:
    """A passage chosen by its score, made (its text cut, folded and labelled) only when it is read: a document
    read whole has a few windows chosen in each of its chunks, and three are shown."""

    __slots__ = ("_made", "_make", "_phrases", "score")

    def __init__(self, make: Callable[[], Passage], score: float, phrases: bool) -> None:
        self._make, self.score, self._phrases = make, score, phrases
        self._made: Passage | None = None

    @classmethod
    def of(cls, passage: Passage) -> Pending:
        made = cls(lambda: passage, passage.score, True)
        made._made = passage
        return made

    @property
    def passage(self) -> Passage:
        if self._made is None:
            self._made = self._make()
        return self._made

    @property
    def has_phrases(self) -> bool:
        """The passage holds every phrase the query binds (read without making it when none is bound)."""
        return not self._phrases or self.passage.has_phrases


@dataclass(frozen=True)
class Candidate:
    """A chunk of a document, whole and marked, with what ranks it."""

    hit: dict[str, Any]
    marked: Marked
    spans: Sequence[Span]
    fused: float
    #: whether it is front matter the query does not ask for (``sections.aside_for``)
    aside: bool = False


def fused_score(score: float, top: float, similarity: float | None, lexical_weight: float) -> float:
    """A chunk's relevance on the pipeline's terms: its leg score scaled to the answer's best, weighted with
    its similarity as the hybrid pipeline weights the two legs (inner hits come scored by one leg only)."""
    return lexical_weight * (score / top if top > 0 else 0.0) + (1 - lexical_weight) * (similarity or 0.0)


def overlaps(passage: Passage, shown: list[Passage]) -> bool:
    """Whether ``passage`` repeats text already shown (neighbouring chunks share an overlap)."""
    head = passage.text[:60]
    return any(head in p.text or p.text[:60] in passage.text for p in shown)


def with_marks(marked: Marked, start: int, end: int) -> str:
    """``marked.text[start:end]`` with its query terms marked **like this**."""
    out, last = [], start
    for a, b in marked.marks:
        if start <= a and b <= end:
            out += [marked.text[last:a], MARK, marked.text[a:b], MARK]
            last = b
    out.append(marked.text[last:end])
    return "".join(out)


def map_chunk_passage(candidate: Candidate, passage: Passage, score: float) -> ChunkResult:
    src = candidate.hit["_source"]
    return ChunkResult(chunk_id=src["chunk_id"], text=passage.text, page_number=passage.page,
                       page_end=passage.page_end, page_label=src.get("page_label"), clause=passage.clause,
                       clause_end=passage.clause_end, relevance_score=round(score, 4),
                       similarity=similarity_of(candidate.hit),
                       # the query's phrase is in the chunk's heading, not its text: the heading is shown
                       section_title=None if passage.has_phrases else src.get("section_title"))


def unit_similarities(candidates: list[list[Candidate]], lexical: list[list[list[float]]],
                      similarity: Similarity | None, floor: float | None,
                      per_document: Sequence[int], read_whole: Sequence[bool]) -> list[list[dict[int, float]]]:
    """Per document, per candidate, unit start → the unit's cosine to the query: the engine's (the dense leg's
    inner hits), or, with ``similarity`` given, those of units that match a term embedded in one batch — each
    document's best-matching ``per_document`` by their ``lexical`` scores (what one document shows does not
    depend on the others), in every document of an answer without any engine cosine (an index written before
    unit vectors), and in a document ``read_whole`` among its chunks the dense leg did not reach."""
    out = [[engine_cosines(candidate.hit, floor) for candidate in group] for group in candidates]
    if similarity is None:
        return out
    engine = any(cosines for group in out for cosines in group)
    chosen: list[tuple[int, int, int, int]] = []
    for d, (group, scores_of) in enumerate(zip(candidates, lexical, strict=True)):
        if engine and not read_whole[d]:
            continue
        units = [(score, d, i, a, b)
                 for i, (candidate, scores) in enumerate(zip(group, scores_of, strict=True)) if not out[d][i]
                 for score, (a, b) in zip(scores, split_units(candidate.marked.text), strict=True) if score > 0]
        chosen += [u[1:] for u in sorted(units, key=lambda u: -u[0])[:per_document[d]]]
    texts = [candidates[d][i].marked.text[a:b] for d, i, a, b in chosen]  # only the chosen units' text is cut
    for (d, i, start, _), cosine in zip(chosen, similarity(texts) if chosen else [], strict=True):
        out[d][i][start] = cosine
    return out


def document_candidates(chunks: list[dict[str, Any]], lexical_weight: float,
                        aside: frozenset[str] = frozenset()) -> list[Candidate]:
    """A document's candidate chunks, each fused on the document's own scale (its best chunk's score), so
    its passages do not depend on the rest of the answer; ``aside``: the section kinds weighed down."""
    top = max((h.get("_score") or 0.0 for h in chunks), default=0.0)
    return [Candidate(h, marked_of(h), spans_of(h["_source"]),
                      fused_score(h.get("_score") or 0.0, top, similarity_of(h), lexical_weight),
                      h["_source"].get("section_kind") in aside) for h in chunks]


Signals = tuple[list[list[Candidate]], list[dict[str, float]], list[list[list[float]]], list[list[dict[int, float]]]]


def read_whole_chunks(found: list[dict[str, Any]], whole: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A document's chunks read whole (``whole``: every chunk of it that holds a query term, best first), each
    with what the search's own candidates (``found``) know of it beyond its text: the units the dense leg named
    in it. A chunk of ``found`` that holds no term is left out as any such chunk of a document read whole."""
    named = {h["_source"].get("chunk_id"): h for h in found}
    out = []
    for hit in whole:
        known = named.get(hit["_source"].get("chunk_id"))
        units = known.get("inner_hits", {}).get(UNITS_FIELD) if known else None
        out.append({**hit, "inner_hits": {UNITS_FIELD: units}} if units else hit)
    return out


def document_signals(hits: list[dict[str, Any]], lexical_weight: float, similarity: Similarity | None,
                     dense_floor: float | None, chunks: dict[str, list[dict[str, Any]]] | None,
                     whole: Mapping[str, list[dict[str, Any]]] | None = None,
                     naming: frozenset[str] = frozenset(), aside: frozenset[str] = frozenset()) -> Signals:
    """Per document: its candidate chunks, its term weights, each chunk's unit scores and unit cosines. A
    document read whole (its id in ``whole``: every chunk of it that holds a query term came) has those chunks
    as candidates (its search candidates where none does), and more of its units are embedded where the engine
    named none. ``naming``: term keys no passage is chosen by (the words of a designation the query names)."""
    whole = whole or {}
    ids = [str(hit["_source"].get("doc_id")) for hit in hits]
    read = [bool(whole.get(i)) for i in ids]
    found = [read_whole_chunks(chunks_of, whole[i]) if r else chunks_of
             for i, r, chunks_of in zip(ids, read, document_chunks(hits, chunks), strict=True)]
    groups = [document_candidates(f, lexical_weight, aside) for f in found]
    # a chunk without a term is not read for a document read whole (measured: no set loses by it)
    groups = [[c for c in group if c.marked.marks] or group if r else group for group, r in zip(groups, read,
                                                                                                  strict=True)]
    weights = [{t: w for t, w in term_weights([c.marked for c in group]).items() if t not in naming}
               for group in groups]
    lexical = [[lexical_scores(c.marked, split_units(c.marked.text), w) for c in group]
               for group, w in zip(groups, weights, strict=True)]
    units = [WHOLE_DOCUMENT_SEMANTIC_UNITS if r else SEMANTIC_UNITS for r in read]
    return groups, weights, lexical, unit_similarities(groups, lexical, similarity, dense_floor, units, read)


def map_hits(hits: list[dict[str, Any]], include_context: bool, max_chunks: int, passage_chars: int,
             lexical_weight: float, similarity: Similarity | None = None,
             phrases: tuple[str, ...] = (), dense_floor: float | None = None,
             chunks: dict[str, list[dict[str, Any]]] | None = None,
             model: Model | None = None,
             whole: Mapping[str, list[dict[str, Any]]] | None = None,
             naming: frozenset[str] = frozenset(), aside: frozenset[str] = frozenset()) -> list[DocumentResult]:
    """Collapsed hits → documents, each with the passages of its chunks that answer best, or, without
    context, a few short highlights. Everything a document's passages are chosen by — term weights, the
    fused scale, the units embedded — is taken over that document's candidate chunks alone: the same
    document shows the same passages whatever else the answer holds (its limit, its page).
    ``phrases``: what the query binds word for word; a passage holding them is shown first.
    ``dense_floor``: the fusion's dense score floor, from which the engine's unit scores are measured.
    ``chunks``: each document's candidate chunks by document id (a chunks request), else the inner hits.
    ``model``: the passage ranker's weights (the shipped ``ranker.MODEL`` by default).
    ``whole``: the documents read whole (document id → every chunk of it that holds a query term: the first
    document of an answer, the one of a call inside it): their best windows are shown wherever they are,
    several of one chunk if they rank so.
    ``naming``: the term keys of the words that name a document in the query (its designations'): no passage is
    chosen by them, in the document named (its running headers) or any other (its references).
    ``aside``: the section kinds (front matter) the query does not ask for, which the ranker weighs down."""
    whole = whole or {}
    groups, weights, lexical, cosines = document_signals(hits, lexical_weight, similarity, dense_floor, chunks,
                                                         whole, naming, aside)
    results = []
    for hit, group, w, cos, lex in zip(hits, groups, weights, cosines, lexical, strict=True):
        top_weight = max(w.values(), default=0.0)
        results.append(map_hit(hit, group, w, include_context, max_chunks, passage_chars, cos,
                               SEMANTIC_WEIGHT * top_weight, phrases, lex, model or MODEL,
                               WHOLE_DOCUMENT_PER_CHUNK if whole.get(str(hit["_source"].get("doc_id"))) else 1))
    return results


def map_hit(hit: dict[str, Any], candidates: list[Candidate], weights: dict[str, float], include_context: bool,
            max_chunks: int, passage_chars: int, cosines: list[dict[int, float]] | None = None,
            semantic_weight: float = 0.0, phrases: tuple[str, ...] = (),
            lexical: list[list[float]] | None = None, model: Model | None = None,
            per_chunk: int = 1) -> DocumentResult:
    """A collapsed hit: the document and the passages of its chunks that answer best (scores scaled to the
    document's). In a normative document (one with a designation) that holds a query term every window of every
    candidate chunk is scored by the learned ``model`` and the chunks are shown in the order of their best window's
    score; in any other a chunk ranks by its fused relevance and its best passage's coverage and meaning, equally.
    ``per_chunk``: how many of a chunk's best windows may be shown in a normative document (one, but inside
    a document, where its passages are all the answer holds)."""
    doc = map_document(hit["_source"], hit.get("_score") or 0.0)
    # the document's similarity is its most similar chunk's (what ``threshold`` admits it by), not its top one's
    doc.similarity = max((s for s in [similarity_of(hit), *(similarity_of(c.hit) for c in candidates)]
                          if s is not None), default=None)
    cosines = cosines or [{} for _ in candidates]
    given: list[list[float] | None] = list(lexical) if lexical else [None] * len(candidates)
    # a document found by meaning alone (no query term in its candidates) shows the passages nearest in meaning:
    # the learned weights read terms first, and no judged question was answered without one
    rows: list[tuple[Candidate, Pending, float, float]]
    if model is not None and doc.designation and weights:
        # shown by their learned scores; each as relevant as its document (the scores are not on the fused
        # scale), so the answer's size admits further passages document by document, the best documents first
        rows = [(candidates[i], p, p.score, 1.0) for i, p in learned_passages(
            candidates, weights, cosines, given, phrases, passage_chars, model.normative, per_chunk)]
    else:
        passages = [choose_passage(c.marked, c.spans, weights, passage_chars, similarity=cos,
                                   semantic_weight=semantic_weight, phrases=phrases, lexical=scores)
                    for c, cos, scores in zip(candidates, cosines, given, strict=True)]
        top_fused = max((c.fused for c in candidates), default=0.0) or 1.0
        top_passage = max((p.score for p in passages), default=0.0) or 1.0
        rows = [(c, Pending.of(p), r, r) for c, p in zip(candidates, passages, strict=True)
                for r in [PASSAGE_SHARE * p.score / top_passage + (1 - PASSAGE_SHARE) * c.fused / top_fused]]
    shown: list[tuple[Candidate, Passage, float]] = []
    # a passage holding the bound phrase first (a chunk can match it in its title or heading alone)
    for candidate, pending, _, rank in sorted(rows, key=lambda t: (not t[1].has_phrases, -t[2])):
        passage = pending.passage  # made only now: most windows chosen in a chunk are never shown
        if passage.text and not is_contents(passage.text) and not overlaps(passage, [p for _, p, _ in shown]):
            shown.append((candidate, passage, rank))
        if len(shown) == max_chunks:
            break
    best = shown[0][2] if shown and shown[0][2] > 0 else 1.0
    if include_context:
        doc.context_chunks = [map_chunk_passage(c, p, doc.relevance_score * r / best) for c, p, r in shown]
    else:
        lines = (marked_snippet(" ".join(with_marks(c.marked, p.start, p.end).split()), HIGHLIGHT_CHARS)
                 for c, p, _ in shown)
        doc.highlights = list(dict.fromkeys(line for line in lines if line))[:3]
    return doc


def chunk_contexts(candidates: list[Candidate], cosines: list[dict[int, float]],
                   lexical: list[list[float] | None], weights: dict[str, float], size: int,
                   values: bool = True) -> list[ChunkContext]:
    """Each candidate chunk's units and signals, on the document's scale (``values``: with whether each unit
    states a value, read now)."""
    out = []
    units_of = [split_units(c.marked.text) or [(0, len(c.marked.text))] for c in candidates]
    counts = units_digits_and_chars([c.marked.text for c in candidates], units_of)
    for c, cos, scores, units, (digits, chars) in zip(candidates, cosines, lexical, units_of, counts, strict=True):
        if scores is None or len(scores) != len(units):
            scores = lexical_scores(c.marked, units, weights)
        out.append(ChunkContext(c.marked, c.spans, frozenset(s.offset for s in c.spans), units, scores, cos,
                                unit_values(c.marked, units) if values else None,
                                c.marked.unit_terms(units), digits, chars, size, c.aside))
    return out


Windows = list[tuple[tuple[int, int], list[float]]]


def document_windows(contexts: list[ChunkContext], doc: DocumentTerms, phrases: tuple[str, ...]
                     ) -> list[tuple[Windows, list[tuple[int, int]]]]:
    """Per chunk, its candidate windows with their features, and where the bound phrases occur in it."""
    out = []
    for ctx in contexts:
        windows, occurrences = candidate_windows(ctx.chunk, ctx.spans, ctx.units, ctx.lexical, ctx.similarity,
                                                 phrases, ctx.size)
        out.append(([(w, window_features(ctx, w, doc)) for w in windows], occurrences))
    return out


def learned_passages(candidates: list[Candidate], weights: dict[str, float], cosines: list[dict[int, float]],
                     lexical: list[list[float] | None], phrases: tuple[str, ...], size: int,
                     model: dict[str, float], per_chunk: int = 1) -> list[tuple[int, Pending]]:
    """Each candidate's best window by the learned score (its ``per_chunk`` best that do not overlap), as
    passages scored by it (made when read), each with its candidate's index."""
    contexts = chunk_contexts(candidates, cosines, lexical, weights, size, values=False)
    doc = DocumentTerms.of(weights)
    passages = []
    for i, (ctx, (windows, occurrences)) in enumerate(zip(contexts, document_windows(contexts, doc, phrases),
                                                          strict=True)):
        chosen = best_windows(ctx, windows, model, per_chunk) if per_chunk > 1 else [best_window(ctx, windows, model)]
        passages += [(i, Pending(functools.partial(passage_of, ctx.chunk, ctx.spans, ctx.units,
                                                   leading_clause_trimmed(ctx, window), size, occurrences, phrases,
                                                   score), score, bool(phrases))) for score, window in chosen]
    return passages


