"""The text leg by operator (OR, AUTO, AND, PHRASE) and what each operator binds every leg to.

Each operator is one row of two tables: how its scoring text leg is built, and what every result must satisfy
(a filter, so the dense leg is bound by it too). User text only reaches ``match``-family queries.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from service.embedders.navec import STOP_WORDS
from service.engine.fields import PHRASE_FIELDS
from service.engine.index_admin.templates import code_token_pattern, synonym_phrases
from service.search.answer.words import term_key
from service.search.request.contract import Operator
from service.search.request.parse import ParsedQuery
from service.settings import DEFAULT_TEXT_FIELDS

TEXT_FIELDS = DEFAULT_TEXT_FIELDS

def build_bm25_leg(text: str, operator: Operator = "AND", fields: tuple[str, ...] = TEXT_FIELDS,
                   match_type: str = "most_fields", minimum_should_match: str | None = None) -> dict[str, Any]:
    """BM25 over the analyzed text fields; ``operator`` decides whether every term must match, or
    ``minimum_should_match`` how many. Words (OR, AUTO): a ``.codes`` subfield of the text (its words lowercased,
    unstemmed, no stop word left out) is asked for the query's words without its stop words (``code_words``), as
    the stemmed fields are: «на», «какой», «быть» made the engine walk postings of nearly every chunk (two thirds
    of a top-300 search at 1 M chunks) for a bonus every chunk shares."""
    if operator == "AND" or not any(is_text_code_field(f) for f in fields):
        return {"multi_match": _leg(text, operator, fields, match_type, minimum_should_match)}
    codes = code_words(text)
    if len(codes) == len(code_tokens(text)):  # no stop word: every field, every word
        return {"multi_match": _leg(text, operator, fields, match_type, minimum_should_match)}
    plain = tuple(f for f in fields if not is_text_code_field(f))
    leg = {"multi_match": _leg(text, operator, plain, match_type, minimum_should_match)}
    if not codes:
        return leg
    coded = {"multi_match": _leg(" ".join(codes), operator, tuple(f for f in fields if is_text_code_field(f)),
                                 match_type, minimum_should_match)}
    return {"bool": {"should": [leg, coded], "minimum_should_match": 1}}


def _leg(text: str, operator: Operator, fields: tuple[str, ...], match_type: str,
         minimum_should_match: str | None) -> dict[str, Any]:
    leg: dict[str, Any] = {"query": text, "fields": list(fields), "type": match_type,
                           "operator": "and" if operator == "AND" else "or"}
    if minimum_should_match and operator == "AUTO":
        leg["minimum_should_match"] = minimum_should_match
    return leg


def is_text_code_field(field: str) -> bool:
    """A ``.codes`` subfield of a chunk's text or title (the designation's own is asked every word: «СП»)."""
    return ".codes" in field and not field.startswith("designation.")


def code_tokens(text: str) -> list[str]:
    """The query's words as the code fields' tokenizer splits them (``code_tokens`` of the index template)."""
    return [w for w in re.split(code_token_pattern(), text) if w]


def code_words(text: str) -> list[str]:
    """``code_tokens`` without the stop words the stemmed fields' analyzer leaves out (and the question words the
    navec average leaves out), in order."""
    return [w for w in code_tokens(text) if w.strip("?!.…-").lower().replace("ё", "е") not in STOP_WORDS]


#: the most words an AND query checks one by one (the contract bounds a query at 500 characters)
MAX_AND_WORDS = 64


@lru_cache(maxsize=1)
def multiword_synonyms() -> tuple[frozenset[str], ...]:
    """The stems of each several-word side of the shipped synonym rules («проект производства работ»)."""
    return tuple(frozenset(map(term_key, words)) for words in synonym_phrases())


def may_hold_synonym(text: str) -> bool:
    """Whether the query holds every word of a several-word synonym (its words then admit a chunk only
    together, in one field, where the abbreviation stands: «ППР»)."""
    keys = {term_key(word) for word in text.split()}
    return any(side <= keys for side in multiword_synonyms())


def word_fields(word: str, fields: tuple[str, ...]) -> list[str]:
    """Where one word of AND can match: a word without digits matches a ``.codes`` subfield (the same text
    lowercased, unstemmed) only where it matches its stemmed parent, so only the parents and the designation
    are asked (a third fewer postings to walk); a code («54.13330», «12.1.004-91») is asked everywhere."""
    if any(ch.isdigit() for ch in word):
        return list(fields)
    return [f for f in fields if ".codes" not in f or f.startswith("designation.")]


def build_every_word(text: str, fields: tuple[str, ...] = TEXT_FIELDS, match_type: str = "most_fields",
                     ) -> dict[str, Any]:
    """AND's admission, a filter (it scores nothing): every word somewhere in the chunk's fields — «высота
    комнат СП 54.13330» admits the chunk whose text holds the words and whose title the designation (a
    ``multi_match`` with operator AND asks each field for all of them). Each word must match some field (a
    stop word binds nothing); when the query holds a several-word synonym, the whole query in one field also
    admits a chunk («проект производства работ» matches a chunk saying ППР only so)."""
    words = list(dict.fromkeys(text.split()))[:MAX_AND_WORDS]
    each = {"bool": {"filter": [{"multi_match": {"query": word, "fields": word_fields(word, fields),
                                                 "type": "best_fields", "operator": "and", "zero_terms_query": "all"}}
                                for word in words]}}
    if not may_hold_synonym(text):
        return each
    return {"bool": {"should": [each, build_bm25_leg(text, "AND", fields, match_type)], "minimum_should_match": 1}}


def build_phrase(text: str) -> dict[str, Any]:
    return {"multi_match": {"query": text, "fields": list(PHRASE_FIELDS), "type": "phrase"}}


@dataclass(frozen=True)
class LegOptions:
    """How a text leg is asked: the fields, the ``multi_match`` type, AUTO's ``minimum_should_match``, and
    whether the request's filter already holds the operator's admission (``bound``: the leg only scores)."""

    fields: tuple[str, ...] = TEXT_FIELDS
    match_type: str = "most_fields"
    minimum_should_match: str | None = None
    bound: bool = False


def _phrase_leg(parsed: ParsedQuery, operator: Operator, options: LegOptions) -> dict[str, Any]:
    return build_phrase(parsed.plain)


def _every_word_leg(parsed: ParsedQuery, operator: Operator, options: LegOptions) -> dict[str, Any]:
    """AND: the quoted parts as phrases and the words' BM25 (as in OR), admitted by every word unless bound."""
    parts = [build_phrase(p) for p in parsed.phrases]
    if parsed.terms:
        parts.append(build_bm25_leg(parsed.terms, "OR", options.fields, options.match_type))
    scored = parts[0] if len(parts) == 1 else {"bool": {"must": parts}}
    if options.bound or not parsed.terms:
        return scored
    return {"bool": {"must": scored,
                     "filter": [build_every_word(parsed.terms, options.fields, options.match_type)]}}


def _words_leg(parsed: ParsedQuery, operator: Operator, options: LegOptions) -> dict[str, Any]:
    """OR and AUTO: the words (AUTO: ``minimum_should_match`` of them), AUTO's "straight-quoted" phrases
    required unless bound, the other quoted parts adding score."""
    words = build_bm25_leg(parsed.plain, operator, options.fields, options.match_type, options.minimum_should_match)
    required = [build_phrase(p) for p in parsed.exact] if operator == "AUTO" and not options.bound else []
    bonus = [build_phrase(p) for p in parsed.phrases if operator == "OR" or p not in parsed.exact]
    if not required and not bonus:
        return words
    query: dict[str, Any] = {"bool": {"must": [words, *required] if required else words}}
    if bonus:
        query["bool"]["should"] = bonus
    return query


#: the scoring text leg of each operator
TEXT_LEGS: dict[Operator, Callable[[ParsedQuery, Operator, LegOptions], dict[str, Any]]] = {
    "PHRASE": _phrase_leg, "AND": _every_word_leg, "AUTO": _words_leg, "OR": _words_leg,
}

#: the phrases each operator requires word for word
BOUND_PHRASES: dict[Operator, Callable[[ParsedQuery], tuple[str, ...]]] = {
    "PHRASE": lambda parsed: (parsed.plain,) if parsed.plain else (),
    "AND": lambda parsed: parsed.phrases,
    "AUTO": lambda parsed: parsed.exact,
    "OR": lambda parsed: (),
}


def _bindings(parsed: ParsedQuery, operator: Operator, fields: tuple[str, ...],
              match_type: str) -> list[dict[str, Any]]:
    """What each operator binds: PHRASE the whole phrase, AND every quoted part and every word, AUTO its
    "straight-quoted" phrases, OR nothing."""
    if operator == "PHRASE":
        return [build_phrase(parsed.plain)]
    clauses = [build_phrase(p) for p in BOUND_PHRASES[operator](parsed)]
    if operator == "AND" and parsed.terms:
        clauses.append(build_every_word(parsed.terms, fields, match_type))
    return clauses


def build_text_query(parsed: ParsedQuery, operator: Operator, fields: tuple[str, ...] = TEXT_FIELDS,
                     match_type: str = "most_fields", minimum_should_match: str | None = None,
                     bound: bool = False) -> dict[str, Any]:
    """The scoring text leg (``TEXT_LEGS``). OR: any word; quoted parts only add score (Russian quotes usually
    name a work, «Чужой»: TyDi-ru BM25 nDCG@10 0.916 → 0.921 against phrase-or-terms). AUTO:
    ``minimum_should_match`` of the words; "straight quotes" are required phrases, «guillemets» add score.
    AND: every word and every quoted part, scored as the words' BM25. PHRASE: the whole query as one phrase.
    ``bound``: the request's filter already holds the admission (``build_binding``), evaluated once."""
    return TEXT_LEGS[operator](parsed, operator, LegOptions(fields, match_type, minimum_should_match, bound))


def build_binding(parsed: ParsedQuery, operator: Operator, fields: tuple[str, ...] = TEXT_FIELDS,
                  match_type: str = "most_fields") -> dict[str, Any] | None:
    """What every result must satisfy whatever the leg, as a filter; None when nothing binds."""
    clauses = _bindings(parsed, operator, fields, match_type)
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"bool": {"filter": clauses}}


def binding_phrases(parsed: ParsedQuery, operator: Operator) -> tuple[str, ...]:
    """The phrases every result must hold word for word (what ``build_binding`` binds as phrases)."""
    return BOUND_PHRASES[operator](parsed)


def build_multi_binding(queries: list[ParsedQuery], operator: Operator, fields: tuple[str, ...] = TEXT_FIELDS,
                        match_type: str = "most_fields") -> dict[str, Any] | None:
    """Several phrasings: a result must satisfy the binding of at least one of them."""
    bindings = [build_binding(q, operator, fields, match_type) for q in queries]
    if any(b is None for b in bindings):
        return None
    return bindings[0] if len(bindings) == 1 else {"bool": {"should": bindings, "minimum_should_match": 1}}


def build_multi_text_query(queries: list[ParsedQuery], operator: Operator, fields: tuple[str, ...] = TEXT_FIELDS,
                           match_type: str = "most_fields", minimum_should_match: str | None = None,
                           bound: bool = False) -> dict[str, Any]:
    """Several phrasings: a chunk scores by its best-matching phrasing."""
    legs = [build_text_query(q, operator, fields, match_type, minimum_should_match, bound) for q in queries]
    return legs[0] if len(legs) == 1 else {"dis_max": {"queries": legs}}
