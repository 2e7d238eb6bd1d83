"""Pure ``build_*`` functions producing OpenSearch request bodies; no I/O here.

The vector field is always excluded from ``_source`` in responses (it is kept in the index through
k-NN derived source, so a reindex still carries it). User text only ever reaches ``match``-family
queries and suggesters, never ``query_string``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from service.designations import find_designation, parse_designation
from service.errors import InvalidQuery
from service.index_admin.templates import load_json
from service.query.contract import Operator, SearchRequest
from service.query.parse import ParsedQuery
from service.query.passages import POST, PRE, term_key
from service.settings import DEFAULT_TEXT_FIELDS, SearchSettings

Route = Literal["hybrid", "bm25", "knn"]

VECTOR_FIELD = "embedding"
TEXT_FIELDS = DEFAULT_TEXT_FIELDS
PHRASE_FIELDS = ("text", "title", "section_title", "text.codes")
UNITS_FIELD = "units"
SOURCE_EXCLUDES = {"excludes": [VECTOR_FIELD, UNITS_FIELD]}
#: a chunk's nearest units the dense leg names (its inner hits): the seeds of a semantic passage
UNIT_HITS = 5
# What a search result shows: the document's fields on the collapsed hit, the chunk's on its inner hits
# (the rest — whole text of the top chunk, hashes, clause lists, groups — would triple the response).
# A chunk's text comes through the engine's highlighter, whole, with the query's terms marked: the service
# cuts the answering passage from it (service/query/passages.py), labelled by the chunk's ``spans``.
DOCUMENT_FIELDS = ["doc_id", "title", "file_name", "designation", "file_path", "file_type", "superseded_by",
                   "superseded_by_designation"]
#: a chunk of an edition the archive holds a newer one of (set by the ingest, ingest/links.py)
REPLACED = {"exists": {"field": "superseded_by"}}
#: one chunk per document: a lookup or count of documents reads their first chunks (document fields are on each)
FIRST_CHUNK = {"term": {"chunk_index": 0}}
REPLACED_BOOST = 0.75  # eval/editions: 12 of 12 current first, both shown in 6; 0.5 hid the old edition from most
MOST_CITED = 20
CHUNK_FIELDS = ["chunk_id", "chunk_index", "page_number", "page_label", "page_end", "clause", "spans",
                "section_title"]
HIGHLIGHT_TAGS = {"pre_tags": [PRE], "post_tags": [POST]}
#: further chunks of each document fetched beyond ``max_chunks``, so they can be re-ranked by fused relevance:
#: where the index keeps a static embedder's unit vectors, and elsewhere (``SearchSettings.extra_candidates``)
EXTRA_CANDIDATES, EXTRA_CANDIDATES_WITHOUT_UNITS = 1, 5
#: the most copies (paths of one content) a result lists
MAX_COPIES = 20


def build_bm25_leg(text: str, operator: Operator = "AND", fields: tuple[str, ...] = TEXT_FIELDS,
                   match_type: str = "most_fields", minimum_should_match: str | None = None) -> dict[str, Any]:
    """BM25 over the analyzed text fields; ``operator`` decides whether every term must match, or
    ``minimum_should_match`` how many."""
    leg: dict[str, Any] = {"query": text, "fields": list(fields), "type": match_type,
                           "operator": "and" if operator == "AND" else "or"}
    if minimum_should_match and operator == "AUTO":
        leg["minimum_should_match"] = minimum_should_match
    return {"multi_match": leg}


#: the most words an AND query checks one by one (the contract bounds a query at 500 characters)
MAX_AND_WORDS = 64


@lru_cache(maxsize=1)
def multiword_synonyms() -> tuple[frozenset[str], ...]:
    """The stems of each several-word side of the shipped synonym rules («проект производства работ»)."""
    rules = load_json("chunks.json")["template"]["settings"]["analysis"]["filter"]["ru_abbreviations"]["synonyms"]
    sides = (side.split() for rule in rules for side in rule.replace("=>", ",").split(","))
    return tuple(frozenset(map(term_key, words)) for words in sides if len(words) > 1)


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


def build_text_query(parsed: ParsedQuery, operator: Operator, fields: tuple[str, ...] = TEXT_FIELDS,
                     match_type: str = "most_fields", minimum_should_match: str | None = None,
                     bound: bool = False) -> dict[str, Any]:
    """The scoring text leg.

    OR: any word; quoted parts only add score (Russian quotes usually name a work, «Чужой»: TyDi-ru BM25
    nDCG@10 0.916 → 0.921 against phrase-or-terms). AUTO: ``minimum_should_match`` of the words; "straight
    quotes" are required phrases (left to the filter when ``bound``), «guillemets» add score. AND: every word and every quoted part, scored as
    the words' BM25 (as in OR); ``bound``: the request's filter already holds AND's admission
    (``build_binding``), so the leg only scores (the admission evaluated once, not once more per leg).
    PHRASE: the whole query as one phrase."""
    if operator == "PHRASE":
        return build_phrase(parsed.plain)
    if operator == "AND":
        parts = [build_phrase(p) for p in parsed.phrases]
        if parsed.terms:
            parts.append(build_bm25_leg(parsed.terms, "OR", fields, match_type))
        scored = parts[0] if len(parts) == 1 else {"bool": {"must": parts}}
        if bound or not parsed.terms:
            return scored
        return {"bool": {"must": scored, "filter": [build_every_word(parsed.terms, fields, match_type)]}}
    words = build_bm25_leg(parsed.plain, operator, fields, match_type, minimum_should_match)
    required = [build_phrase(p) for p in parsed.exact] if operator == "AUTO" and not bound else []
    bonus = [build_phrase(p) for p in parsed.phrases if operator == "OR" or p not in parsed.exact]
    if not required and not bonus:
        return words
    query: dict[str, Any] = {"bool": {"must": [words, *required] if required else words}}
    if bonus:
        query["bool"]["should"] = bonus
    return query


def build_binding(parsed: ParsedQuery, operator: Operator, fields: tuple[str, ...] = TEXT_FIELDS,
                  match_type: str = "most_fields") -> dict[str, Any] | None:
    """What every result must satisfy whatever the leg, as a filter: AND every word (``build_every_word``)
    and every quoted part, PHRASE the whole phrase, AUTO its "straight-quoted" phrases, OR nothing. None
    when nothing binds."""
    if operator == "PHRASE":
        return build_phrase(parsed.plain)
    phrases = [build_phrase(p) for p in (parsed.phrases if operator == "AND" else
                                         parsed.exact if operator == "AUTO" else ())]
    if operator == "AND" and parsed.terms:
        phrases.append(build_every_word(parsed.terms, fields, match_type))
    if not phrases:
        return None
    return phrases[0] if len(phrases) == 1 else {"bool": {"filter": phrases}}


def binding_phrases(parsed: ParsedQuery, operator: Operator) -> tuple[str, ...]:
    """The phrases every result must hold word for word (what ``build_binding`` binds as phrases)."""
    if operator == "PHRASE":
        return (parsed.plain,) if parsed.plain else ()
    return parsed.phrases if operator == "AND" else parsed.exact if operator == "AUTO" else ()


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


def build_knn_leg(vector: list[float], k: int, field: str = VECTOR_FIELD,
                  units: Literal["off", "max", "units"] = "off", expand: bool = False) -> dict[str, Any]:
    """The dense leg: the ``k`` chunks nearest to ``vector`` — by their own vector (``off``), by their best
    unit's (``units``; a nested k-NN query, whose inner hits name each chunk's nearest units), or by the
    nearer of the two (``max``). A chunk without unit vectors (an older index) is found by its own vector
    under ``max``. ``expand``: the inner hits score every unit of those chunks, not only the units the graph
    search reached (a third more engine CPU a call: docs/scale.md)."""
    chunk = {"knn": {field: {"vector": vector, "k": k}}}
    if units == "off":
        return chunk
    search: dict[str, Any] = {"vector": vector, "k": k, **({"expand_nested_docs": True} if expand else {})}
    # ignore_unmapped: an index built before unit vectors (no ``units`` mapping) is searched by chunk vectors
    nested = {"nested": {"path": UNITS_FIELD, "score_mode": "max", "ignore_unmapped": True,
                         "query": {"knn": {f"{UNITS_FIELD}.{VECTOR_FIELD}": search}},
                         "inner_hits": {"name": UNITS_FIELD, "size": UNIT_HITS, "_source": [f"{UNITS_FIELD}.o"]}}}
    return nested if units == "units" else {"dis_max": {"queries": [chunk, nested]}}


def escape_wildcard(value: str) -> str:
    return value.replace("\\", "\\\\").replace("*", "\\*").replace("?", "\\?")


def build_source_filter(value: str) -> dict[str, Any]:
    """An absolute path prefix, or a folder/file name fragment anywhere in the path."""
    if value.startswith("/"):
        return {"prefix": {"file_path": value}}
    return {"wildcard": {"file_path": {"value": f"*{escape_wildcard(value)}*"}}}


def build_folder_filter(folder: str) -> dict[str, Any]:
    """Files below ``folder``, whole path segments only: "/a/b" holds "/a/b/c.pdf", not "/a/bc.pdf"."""
    folder = folder.rstrip("/")
    if not folder:
        return {"prefix": {"file_path": "/"}}
    if folder.startswith("/"):
        return {"prefix": {"file_path": folder + "/"}}
    return {"wildcard": {"file_path": {"value": f"*/{escape_wildcard(folder)}/*"}}}


def build_access_filter(groups: list[str]) -> dict[str, Any]:
    return {"terms": {"access_groups": sorted(set(groups))}}


def build_similarity_filter(vector: list[float], threshold: float, field: str = VECTOR_FIELD) -> dict[str, Any]:
    """Chunks whose cosine with ``vector`` is at least ``threshold``: a radial k-NN query, exact in the
    Lucene engine, whose score in cosine space is (1 + cosine) / 2."""
    return {"knn": {field: {"vector": vector, "min_score": (1 + threshold) / 2}}}


def build_similarity_field(vector: list[float], field: str = VECTOR_FIELD) -> dict[str, Any]:
    """A script field with each returned chunk's cosine to ``vector`` (null for a chunk without a vector)."""
    source = (f"if (doc['{field}'].size() == 0) {{ return null; }} "
              f"return cosineSimilarity(params.query_vector, doc['{field}']);")
    return {"similarity": {"script": {"source": source, "params": {"query_vector": vector}}}}


#: chunks of contents, cover and imprint pages (``role``, set at ingest) are never searched; get_document reads them
NOT_CONTENT = {"exists": {"field": "role"}}


def build_filters(request: SearchRequest, groups: list[str]) -> dict[str, Any]:
    """Every filter (AND between kinds, OR within a list), the caller's access groups always among them;
    contents, cover and imprint pages left out."""
    clauses = [build_access_filter(groups)]
    if request.document_types:
        clauses.append({"terms": {"file_type": request.document_types}})
    if request.date_range and (request.date_range.from_ or request.date_range.to):
        bounds: dict[str, str] = {}
        if request.date_range.from_:
            bounds["gte"] = request.date_range.from_.isoformat()
        if request.date_range.to:
            bounds["lte"] = request.date_range.to.isoformat() + "||/d"  # the whole last day, no date overflow
        clauses.append({"range": {"updated_at": bounds}})
    if request.path:
        clauses.append({"terms": {"file_path": request.path}})
    if request.folder:
        clauses.append(build_folder_filter(request.folder))
    if request.source_filter:
        clauses.append(build_source_filter(request.source_filter))
    if request.cites:
        clauses.append(build_cites_filter(request.cites))
    must_not = [NOT_CONTENT, *([REPLACED] if request.current_only else [])]
    return {"bool": {"filter": clauses, "must_not": must_not}}


def build_cites_filter(designation: str) -> dict[str, Any]:
    """Documents citing ``designation``: that edition as cited, or, without an edition, any edition of it."""
    cited = parse_designation(designation)
    if cited.edition is None:
        return {"term": {"cites_family": cited.family}}
    return {"term": {"cites": cited.text}}


def demote_replaced(query: dict[str, Any]) -> dict[str, Any]:
    """The text leg with editions the archive holds a newer one of scored lower, so the current edition ranks
    first when both match (the search does not demote when the query names a designation: then it is the
    one wanted)."""
    return {"boosting": {"positive": query, "negative": REPLACED, "negative_boost": REPLACED_BOOST}}


#: documents counted as contents (a file kept in several folders counts once), exact below 40,000
DOCUMENTS = {"docs": {"cardinality": {"field": "doc_hash", "precision_threshold": 40000}}}
TOTAL_DOCS = "total_docs"


def build_document_count() -> dict[str, Any]:
    """The matching documents, counted under a ``filter`` that admits every hit: a cardinality at the top of
    the request would be run by the engine's dynamic pruning, which re-runs the query on a segment with few
    documents and, under a ``hybrid`` query, can loop without end on a core (OpenSearch issue 22582; pruning
    never runs below a parent aggregation). The count is the same: every hit is admitted."""
    return {"filter": {"match_all": {}}, "aggs": DOCUMENTS}


def document_count(aggregations: dict[str, Any], default: int) -> int:
    """The count ``build_document_count`` asked for, from a response's aggregations."""
    return int(aggregations.get(TOTAL_DOCS, {}).get("docs", {}).get("value", default))



def build_aggregations() -> dict[str, Any]:
    """Facets counted in documents (one per content), not chunks."""
    return {
        TOTAL_DOCS: build_document_count(),
        "document_types": {"terms": {"field": "file_type", "size": 30}, "aggs": DOCUMENTS},
        "date_distribution": {"date_histogram": {"field": "updated_at", "calendar_interval": "month",
                                                 "format": "yyyy-MM", "min_doc_count": 1}, "aggs": DOCUMENTS},
    }


def build_passage_highlight() -> dict[str, Any]:
    """Each chunk's whole text with the query's terms marked by the engine's own analysis (stems, synonyms,
    phrases); a chunk that matches no term (a dense-only hit) comes whole and unmarked."""
    return {"fields": {"text": {"type": "unified", "number_of_fragments": 0, "no_match_size": 100_000}},
            **HIGHLIGHT_TAGS}


def build_collapse(max_chunks: int, vector: list[float] | None = None,
                   extra: int = EXTRA_CANDIDATES) -> dict[str, Any]:
    """One hit per content (``doc_hash``: the same file kept in several folders is one result), with its best
    chunks (``max_chunks`` plus a few candidates to re-rank; a chunk its copies repeat comes once), each whole
    with its terms marked, and each chunk's similarity (its copies: ``build_copies_lookup``)."""
    chunks: dict[str, Any] = {
        "name": "chunks", "size": max_chunks + extra, "_source": {"includes": CHUNK_FIELDS},
        "highlight": build_passage_highlight(), "collapse": {"field": "content_hash"},
    }
    if vector is not None:
        chunks["script_fields"] = build_similarity_field(vector)
    return {"field": "doc_hash", "inner_hits": [chunks]}


def build_copies_lookup(hashes: list[str], scope: dict[str, Any]) -> dict[str, Any]:
    """Every path of each content (``doc_hash``) that the request's filters admit, the access filter among
    them: a result's copies. Asked once for the whole page, by filters alone — as an inner hit of the search
    it ran the whole query again for every result, a third of the engine's time."""
    copies = {"name": "copies", "size": MAX_COPIES, "_source": {"includes": ["doc_id", "file_path"]},
              "collapse": {"field": "doc_id"}, "sort": [{"file_path": "asc"}]}
    return {"query": {"bool": {"filter": [scope, {"terms": {"doc_hash": hashes}}]}}, "size": len(hashes),
            "_source": False, "track_total_hits": False, "collapse": {"field": "doc_hash", "inner_hits": copies}}


def build_suggest(text: str, groups: list[str]) -> dict[str, Any]:
    """A phrase suggester whose candidates are kept only if they match a document the caller may read. Its
    field holds words and word pairs without positions (word triples with positions were a third of the index):
    a candidate must match all its words and word pairs, which is a phrase check for a pair at a time."""
    collate = {"bool": {"must": {"match": {"text.suggest": {"query": "{{suggestion}}", "operator": "and"}}},
                        "filter": build_access_filter(groups)}}
    return {"text": text[:200], "corrected": {"phrase": {
        "field": "text.suggest", "size": 1, "gram_size": 2, "max_errors": 2, "confidence": 1.0,
        "direct_generator": [{"field": "text.suggest", "suggest_mode": "missing", "min_word_length": 3}],
        "collate": {"query": {"source": collate}, "prune": False},
    }}}


@dataclass(frozen=True)
class SearchSettingsView:
    """The settings a plan depends on (a pure function needs them passed in)."""

    text_fields: tuple[str, ...]
    match_type: str
    auto_minimum_should_match: str | None
    knn_k: int
    pagination_depth: int
    knn_units: Literal["off", "max", "units"] = "off"
    extra_candidates: int = EXTRA_CANDIDATES
    knn_units_expand: bool = False

    @classmethod
    def of(cls, search: SearchSettings, unit_vectors: bool = True, units_kept: bool = True) -> SearchSettingsView:
        """The view of ``search``; ``unit_vectors``: whether the index keeps a static embedder's unit vectors
        (fewer candidates then); ``units_kept``: whether it keeps unit vectors at all (else the dense leg
        searches chunk vectors alone, and the service scores a static embedder's units itself)."""
        extra = search.extra_candidates
        if extra is None:
            extra = EXTRA_CANDIDATES if unit_vectors else EXTRA_CANDIDATES_WITHOUT_UNITS
        return cls(tuple(search.text_fields), search.text_match_type, search.auto_minimum_should_match,
                   search.knn_k, search.pagination_depth, search.knn_units if units_kept else "off", extra,
                   search.knn_units_expand)


@dataclass(frozen=True)
class SearchPlan:
    """Everything a search request needs, decided before the body is built."""

    route: Route
    legs: tuple[dict[str, Any], ...]
    filters: dict[str, Any]
    #: the request's own filters (access included), without the operator's binding or the threshold
    scope: dict[str, Any]
    offset: int
    size: int
    max_chunks: int
    pagination_depth: int
    vector: list[float] | None
    suggest_text: str | None
    groups: tuple[str, ...]
    fallback_reason: str | None = None
    extra_candidates: int = EXTRA_CANDIDATES


def choose_route(mode: str, vector: list[float] | None) -> Route:
    """The legs that run: the requested mode, BM25 alone when the query has no vector."""
    if mode == "fulltext" or vector is None:
        return "bm25"
    return "knn" if mode == "semantic" else "hybrid"


def plan_search(request: SearchRequest, parsed: list[ParsedQuery], groups: tuple[str, ...],
                vector: list[float] | None, offset: int, view: SearchSettingsView,
                fallback_reason: str | None = None) -> SearchPlan:
    """The whole search decided from the request, the caller's groups and the query vector; no I/O.

    Every filter of the request and the access filter bind every leg (a hybrid-level filter); AND, PHRASE
    and required phrases bind the dense leg too; ``threshold`` is a radial k-NN filter."""
    if request.threshold is not None and vector is None:
        raise InvalidQuery("threshold needs the query's vector, and this query has none"
                           + (f" ({fallback_reason})" if fallback_reason else ""), details={"field": "threshold"})
    route = choose_route(request.search_mode, vector)
    if route != "bm25" or request.search_mode == "fulltext":
        fallback_reason = None
    scope = build_filters(request, list(groups))
    filters = {"bool": {**scope["bool"], "filter": list(scope["bool"]["filter"])}}
    binding = build_multi_binding(parsed, request.operator, view.text_fields, view.match_type)
    if binding is not None:
        filters["bool"]["filter"].append(binding)  # every leg, the dense one too, only adds what the operator admits
    # several phrasings bind by any one of them: each scoring leg then keeps its own admission
    text = build_multi_text_query(parsed, request.operator, view.text_fields, view.match_type,
                                  view.auto_minimum_should_match, bound=binding is not None and len(parsed) == 1)
    if not any(find_designation(p.plain) for p in parsed):
        text = demote_replaced(text)
    # a binding operator (AND, PHRASE) admits few chunks: the chunk leg searches among them alone (efficient
    # filtering); the unit leg would search every unit and keep the few it admits (1.5x the engine's CPU a call)
    units = view.knn_units if binding is None else "off"
    knn = (build_knn_leg(vector, view.knn_k, units=units, expand=view.knn_units_expand)
           if vector is not None else None)
    legs = {"bm25": (text,), "knn": (knn,), "hybrid": (text, knn)}[route]
    if request.threshold is not None and vector is not None:
        filters["bool"]["filter"].append(build_similarity_filter(vector, request.threshold))
    first = parsed[0]
    wordy = any(len(w) >= 3 and w.isalpha() for w in first.plain.split())
    return SearchPlan(route=route, legs=tuple(leg for leg in legs if leg is not None), filters=filters, scope=scope,
                      offset=offset, size=request.limit, max_chunks=request.max_chunks,
                      pagination_depth=view.pagination_depth, vector=vector,
                      suggest_text=first.plain if route != "knn" and wordy else None, groups=groups,
                      fallback_reason=fallback_reason, extra_candidates=view.extra_candidates)


def build_search_body(query: dict[str, Any], size: int) -> dict[str, Any]:
    return {"query": query, "size": size, "_source": SOURCE_EXCLUDES}


def build_hybrid_body(
    legs: list[dict[str, Any]], size: int, filter_: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A native ``hybrid`` query over ``legs``; run it with a normalization or RRF search pipeline."""
    hybrid: dict[str, Any] = {"queries": legs}
    if filter_ is not None:
        hybrid["filter"] = filter_
    return build_search_body({"hybrid": hybrid}, size)


def build_request(plan: SearchPlan) -> dict[str, Any]:
    """The one request of a search: hybrid query, per-document grouping, facets, suggestions."""
    body = build_hybrid_body(list(plan.legs), plan.size, plan.filters)
    body["query"]["hybrid"]["pagination_depth"] = plan.pagination_depth
    body["from"] = plan.offset
    body["_source"] = {"includes": DOCUMENT_FIELDS}
    body["collapse"] = build_collapse(plan.max_chunks, plan.vector, plan.extra_candidates)
    body["aggs"] = build_aggregations()
    body["track_total_hits"] = True
    if plan.vector is not None:
        body["script_fields"] = build_similarity_field(plan.vector)
    if plan.suggest_text:
        body["suggest"] = build_suggest(plan.suggest_text, list(plan.groups))
    return body


def build_document_query(doc_id: str, groups: list[str]) -> dict[str, Any]:
    return {"bool": {"filter": [{"term": {"doc_id": doc_id}}, build_access_filter(groups)]}}


def build_chunks_by_index(doc_id: str, indexes: list[int], groups: list[str]) -> dict[str, Any]:
    query = build_document_query(doc_id, groups)
    query["bool"]["filter"].append({"terms": {"chunk_index": indexes}})
    return {"query": query, "size": len(indexes), "_source": SOURCE_EXCLUDES, "sort": [{"chunk_index": "asc"}]}


def build_clause_lookup(doc_id: str, clause: str, groups: list[str]) -> dict[str, Any]:
    """The first chunk of a document in which ``clause`` starts or runs (access filter included)."""
    query = build_document_query(doc_id, groups)
    query["bool"]["filter"].append({"term": {"clauses": clause}})
    return {"query": query, "size": 1, "_source": ["chunk_index"], "sort": [{"chunk_index": "asc"}]}


def build_visible_ids(doc_ids: list[str], groups: list[str]) -> dict[str, Any]:
    """Which of ``doc_ids`` the caller may read (one chunk each)."""
    query = {"bool": {"filter": [{"terms": {"doc_id": doc_ids}}, FIRST_CHUNK, build_access_filter(groups)]}}
    return {"query": query, "size": len(doc_ids), "_source": ["doc_id"]}


def build_documents_matching_any(clauses: list[dict[str, Any]], groups: list[str]) -> dict[str, Any]:
    """The documents the caller may read that match any of ``clauses`` (one chunk per document)."""
    return {"bool": {"filter": [FIRST_CHUNK, build_access_filter(groups)], "should": clauses,
                     "minimum_should_match": 1}}


def build_cited_lookup(cites: list[str], groups: list[str]) -> dict[str, Any]:
    """The archive's documents a list of cited designations names: by designation, or by family for one
    cited without an edition (access filter included)."""
    undated = [d for d in cites if parse_designation(d).edition is None]
    clauses = [{"terms": {"designation": cites}}, *([{"terms": {"family": undated}}] if undated else [])]
    return {"query": build_documents_matching_any(clauses, groups), "size": 2 * len(cites),
            "_source": ["doc_id", "designation", "family", "edition"]}


def build_citing_lookup(designation: str, family: str | None, groups: list[str], size: int) -> dict[str, Any]:
    """Documents citing ``designation`` as such, or its family without an edition (access filter included)."""
    clauses = [{"term": {"cites": designation}}, *([{"term": {"cites": family}}] if family else [])]
    return {"query": build_documents_matching_any(clauses, groups), "size": size,
            "_source": ["doc_id", "designation", "title", "file_name"],
            "sort": [{"designation": "asc"}, {"doc_id": "asc"}]}


def build_sources_body(groups: list[str], folder: str | None = None) -> dict[str, Any]:
    """What the caller may read (below ``folder``, when given): documents (one per content, copies in several
    folders counted once; in each folder they are in), chunks, types, folders, dates."""
    scope = [build_access_filter(groups), *([build_folder_filter(folder)] if folder is not None else [])]
    return {"size": 0, "query": {"bool": {"filter": scope}}, "track_total_hits": True,
            "aggs": {TOTAL_DOCS: build_document_count(),
                     "document_types": {"terms": {"field": "file_type", "size": 30}, "aggs": DOCUMENTS},
                     "folders": {"terms": {"field": "folder", "size": 50}, "aggs": DOCUMENTS},
                     "earliest": {"min": {"field": "updated_at"}}, "latest": {"max": {"field": "updated_at"}},
                     # one chunk per document: a document citing a designation counts once
                     "cited": {"filter": FIRST_CHUNK,
                               "aggs": {"top": {"terms": {"field": "cites", "size": MOST_CITED}}}}}}
