"""A search decided (``plan_search``) and its one request built (``build_request``); pure, no I/O.

The parts come from their own modules: the text leg by operator (``operators``), filters (``filters``),
facets (``aggs``); lookups beside a search are in ``lookups``.

The vector field is always excluded from ``_source`` in responses (it is kept in the index through
k-NN derived source, so a reindex still carries it). User text only ever reaches ``match``-family
queries and suggesters, never ``query_string``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from service.embedders.navec import STOP_WORDS
from service.engine.fields import CHUNK_FIELDS, DOCUMENT_FIELDS, UNITS_FIELD, VECTOR_FIELD
from service.errors import InvalidQuery
from service.search.answer.passages import POST, PRE
from service.search.answer.words import FRAME_KEYS, content_keys, term_key
from service.search.citations.designations import designation_words, find_designations, parse_designation
from service.search.dsl.aggs import build_aggregations
from service.search.dsl.filters import build_access_filter, build_filters, demote_replaced, favour_named, unboosted
from service.search.dsl.operators import build_multi_binding, build_multi_text_query
from service.search.dsl.sections import aside_for
from service.search.request.contract import SearchRequest
from service.search.request.parse import ParsedQuery
from service.settings import SearchSettings

Route = Literal["hybrid", "bm25", "knn"]

SOURCE_EXCLUDES = {"excludes": [VECTOR_FIELD, UNITS_FIELD]}
#: a chunk's nearest units the dense leg names (its inner hits): the seeds of a semantic passage
UNIT_HITS = 5
#: the name of the chunks a document's passages are chosen from, in a response (inner hits or aggregation)
CHUNKS = "chunks"
HIGHLIGHT_TAGS = {"pre_tags": [PRE], "post_tags": [POST]}
#: further chunks of each document fetched beyond ``max_chunks``, so they can be re-ranked by fused relevance:
#: where the index keeps a static embedder's unit vectors, and elsewhere (``SearchSettings.extra_candidates``)
EXTRA_CANDIDATES, EXTRA_CANDIDATES_WITHOUT_UNITS = 1, 5
#: the most chunks of one document a call inside it ranks (all of them but in the longest: the 361 norms have
#: 56 at the median, 188 at the 90th percentile); beyond it, those its text leg scores best
WHOLE_DOCUMENT_CHUNKS = 300


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


def build_similarity_filter(vector: list[float], threshold: float, field: str = VECTOR_FIELD) -> dict[str, Any]:
    """Chunks whose cosine with ``vector`` is at least ``threshold``: a radial k-NN query, exact in the
    Lucene engine, whose score in cosine space is (1 + cosine) / 2."""
    return {"knn": {field: {"vector": vector, "min_score": (1 + threshold) / 2}}}


def build_similarity_field(vector: list[float], field: str = VECTOR_FIELD) -> dict[str, Any]:
    """A script field with each returned chunk's cosine to ``vector`` (null for a chunk without a vector)."""
    source = (f"if (doc['{field}'].size() == 0) {{ return null; }} "
              f"return cosineSimilarity(params.query_vector, doc['{field}']);")
    return {"similarity": {"script": {"source": source, "params": {"query_vector": vector}}}}


def build_passage_highlight() -> dict[str, Any]:
    """Each chunk's whole text with the query's terms marked by the engine's own analysis (stems, synonyms,
    phrases); a chunk that matches no term (a dense-only hit) comes whole and unmarked."""
    return {"fields": {"text": {"type": "unified", "number_of_fragments": 0, "no_match_size": 100_000}},
            **HIGHLIGHT_TAGS}


def build_collapse(max_chunks: int, vector: list[float] | None = None,
                   extra: int = EXTRA_CANDIDATES, chunks_inside: bool = True) -> dict[str, Any]:
    """One hit per content (``doc_hash``: the same file kept in several folders is one result); with
    ``chunks_inside``, its best chunks as the collapse's inner hits (``max_chunks`` plus a few candidates to
    re-rank; a chunk its copies repeat comes once), each whole with its terms marked, and each chunk's
    similarity (its copies: ``build_copies_lookup``). The engine runs inner hits as one further search per
    document and shard; they are asked for only where the dense leg names a chunk's nearest units (its nested
    inner hits come back there alone), elsewhere ``build_chunks_request`` fetches every document's at once."""
    if not chunks_inside:
        return {"field": "doc_hash"}
    chunks: dict[str, Any] = {
        "name": CHUNKS, "size": max_chunks + extra, "_source": {"includes": CHUNK_FIELDS},
        "highlight": build_passage_highlight(), "collapse": {"field": "content_hash"},
    }
    if vector is not None:
        chunks["script_fields"] = build_similarity_field(vector)
    return {"field": "doc_hash", "inner_hits": [chunks]}


def build_chunks_request(plan: SearchPlan, doc_ids: list[str]) -> dict[str, Any]:
    """The best chunks of every document of a page in one request (two shard query phases, whatever the page's
    size), as the collapse's inner hits would give them: each document's chunks scored by the legs as one
    ``bool`` (the inner hits' scoring), under the search's own filters; ``max_chunks`` plus the candidates
    to re-rank, each whole with the text leg's terms marked (offsets from the postings, no re-analysis), and
    its similarity to the query."""
    chunks = {"size": plan.max_chunks + plan.extra_candidates, **chunk_fetch(plan)}
    query = {"bool": {"should": list(plan.legs), "minimum_should_match": 1,
                      "filter": [plan.filters, {"terms": {"doc_id": doc_ids}}]}}
    return {"size": 0, "query": query, "track_total_hits": False,
            "aggs": {CHUNKS: {"terms": {"field": "doc_id", "size": len(doc_ids)},
                              "aggs": {CHUNKS: {"top_hits": chunks}}}}}


def build_document_chunks_request(plan: SearchPlan, doc_id: str, size: int = WHOLE_DOCUMENT_CHUNKS) -> dict[str, Any]:
    """Every chunk of one document that its text leg matches, under the search's own filters (its first
    ``size`` by that leg's score, then in reading order; without a text leg, every chunk), each whole with the
    leg's terms marked and its similarity to the query: a call inside one document ranks all its passages,
    not only those of the chunks the legs scored best."""
    query: dict[str, Any] = {"bool": {"filter": [plan.filters, {"term": {"doc_id": doc_id}}]}}
    if plan.text_leg is not None:
        query["bool"].update({"should": [plan.text_leg], "minimum_should_match": 1})
    return {"size": size, "query": query, "track_total_hits": False, "sort": ["_score", {"chunk_index": "asc"}],
            **chunk_fetch(plan)}


def chunk_fetch(plan: SearchPlan) -> dict[str, Any]:
    """What a passage needs of each chunk fetched: its fields (the text whole, read off the highlight when the
    text leg marks it), the text leg's terms marked, and its similarity to the query."""
    fetch: dict[str, Any] = {"_source": {"includes": CHUNK_FIELDS if plan.text_leg else [*CHUNK_FIELDS, "text"]}}
    if plan.text_leg is not None:
        highlight = build_passage_highlight()
        # the text leg alone: with the dense leg in it, the highlighter could not read terms off the postings
        highlight["highlight_query"] = plan.text_leg
        fetch["highlight"] = highlight
    if plan.vector is not None:
        fetch["script_fields"] = build_similarity_field(plan.vector)
    return fetch


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


#: the chunks a call inside one folder chooses each document's passages among
ONE_DOCUMENT_CANDIDATES = 40


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
    first_document_chunks: int = WHOLE_DOCUMENT_CHUNKS
    text_candidates: int = 0
    text_candidates_from: int = 0

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
                   search.knn_units_expand, search.first_document_chunks, search.text_candidates,
                   search.text_candidates_from)


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
    #: the dense leg scores units (a nested k-NN query): their inner hits come with the collapse's inner hits only
    unit_hits: bool = False
    #: a call inside one document (``path`` naming one file, or ``get_document`` with a query): when the answer
    #: holds one document, every chunk of it is a candidate (``build_document_chunks_request``)
    whole_document: bool = False
    #: how many of the first document's chunks holding a query term are read whole (0: none): every one inside
    #: one document, the view's count on a search's first page with a text leg
    first_document_chunks: int = 0
    #: the query's words no passage is chosen by (``unweighted_keys``), as the passages' term keys
    naming: frozenset[str] = frozenset()
    #: the front-matter section kinds the query does not ask for (``ingest.sections.aside_for``): weighed down
    aside: frozenset[str] = frozenset()
    #: how many of the text leg's best chunks a hybrid search fuses (``build_candidates_request``; 0: every match)
    text_candidates: int = 0

    @property
    def text_leg(self) -> dict[str, Any] | None:
        """The leg whose terms the passages mark (every phrasing is inside it); None for the dense leg alone."""
        return None if self.route == "knn" else self.legs[0]


def choose_route(mode: str, vector: list[float] | None) -> Route:
    """The legs that run: the requested mode, BM25 alone when the query has no vector."""
    if mode == "fulltext" or vector is None:
        return "bm25"
    return "knn" if mode == "semantic" else "hybrid"


def plan_search(request: SearchRequest, parsed: list[ParsedQuery], groups: tuple[str, ...],
                vector: list[float] | None, offset: int, view: SearchSettingsView,
                fallback_reason: str | None = None, document: str | None = None,
                readable: int | None = None) -> SearchPlan:
    """The whole search decided from the request, the caller's groups and the query vector; no I/O.

    Every filter of the request and the access filter bind every leg (a hybrid-level filter); AND, PHRASE
    and required phrases bind the dense leg too; ``threshold`` is a radial k-NN filter. ``document``: the
    search runs inside the document of this id (``get_document`` with a query); ``readable``: the chunks the
    caller may read (whether the text leg takes candidates)."""
    if request.threshold is not None and vector is None:
        raise InvalidQuery("threshold needs the query's vector, and this query has none"
                           + (f" ({fallback_reason})" if fallback_reason else ""), details={"field": "threshold"})
    route = choose_route(request.search_mode, vector)
    if route != "bm25" or request.search_mode == "fulltext":
        fallback_reason = None
    scope = build_filters(request, list(groups))
    if document is not None:
        scope["bool"]["filter"].append({"term": {"doc_id": document}})
    filters = {"bool": {**scope["bool"], "filter": list(scope["bool"]["filter"])}}
    binding = build_multi_binding(parsed, request.operator, view.text_fields, view.match_type)
    if binding is not None:
        filters["bool"]["filter"].append(binding)  # every leg, the dense one too, only adds what the operator admits
    # several phrasings bind by any one of them: each scoring leg then keeps its own admission
    text = build_multi_text_query(parsed, request.operator, view.text_fields, view.match_type,
                                  view.auto_minimum_should_match, bound=binding is not None and len(parsed) == 1)
    families = named_families(parsed)
    text = favour_named(text, families) if families else demote_replaced(text)
    # a binding operator (AND, PHRASE) admits few chunks: the chunk leg searches among them alone (efficient
    # filtering); the unit leg would search every unit and keep the few it admits (1.5x the engine's CPU a call)
    units = view.knn_units if binding is None else "off"
    knn = (build_knn_leg(vector, view.knn_k, units=units, expand=view.knn_units_expand)
           if vector is not None else None)
    legs = {"bm25": (text,), "knn": (knn,), "hybrid": (text, knn)}[route]
    if request.threshold is not None and vector is not None:
        filters["bool"]["filter"].append(build_similarity_filter(vector, request.threshold))
    first = parsed[0]
    inside = document is not None or len(request.path) == 1
    wordy = any(len(w) >= 3 and w.isalpha() for w in first.plain.split())
    return SearchPlan(route=route, legs=tuple(leg for leg in legs if leg is not None), filters=filters, scope=scope,
                      offset=offset, size=request.limit, max_chunks=request.max_chunks,
                      pagination_depth=view.pagination_depth, vector=vector,
                      suggest_text=first.plain if route != "knn" and wordy else None, groups=groups,
                      fallback_reason=fallback_reason, extra_candidates=candidates_beyond(request, view),
                      unit_hits=knn is not None and units != "off",
                      whole_document=inside, first_document_chunks=first_read(route, offset, view, inside),
                      naming=unweighted_keys(parsed), aside=aside_for([p.plain for p in parsed]),
                      text_candidates=candidate_count(route, view, inside, readable))


def first_read(route: Route, offset: int, view: SearchSettingsView, whole_document: bool) -> int:
    """How many of the first document's chunks holding a query term a search reads whole: every one (up to
    ``WHOLE_DOCUMENT_CHUNKS``) inside one document, the view's count on a first page with a text leg (its terms
    pick the chunks), none otherwise."""
    if whole_document:
        return WHOLE_DOCUMENT_CHUNKS
    return view.first_document_chunks if route != "knn" and offset == 0 else 0


def candidate_count(route: Route, view: SearchSettingsView, inside: bool, readable: int | None) -> int:
    """How many of the text leg's best chunks a search fuses with the dense leg's: the view's count on every page
    of a walk (its totals count the same candidates on each, and its pages reach every document among them);
    every match (0) for a search inside one document (it matches few), without both legs, or where the caller
    may read fewer than ``view.text_candidates_from`` chunks (``readable``; None: not known)."""
    if route != "hybrid" or inside or (readable is not None and readable < view.text_candidates_from):
        return 0
    return view.text_candidates


def naming_keys(parsed: list[ParsedQuery]) -> frozenset[str]:
    """The term keys of the words that name a document in any phrasing («СП», «158.13330» of «по СП 158.13330»):
    they find the document named (its designation field), but in a passage they mark only its running headers and
    other documents' references."""
    return frozenset(term_key(word) for query in parsed for word in designation_words(query.plain))


def named_families(parsed: list[ParsedQuery]) -> list[str]:
    """The families of the documents the phrasings name («СП 253.1325800» of «по СП 253.1325800.2016»)."""
    return list(dict.fromkeys(parse_designation(d).family for query in parsed for d in find_designations(query.plain)))


def unweighted_keys(parsed: list[ParsedQuery]) -> frozenset[str]:
    """The term keys no passage is chosen by: the words naming a document and those naming the kind of answer
    asked for (``words.FRAME_WORDS``), where the question has a subject besides («требования» alone keeps it)."""
    naming = naming_keys(parsed)
    words = frozenset().union(*(content_keys(query.plain, STOP_WORDS) for query in parsed))
    return naming | FRAME_KEYS if words - naming - FRAME_KEYS else naming


def candidates_beyond(request: SearchRequest, view: SearchSettingsView) -> int:
    """The chunks a document's passages are chosen among beyond those shown: a call inside one file (``path``
    naming one: the second call an agent makes in the document it found) scores its ``ONE_DOCUMENT_CANDIDATES``
    best chunks, an answer of many documents a few more than it shows."""
    if len(request.path) == 1:
        return max(view.extra_candidates, ONE_DOCUMENT_CANDIDATES - request.max_chunks)
    return view.extra_candidates


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


def build_candidates_request(plan: SearchPlan) -> dict[str, Any]:
    """The text leg's best ``plan.text_candidates`` chunks under the search's filters, ids alone: a plain query
    without a total, which Lucene answers by top-k pruning (block-max), scoring a fraction of the matching chunks
    (inside ``hybrid`` every match is scored: OpenSearch 3.6). Unboosted: the demotion only lowers a replaced
    edition, which then ranks within these candidates as in the full query."""
    return {"query": {"bool": {"must": [unboosted(plan.legs[0])], "filter": [plan.filters]}},
            "size": plan.text_candidates, "track_total_hits": False,
            # each hit's id from its doc values: a stored ``_id`` is read from a compressed block (2.3× the took)
            "_source": False, "stored_fields": "_none_", "docvalue_fields": ["chunk_id"]}


def candidate_ids(raw: dict[str, Any]) -> list[str]:
    """The chunk ids a candidates request found, best first."""
    return [str(hit["fields"]["chunk_id"][0]) for hit in raw["hits"]["hits"] if hit.get("fields", {}).get("chunk_id")]


def restricted(leg: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """The text leg scoring only the chunks of ``ids`` (the candidates the first request chose)."""
    return {"bool": {"must": [leg], "filter": [{"terms": {"chunk_id": ids}}]}} if ids else {"match_none": {}}


def build_request(plan: SearchPlan, candidates: list[str] | None = None) -> dict[str, Any]:
    """The one request of a search: hybrid query, per-document grouping, facets, suggestions; with
    ``candidates`` (chunk ids) the text leg scores only those."""
    legs = list(plan.legs)
    if candidates is not None and plan.text_leg is not None:
        legs[0] = restricted(legs[0], candidates)
    body = build_hybrid_body(legs, plan.size, plan.filters)
    body["query"]["hybrid"]["pagination_depth"] = plan.pagination_depth
    body["from"] = plan.offset
    body["_source"] = {"includes": DOCUMENT_FIELDS}
    body["collapse"] = build_collapse(plan.max_chunks, plan.vector, plan.extra_candidates, plan.unit_hits)
    body["aggs"] = build_aggregations()
    body["track_total_hits"] = True
    if plan.vector is not None:
        body["script_fields"] = build_similarity_field(plan.vector)
    if plan.suggest_text:
        body["suggest"] = build_suggest(plan.suggest_text, list(plan.groups))
    return body


