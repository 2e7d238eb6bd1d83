"""SearchService: validate → embed → build → execute → map, with fallback, timings, cache, budget and log.

A search reads top to bottom in ``SearchService._run``: ``plan`` (parse, embed, ``plan_search``), ``_answer``
(execute, with its fallbacks), ``_map`` (results and passages), the budget, the page. Every DSL detail is one
hop away in ``service.search.query``. Access filters are part of every request body the service builds.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from loguru import logger
from opensearchpy import OpenSearch
from pydantic import BaseModel

from service.caller.limits import RateLimiter
from service.caller.principal import Principal
from service.embedders.base import Embedder, is_static, keeps_static_unit_vectors, keeps_unit_vectors
from service.engine.gateway import bounded_search, engine_timeout
from service.engine.index_meta import read_generation
from service.errors import (
    EngineTimeout,
    IndexUnavailable,
    NotFound,
    PageUnavailable,
    PastLastPage,
    SearchError,
    StroidokError,
    redact,
)
from service.pages import render_page
from service.search.answer.budget import fit_budget
from service.search.answer.map import (
    chunks_by_document,
    content_hash,
    map_copies,
    map_correction,
    map_facets,
    map_hits,
    related_queries,
)
from service.search.answer.models import (
    CitationCheck,
    CitationsResponse,
    DocumentResponse,
    DocumentResult,
    PageReply,
    Pagination,
    SearchMeta,
    SearchResponse,
    SourcesResponse,
    Suggestions,
    Timings,
    VectorCoverage,
)
from service.search.cache import build_cache, cache_key
from service.search.citations.check import CITATION_TEXT_SHARE, fit_texts, verdict_of
from service.search.citations.document import (
    MAX_DOCUMENT_CITATIONS,
    Pages,
    build_document_text,
    distinct_batches,
    document_pages,
    key_of,
    placed_checks,
    placed_citations,
    summary_of,
)
from service.search.citations.grammar import MAX_CITATIONS, find_citations
from service.search.documents import DOCUMENT_PASSAGES, Documents, document_id
from service.search.dsl.aggs import build_sources_body, document_count
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
from service.search.dsl.lookups import build_copies_lookup, build_page_source, build_registry_root
from service.search.dsl.operators import binding_phrases
from service.search.request.contract import (
    CitationsRequest,
    PageRequest,
    SearchRequest,
    logged_fields,
    validate_citations_request,
    validate_document_request,
    validate_page_request,
    validate_request,
    validate_sources_request,
)
from service.search.request.paging import paginate, request_offset
from service.search.request.parse import ParsedQuery, parse_query
from service.search.vectors import Coverage, CoverageCache, EmbedderResolver
from service.settings import Settings
from service.usage.feedback import RecentSearches
from service.usage.querylog import QueryLog, call_entry

T = TypeVar("T", bound=BaseModel)


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


class SearchService:
    """The search side of the product, shared by the MCP server and the CLI."""

    def __init__(self, settings: Settings, client: OpenSearch, embedder: Embedder | None) -> None:
        self.settings, self.client, self.embedder = settings, client, embedder
        self.cache = build_cache(settings.search)
        self.limiter = RateLimiter(settings.search.rate_limit, settings.search.redis_url)
        self.log = QueryLog(client, settings.index.queries_index, settings.search.log_queries,
                            retention_days=settings.search.log_retention_days,
                            max_bytes=settings.search.log_queue_bytes)
        self.resolver = EmbedderResolver(client, settings, embedder)
        self.coverage = CoverageCache(client, settings.index.alias)
        self.documents = Documents(self._send, settings.search.passage_chars)
        self.recent = RecentSearches(settings.search.feedback_window_s)
        self._cluster: str | None = None

    # -- search -----------------------------------------------------------------------------------

    def _call(self, tool: str, arguments: dict[str, Any], principal: Principal, client_id: str | None,
              run: Callable[[float], T]) -> T:
        """Every tool call: rate limit, run, one query-log entry (refused and failed calls included); a search's
        results are remembered for the client, and an opening of one of them is logged with its rank."""
        began, call_id, client = time.perf_counter(), uuid.uuid4().hex, client_id or principal.name
        logged = functools.partial(call_entry, tool, arguments, principal.name, client_id, call_id=call_id,
                                   groups=principal.groups,
                                   request=logged_fields(arguments) if tool == "search_documents" else None)
        try:
            self.limiter.check(client, tool)
            result = run(began)
        except Exception as exc:
            self.log.record(logged((time.perf_counter() - began) * 1000, error=exc))
            raise
        opening = self.recent.opened(client, str(arguments.get("id"))) if tool == "get_document" else None
        self.log.record(logged((time.perf_counter() - began) * 1000, result=result, opening=opening))
        if isinstance(result, SearchResponse):
            offset = (result.meta.pagination.page - 1) * result.meta.pagination.limit
            self.recent.remember(client, call_id, [r.id for r in result.results], offset)
        return result

    def search(self, arguments: dict[str, Any], principal: Principal, client_id: str | None = None) -> SearchResponse:
        return self._call("search_documents", arguments, principal, client_id,
                          lambda began: self._cached_or_run(validate_request(arguments), principal, began))

    def _cached_or_run(self, request: SearchRequest, principal: Principal, began: float) -> SearchResponse:
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
        answered = self._answer(request, principal, coverage)
        search_ms = (time.perf_counter() - searching) * 1000 - answered.embedding_ms
        plan = answered.planned.plan
        response = self._map(request, answered.planned.parsed[0], plan, answered.found, coverage)
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

    def _answer(self, request: SearchRequest, principal: Principal, coverage: Coverage,
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
                found = self._execute(plan)
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
                found = self._execute(plan)
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

    def _unit_similarity(self, vector: list[float] | None) -> Callable[[list[str]], list[float]] | None:
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

    def _pipeline(self, route: str) -> str:
        index = self.settings.index
        if route != "hybrid":
            return index.single_pipeline
        return index.rrf_pipeline if self.settings.search.fusion == "rrf" else index.hybrid_pipeline

    def _execute(self, plan: SearchPlan) -> Found:
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
            candidates = candidate_ids(self._send(build_candidates_request(plan), timeout_s=remaining()))
        bounded = candidates is not None and len(candidates) >= plan.text_candidates
        try:
            raw = self._send(build_request(plan, candidates), plan.route, timeout_s=remaining())
        except PastLastPage:
            raw = self._send(build_request(dataclasses.replace(plan, offset=0, size=1), candidates), plan.route,
                             timeout_s=remaining())
            raw["hits"]["hits"] = []
        ids = [str(hit["_source"]["doc_id"]) for hit in raw["hits"]["hits"]]
        if not ids:
            return Found(raw, None if plan.unit_hits else {}, bounded=bounded)
        whole: dict[str, list[dict[str, Any]]] = {}
        if plan.first_document_chunks:
            whole[ids[0]] = self._send(build_document_chunks_request(plan, ids[0], plan.first_document_chunks),
                                       timeout_s=remaining())["hits"]["hits"]
        rest = [i for i in ids if not whole.get(i)]
        if plan.unit_hits or not rest:
            return Found(raw, None, whole, bounded)
        return Found(raw, chunks_by_document(self._send(build_chunks_request(plan, rest), timeout_s=remaining())),
                     whole, bounded)

    def _send(self, body: dict[str, Any], route: str | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        """One search request, bounded (``bounded_search``; by ``timeout_s``, else the search setting). Partial
        results are refused: a shard that failed (a node lost mid-request) fails the request, which the client
        retries on another node, instead of silently missing hits."""
        params = {"allow_partial_search_results": "false"}
        if route is not None:
            params["search_pipeline"] = self._pipeline(route)
        return bounded_search(self.client, self.settings.index.alias, body, params,
                              timeout_s if timeout_s is not None else self.settings.search.timeout_s)

    def _map(self, request: SearchRequest, first: ParsedQuery, plan: SearchPlan, found: Found,
             coverage: Coverage) -> SearchResponse:
        raw = found.raw
        hits = raw["hits"]["hits"]
        lexical_weight = {"bm25": 1.0, "knn": 0.0}.get(plan.route, self.settings.index.bm25_weight)
        results = map_hits(hits, request.include_context, request.max_chunks, self.settings.search.passage_chars,
                           lexical_weight, self._unit_similarity(plan.vector),
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
        copies = map_copies(self._send(build_copies_lookup(shared, plan.scope)))
        for result, key in zip(results, hashes, strict=True):
            result.copies = copies.get(key) if key else None

    # -- retrieval by id --------------------------------------------------------------------------

    def get_document(self, result_id: str | None, principal: Principal, client_id: str | None = None,
                     clause: str | None = None, query: str | None = None, *, designation: str | None = None,
                     compare: bool | None = None) -> DocumentResponse:
        """A document (by ``id``) or a chunk (by ``chunk_id``) with its neighbouring chunks; with ``clause``
        («5.2.3», «п. 5.2.3», «Приложение Б») the first chunk of that clause in the document; with ``query``
        the document's best passages for it, every chunk of it ranked.

        A document the caller may not read answers ``NOT_FOUND``, exactly like one that does not exist,
        so ids cannot be probed for existence. With ``designation`` in place of an id, that document (without an
        edition, the current one), at ``clause`` when given; ``compare``: the clause in every edition held."""
        given = (("id", result_id), ("designation", designation), ("clause", clause), ("query", query),
                 ("compare", compare))
        arguments = {k: v for k, v in given if v is not None}
        return self._call("get_document", arguments, principal, client_id,
                          lambda _: self._get_document(arguments, principal))

    def _get_document(self, arguments: dict[str, Any], principal: Principal) -> DocumentResponse:
        """A lookup by id, or with a query the document's best passages: a search inside that one document (its
        access filter in the engine, every chunk of it ranked), answered as the document and its passages."""
        request = validate_document_request(arguments)
        if request.designation is not None:
            return self.documents.by_designation(request.designation, request.clause, request.compare,
                                                 principal.groups)
        result_id = request.id or ""  # the contract asks for one of id and designation
        if request.query is None:
            return self.documents.get(result_id, principal.groups, request.clause)
        doc_id = document_id(result_id)
        search = validate_request({"query": request.query, "limit": 1, "max_chunks": DOCUMENT_PASSAGES})
        answered = self._answer(search, principal, self.coverage.get(principal.groups), document=doc_id)
        if not answered.found.raw["hits"]["hits"]:  # nothing in it matches, or no such document for this caller
            found = self.documents.get(doc_id, principal.groups)
            return DocumentResponse(id=result_id, document=found.document, passages=[])
        response = self._map(search, answered.planned.parsed[0], answered.planned.plan, answered.found,
                             self.coverage.get(principal.groups))
        document = response.results[0]
        passages, document.context_chunks = document.context_chunks, []
        return DocumentResponse(id=result_id, document=document, passages=passages)

    def get_page_image(self, arguments: dict[str, Any], principal: Principal,
                       client_id: str | None = None) -> PageReply:
        """A PDF page of a document the caller may read, rendered (``service.pages``)."""
        return self._call("get_page_image", arguments, principal, client_id,
                          lambda _: self._get_page_image(validate_page_request(arguments), principal))

    def _get_page_image(self, request: PageRequest, principal: Principal) -> PageReply:
        doc_id = document_id(request.id)
        hits = self._send(build_page_source(doc_id, list(principal.groups)))["hits"]["hits"]
        if not hits:
            raise NotFound(f"no document or chunk with id {request.id} is visible to you", details={"id": request.id})
        source = hits[0]["_source"]
        if source.get("file_type") != "pdf":
            raise PageUnavailable(f"a page image is made of PDFs; this document is {source.get('file_type')}: read "
                                  "its text with get_document", details={"file_type": str(source.get("file_type"))})
        if request.page > int(source.get("page_count") or 0):
            raise NotFound(f"the document has {source.get('page_count')} pages", details={"page": request.page})
        roots = bounded_search(self.client, self.settings.index.files_index, build_registry_root(doc_id), {},
                               self.settings.search.timeout_s)["hits"]["hits"]
        if not roots or not roots[0]["_source"].get("root"):
            raise PageUnavailable("the file's ingest folder is not recorded: re-ingest it")
        size = source.get("file_size")
        image = render_page(Path(roots[0]["_source"]["root"]), Path(source["file_path"]),
                            str(source.get("doc_hash") or "").split("+")[0], request.page,
                            self.settings.server.render_memory_mb, size=int(size) if size is not None else None,
                            limit=self.settings.ingest.max_file_mb * 1024 * 1024,
                            hard_links=self.settings.ingest.hard_links == "same-groups")
        return PageReply(id=doc_id, title=source.get("title") or source.get("file_name") or "", page=request.page,
                         page_count=source.get("page_count"), width=image.width, height=image.height, png=image.png)

    def check_citations(self, arguments: dict[str, Any], principal: Principal,
                        client_id: str | None = None) -> CitationsResponse:
        """Every citation in a text checked against the archive the caller may read, in two engine requests."""
        return self._call("check_citations", arguments, principal, client_id,
                          lambda _: self._citations_of(validate_citations_request(arguments), principal))

    def _citations_of(self, request: CitationsRequest, principal: Principal) -> CitationsResponse:
        if request.document_id is None:
            return self._check_citations(str(request.text), principal)
        doc_id = document_id(request.document_id)
        found = self._send(build_document_text(doc_id, list(principal.groups)))
        hits = [h["_source"] for h in found["hits"]["hits"]]
        if not hits:
            raise NotFound(f"no document {doc_id} you may read", details={"document_id": request.document_id})
        checked = self._check_pages(str(hits[0].get("file_name") or doc_id), document_pages(hits), principal, None)
        if found["hits"]["total"]["value"] > len(hits):  # a document past MAX_DOCUMENT_CHUNKS: its first ones read
            checked.truncated = True
        return checked

    def _check_citations(self, text: str, principal: Principal) -> CitationsResponse:
        citations = find_citations(text, MAX_CITATIONS + 1)
        checked, _ = self.documents.citing.check(citations[:MAX_CITATIONS], principal.groups)
        verdicts = [verdict_of(c) for c in checked]
        cut = fit_texts(verdicts, CITATION_TEXT_SHARE * self.settings.search.answer_chars)
        return CitationsResponse(citations=verdicts, truncated=True if len(citations) > MAX_CITATIONS else None,
                                 texts_cut=cut or None)

    def check_pages(self, name: str, pages: Pages, principal: Principal, client_id: str | None = None,
                    progress: Callable[[int, int], None] | None = None) -> CitationsResponse:
        """Every citation of a document's ``pages`` checked (``service.search.citations.document``): each
        distinct one once, ``MAX_CITATIONS`` to a batch of two engine requests; ``progress(done, total)``
        after each batch."""
        return self._call("check_citations", {"file": name}, principal, client_id,
                          lambda _: self._check_pages(name, pages, principal, progress))

    def _check_pages(self, name: str, pages: Pages, principal: Principal,
                     progress: Callable[[int, int], None] | None) -> CitationsResponse:
        placed = placed_citations(pages, MAX_DOCUMENT_CITATIONS + 1)
        kept = placed[:MAX_DOCUMENT_CITATIONS]
        batches = list(distinct_batches(kept))
        total = sum(len(b) for b in batches)
        checks: dict[tuple[object, ...], CitationCheck] = {}
        for batch in batches:
            checked, _ = self.documents.citing.check(batch, principal.groups)
            checks.update({key_of(c): verdict_of(v) for c, v in zip(batch, checked, strict=True)})
            if progress:
                progress(len(checks), total)
        cut = fit_texts(list(checks.values()), CITATION_TEXT_SHARE * self.settings.search.answer_chars)
        listed = placed_checks(kept, checks)
        return CitationsResponse(citations=listed, truncated=True if len(placed) > MAX_DOCUMENT_CITATIONS else None,
                                 texts_cut=cut or None, file=name, pages=len(pages), summary=summary_of(listed))

    def list_sources(self, principal: Principal, client_id: str | None = None,
                     arguments: dict[str, Any] | None = None) -> SourcesResponse:
        """What the caller can search (below ``folder``, if given): documents by type and folder, the date span."""
        given = arguments or {}
        return self._call("list_sources", given, principal, client_id,
                          lambda _: self._list_sources(principal, validate_sources_request(given).folder))

    def _list_sources(self, principal: Principal, folder: str | None) -> SourcesResponse:
        raw = self._send(build_sources_body(list(principal.groups), folder))
        aggs = raw["aggregations"]
        return SourcesResponse(
            total_documents=document_count(aggs, 0), total_chunks=int(raw["hits"]["total"]["value"]),
            document_types={b["key"]: b["docs"]["value"] for b in aggs["document_types"]["buckets"]},
            folders={b["key"]: b["docs"]["value"] for b in aggs["folders"]["buckets"]},
            earliest=aggs["earliest"].get("value_as_string"), latest=aggs["latest"].get("value_as_string"),
            most_cited={b["key"]: b["doc_count"] for b in aggs["cited"]["top"]["buckets"]},
            replaced={h["_source"]["designation"]: h["_source"]["superseded_by_designation"]
                      for h in aggs["replaced"]["editions"]["hits"]["hits"] if h["_source"].get("designation")} or None)


