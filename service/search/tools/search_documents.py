"""search_documents: validate → embed → build → execute → map, with fallback, timings, cache and budget.

A search reads top to bottom in ``Searcher._run``: ``plan`` (parse, embed, ``plan_search``), ``answer`` (execute,
with its fallbacks), ``map`` (results and passages), the budget, the page. Every DSL detail is one hop away in
``service.search.dsl``. Access filters are part of every request body the search builds.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from loguru import logger
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.base import Embedder, is_static, keeps_static_unit_vectors, keeps_unit_vectors
from service.engine.gateway import engine_timeout
from service.engine.index_meta import read_generation
from service.errors import EngineTimeout, IndexUnavailable, PastLastPage, SearchError, StroidokError, redact
from service.search.answer.budget import fit_budget
from service.search.answer.hits import (
    chunks_by_document,
    content_hash,
    map_copies,
    map_correction,
    map_facets,
    related_queries,
)
from service.search.answer.map import map_hits
from service.search.answer.models import (
    DocumentResult,
    Pagination,
    SearchMeta,
    SearchResponse,
    Suggestions,
    Timings,
    VectorCoverage,
)
from service.search.cache import ResponseCache, cache_key
from service.search.documents import Documents
from service.search.dsl.aggs import document_count
from service.search.dsl.build import (
    SearchPlan,
    SearchSettingsView,
    build_candidates_request,
    build_chunks_request,
    build_document_chunks_request,
    build_request,
    candidate_ids,
    plan_search,
)
from service.search.dsl.lookups import build_copies_lookup
from service.search.dsl.operators import binding_phrases
from service.search.reads import EngineReads
from service.search.request.contract import SearchRequest
from service.search.request.paging import paginate, request_offset
from service.search.request.parse import ParsedQuery, parse_query
from service.search.vectors import Coverage, CoverageCache, EmbedderResolver
from service.settings import Settings


@dataclasses.dataclass(frozen=True)
class QueryVector:
    """The query's vector for the dense leg (None: BM25 alone), the time it took, why there is none, and the
    physical index whose embedder made it."""

    values: list[float] | None = None
    took_ms: float = 0.0
    problem: str | None = None
    index: str | None = None


@dataclasses.dataclass(frozen=True)
class Planned:
    """A search decided: its plan, the parsed phrasings, and the query vector it was planned with."""

    plan: SearchPlan
    parsed: list[ParsedQuery]
    vector: QueryVector


@dataclasses.dataclass(frozen=True)
class Found:
    """What the engine answered a search: the search's own answer, each document's candidate chunks by
    document id (a chunks request; None: the collapse's inner hits carry them), and the documents read whole
    (document id → every chunk of it that holds a query term: the answer's first)."""

    raw: dict[str, Any]
    chunks: dict[str, list[dict[str, Any]]] | None
    whole: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    #: the text leg was restricted to its best candidates and more chunks matched: totals and facets count those
    bounded: bool = False


@dataclasses.dataclass(frozen=True)
class Answered:
    """A search run: what was planned (the attempt that answered), what the engine found, all embedding time."""

    planned: Planned
    found: Found
    embedding_ms: float


class Searcher:
    """search_documents, and a search inside one document for get_document."""

    def __init__(self, settings: Settings, client: OpenSearch, reads: EngineReads, cache: ResponseCache | None,
                 resolver: EmbedderResolver, coverage: CoverageCache, documents: Documents) -> None:
        self.settings, self.client, self.reads, self.cache = settings, client, reads, cache
        self.resolver, self.coverage, self.documents = resolver, coverage, documents
        self._cluster: str | None = None

    def search(self, request: SearchRequest, principal: Principal, began: float) -> SearchResponse:
        if self.cache is None:
            return self._run(request, principal, began)
        # the content generation is part of the key: after any ingest, deletion or change of access
        # rules, no response computed before is served (one real-time GET, ~1 ms)
        key = cache_key(self._deployment(), read_generation(self.client, self.settings.index), principal.groups,
                        request.model_dump_json(), self.settings.index.alias)
        if (response := self.cache.get(key)) is not None:
            response.meta.cached = True
            response.meta.timings.total_ms = round((time.perf_counter() - began) * 1000, 2)
            return response
        response = self._run(request, principal, began)
        self.cache.put(key, response)
        return response

    def _deployment(self) -> str:
        """The engine's cluster id, read once: part of every cache key."""
        if self._cluster is None:
            self._cluster = str(self.client.info().get("cluster_uuid") or self.settings.opensearch_url)
        return self._cluster

    def _run(self, request: SearchRequest, principal: Principal, began: float) -> SearchResponse:
        """One search, in order: plan and run it (``_answer``), map the hits to results with their passages,
        fit the answer to its budget, paginate."""
        coverage = self.coverage.get(principal.groups)
        searching = time.perf_counter()
        answered = self.answer(request, principal, coverage)
        search_ms = (time.perf_counter() - searching) * 1000 - answered.embedding_ms
        plan = answered.planned.plan
        response = self.map(request, answered.planned.parsed[0], plan, answered.found, coverage)
        response.meta.vectors = VectorCoverage(share=coverage.share, pending_chunks=coverage.pending)
        response.meta.timings = Timings(embedding_ms=round(answered.embedding_ms, 2), search_ms=round(search_ms, 2),
                                        total_ms=round((time.perf_counter() - began) * 1000, 2))
        returned = len(response.results)
        response = fit_budget(response, self.settings.search.response_budget_chars,
                              self.settings.search.answer_chars)
        response.meta.pagination = paginate(request, plan.offset, len(response.results), response.meta.total_results,
                                            len(response.results) < returned, exhausted=returned < plan.size)
        return response

    def plan(self, request: SearchRequest, principal: Principal, coverage: Coverage | None = None,
             document: str | None = None) -> Planned:
        """A search decided: the phrasings parsed, the query embedded (unless no chunk has a vector yet), the
        plan built (``service.search.dsl.build.plan_search``; ``document``: inside the document of this id)."""
        parsed = [parse_query(q) for q in request.all_queries]
        if coverage is not None and coverage.chunks and coverage.pending == coverage.chunks \
                and request.search_mode != "fulltext":
            vector = QueryVector(problem="no chunk has its vector yet (text indexed first; `stroidok embed` fills "
                                         "them in)")
        else:
            vector = self._query_vector(request, parsed)
        plan = plan_search(request, parsed, principal.groups, vector.values, request_offset(request), self._view,
                           vector.problem, document, coverage.chunks if coverage is not None else None)
        return Planned(plan, parsed, vector)

    def answer(self, request: SearchRequest, principal: Principal, coverage: Coverage,
                document: str | None = None) -> Answered:
        """Plan and run; a dense or hybrid request that fails is run again on BM25 alone, and one answered by
        another physical index than the query vector was made for (an alias swap in between) is run again
        with that index's embedder. ``document``: inside the document of this id."""
        embedding_ms = 0.0
        for attempt in (1, 2):
            planned = self.plan(request, principal, coverage, document)
            embedding_ms += planned.vector.took_ms
            plan, index = planned.plan, planned.vector.index
            try:
                found = self.execute(plan)
            except (IndexUnavailable, EngineTimeout):
                raise  # another request would find the engine as down, or cost it as much again
            except SearchError as exc:
                if plan.route == "bm25":
                    raise
                if attempt == 1 and self.resolver.moved(index):
                    continue  # the alias moved to an index of another embedder: embed the query for that one
                logger.warning("{} request failed ({}), falling back to BM25", plan.route, exc.message)
                plan = plan_search(request.model_copy(update={"threshold": None}), planned.parsed, principal.groups,
                                   None, plan.offset, self._view, f"{plan.route} request failed: {exc.message}",
                                   document)
                planned = dataclasses.replace(planned, plan=plan)
                found = self.execute(plan)
            answering = {h.get("_index") for h in found.raw["hits"]["hits"]}
            if plan.vector is None or index is None or answering <= {index} or attempt == 2:
                break
            logger.info("the alias now points at {} (the query was embedded for {}): searching again",
                        answering, index)
            self.resolver.invalidate()
        return Answered(planned, found, embedding_ms)

    @property
    def _view(self) -> SearchSettingsView:
        kept, static = self._unit_vectors()
        return SearchSettingsView.of(self.settings.search, static, kept)

    def _unit_vectors(self) -> tuple[bool, bool]:
        """Whether the alias's index keeps unit vectors, and a static embedder's (by its embedder and the
        setting, as the ingest decided)."""
        try:
            _, embedder = self.resolver.current()
        except StroidokError:
            return False, False
        setting = self.settings.embedder.unit_vectors
        return keeps_unit_vectors(embedder, setting), keeps_static_unit_vectors(embedder, setting)

    def _query_vector(self, request: SearchRequest, parsed: list[ParsedQuery]) -> QueryVector:
        """The query's vector (for the dense leg and every result's similarity). Never raises but for an engine
        that is down: a query that cannot be embedded still searches BM25."""
        began = time.perf_counter()
        index = None
        try:
            index, embedder = self.resolver.current()
            vector = self._embed(embedder, [q.plain for q in parsed])
            problem = None if vector is not None else "the query has no words the embedder knows"
        except IndexUnavailable:
            raise
        except StroidokError as exc:
            vector, problem = None, redact(f"query embedding failed: {exc.message}")
        except Exception as exc:
            vector, problem = None, redact(f"query embedding failed: {type(exc).__name__}: {exc}")
        if problem and request.search_mode != "fulltext":
            logger.debug("no query vector: {}", problem)
        return QueryVector(vector, (time.perf_counter() - began) * 1000, problem, index)

    def unit_similarity(self, vector: list[float] | None) -> Callable[[list[str]], list[float]] | None:
        """Cosines of passage units to the query vector, with the index's embedder when it is static (navec:
        ~20 µs a unit), for an answer the engine gave no unit scores (an index without unit vectors); None for
        a model embedder (e5: milliseconds a unit) or a query without a vector."""
        if vector is None:
            return None
        try:
            _, embedder = self.resolver.current()
        except StroidokError:
            return None
        if not is_static(embedder):
            return None
        query = np.asarray(vector, dtype=np.float32)
        return lambda texts: [float(v) for v in embedder.embed_documents(texts) @ query]

    @staticmethod
    def _embed(embedder: Embedder, texts: list[str]) -> list[float] | None:
        """The mean of the phrasings' query vectors, normalized; None when it is zero."""
        mean = np.mean([embedder.embed_query(t) for t in texts], axis=0)
        norm = float(np.linalg.norm(mean))
        return None if norm == 0 or not np.isfinite(norm) else (mean / norm).astype(float).tolist()

    def execute(self, plan: SearchPlan) -> Found:
        """A search's engine requests, two to four whatever the page's size: where the plan takes them, the text
        leg's candidates (``build_candidates_request``), to which the search's text leg is then restricted; the
        search (documents, totals, facets, suggestions); the first document's chunks that hold a query term, every one
        (``build_document_chunks_request``: its passages are chosen the way a call inside it chooses them); and
        the other documents' best chunks (``build_chunks_request``; none where the collapse's inner hits carry
        them). All share the search's time bound. A page past the last answers as an empty page with the totals
        and facets of the first."""
        timeout_s = self.settings.search.timeout_s
        deadline = time.monotonic() + timeout_s

        def remaining() -> float:
            left = deadline - time.monotonic()
            if left <= 0:
                raise engine_timeout(timeout_s)
            return left

        candidates: list[str] | None = None
        if plan.text_candidates:
            candidates = candidate_ids(self.reads.send(build_candidates_request(plan), timeout_s=remaining()))
        bounded = candidates is not None and len(candidates) >= plan.text_candidates
        try:
            raw = self.reads.send(build_request(plan, candidates), plan.route, timeout_s=remaining())
        except PastLastPage:
            raw = self.reads.send(build_request(dataclasses.replace(plan, offset=0, size=1), candidates), plan.route,
                             timeout_s=remaining())
            raw["hits"]["hits"] = []
        ids = [str(hit["_source"]["doc_id"]) for hit in raw["hits"]["hits"]]
        if not ids:
            return Found(raw, None if plan.unit_hits else {}, bounded=bounded)
        whole: dict[str, list[dict[str, Any]]] = {}
        if plan.first_document_chunks:
            whole[ids[0]] = self.reads.send(build_document_chunks_request(plan, ids[0], plan.first_document_chunks),
                                       timeout_s=remaining())["hits"]["hits"]
        rest = [i for i in ids if not whole.get(i)]
        if plan.unit_hits or not rest:
            return Found(raw, None, whole, bounded)
        return Found(raw, chunks_by_document(self.reads.send(build_chunks_request(plan, rest), timeout_s=remaining())),
                     whole, bounded)

    def map(self, request: SearchRequest, first: ParsedQuery, plan: SearchPlan, found: Found,
             coverage: Coverage) -> SearchResponse:
        raw = found.raw
        hits = raw["hits"]["hits"]
        lexical_weight = {"bm25": 1.0, "knn": 0.0}.get(plan.route, self.settings.index.bm25_weight)
        results = map_hits(hits, request.include_context, request.max_chunks, self.settings.search.passage_chars,
                           lexical_weight, self.unit_similarity(plan.vector),
                           binding_phrases(first, request.operator), self.settings.index.dense_lower_bound,
                           found.chunks, whole=found.whole, naming=plan.naming, aside=plan.aside)
        aggs = raw.get("aggregations", {})
        # the engine's count of matching documents: the same on every page of a walk (the pages show the best
        # of them, and may end before it: ``paginate``'s ``exhausted``)
        total = document_count(aggs, len(results))
        correction = map_correction(raw.get("suggest"), first.plain)
        suggestions = Suggestions(corrected_query=correction)
        if total < self.settings.search.few_results:
            suggestions.related_queries = related_queries(first, correction)
        meta = SearchMeta(query=request.query, total_results=total, total_relation="gte" if found.bounded else "eq",
                          route_used=plan.route,
                          operator_used=request.operator, fallback_reason=plan.fallback_reason, timings=Timings(),
                          facets=map_facets(aggs), suggestions=suggestions,
                          pagination=Pagination(page=1, limit=request.limit, total_pages=1, has_more=False))
        self.documents.hide_unreadable([r.superseded_by for r in results if r.superseded_by], plan.groups)
        hashes = [content_hash(hit) for hit in hits]
        if shared := coverage.shared(hashes):  # contents of this page the caller may read at several paths
            self._fill_copies(results, hashes, shared, plan)
        return SearchResponse(results=results, meta=meta)

    def _fill_copies(self, results: list[DocumentResult], hashes: list[str | None], shared: list[str],
                     plan: SearchPlan) -> None:
        """The paths of each ``shared`` content that the request admits (one lookup for the page)."""
        copies = map_copies(self.reads.send(build_copies_lookup(shared, plan.scope)))
        for result, key in zip(results, hashes, strict=True):
            result.copies = copies.get(key) if key else None
