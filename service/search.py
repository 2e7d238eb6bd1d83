"""SearchService: validate → embed → build → execute → map, with fallback, timings, cache, budget and log.

A search request reads top to bottom in ``SearchService.search``; every DSL detail is one hop away in
``service.query.build``. Access filters are part of every request body the service builds.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from loguru import logger
from opensearchpy import OpenSearch
from pydantic import BaseModel, ValidationError

from service.cache import build_cache, cache_key
from service.designations import parse_designation
from service.embedders.base import Embedder
from service.errors import (
    IndexUnavailable,
    InvalidQuery,
    NotFound,
    PastLastPage,
    SearchError,
    StroidokError,
)
from service.index_meta import read_generation
from service.opensearch import engine_errors
from service.query.build import (
    SearchPlan,
    SearchSettingsView,
    binding_phrases,
    build_chunks_by_index,
    build_cited_lookup,
    build_citing_lookup,
    build_clause_lookup,
    build_request,
    build_sources_body,
    build_visible_ids,
    plan_search,
)
from service.query.contract import MAX_PAGE_DEPTH, SearchRequest
from service.query.map import map_chunk, map_correction, map_document, map_facets, map_hits
from service.query.models import (
    CitingDocument,
    DocumentResponse,
    Edition,
    Pagination,
    SearchMeta,
    SearchResponse,
    SourcesResponse,
    Suggestions,
    Timings,
    VectorCoverage,
)
from service.query.parse import ParsedQuery, parse_query
from service.querylog import QueryLog, call_entry
from service.security import Principal, RateLimiter
from service.settings import Settings
from service.vectors import Coverage, CoverageCache, EmbedderResolver

T = TypeVar("T", bound=BaseModel)
#: get_document shows a chunk whole (the ingest's chunks are far smaller); the bound keeps an answer sane
WHOLE_CHUNK_CHARS = 25_000
MAX_CITES = 200  # designations get_document lists of what a document cites
MAX_CITED_BY = 100
_ID_RE = re.compile(r"^(?P<doc>[0-9a-f]{20})(?::(?P<chunk>\d{1,7}))?$")


def validate_request(arguments: dict[str, Any]) -> SearchRequest:
    """Tool/CLI arguments → ``SearchRequest``; pydantic's complaints become one ``INVALID_QUERY``."""
    try:
        return SearchRequest.model_validate(arguments)
    except ValidationError as exc:
        raise InvalidQuery.from_validation(exc, "search request", "request") from exc


def request_fingerprint(request: SearchRequest) -> str:
    """Identifies a query independent of its position (what a cursor belongs to)."""
    data = request.model_dump(mode="json", exclude={"page", "cursor"})
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]


def encode_cursor(request: SearchRequest, offset: int) -> str:
    raw = json.dumps({"o": offset, "f": request_fingerprint(request)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def request_offset(request: SearchRequest) -> int:
    """Where the page starts: the offset its cursor carries, else (page - 1) × limit. A cursor of another
    query, or one past the paging depth, is refused."""
    if not request.cursor:
        return (request.page - 1) * request.limit
    try:
        data = json.loads(base64.urlsafe_b64decode(request.cursor + "=" * (-len(request.cursor) % 4)))
        offset, fingerprint = int(data["o"]), str(data["f"])
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidQuery("cursor is not valid; pass the next_cursor of a previous response",
                           details={"field": "cursor"}) from exc
    if fingerprint != request_fingerprint(request):
        raise InvalidQuery("cursor belongs to another query or other filters; start again without it",
                           details={"field": "cursor"})
    if not 0 <= offset < MAX_PAGE_DEPTH:
        raise InvalidQuery(f"cursor goes past the paging depth ({MAX_PAGE_DEPTH} documents); narrow the query",
                           details={"field": "cursor"})
    return offset


def paginate(request: SearchRequest, offset: int, returned: int, total: int, cut: bool,
             exhausted: bool = False) -> Pagination:
    """Page numbers and the cursor of the next page; ``cut`` says results were dropped for the budget, so
    the cursor continues right after the last one returned; ``exhausted`` that the ranking ran out (each leg
    ranks at most ``pagination_depth`` chunks) before the count did: nothing comes after what was found."""
    pages = max(1, -(-total // request.limit))
    has_more = offset + returned < min(total, MAX_PAGE_DEPTH) and (cut or (returned > 0 and not exhausted))
    return Pagination(page=offset // request.limit + 1, limit=request.limit, total_pages=pages, has_more=has_more,
                      next_cursor=encode_cursor(request, offset + returned) if has_more else None)


_CLAUSE_PREFIX_RE = re.compile(r"^(?:п\.|пп\.|пункт|подпункт|раздел|разд\.|р\.)\s*", re.IGNORECASE)


def normalize_clause(text: str) -> str:
    """How a person writes a clause → how chunks record it: «п. 5.2.3» → «5.2.3», «приложение б» →
    «Приложение Б», «таблица 4» → «Таблица 4». Bounded and stripped of anything but the clause."""
    if not isinstance(text, str) or not 0 < len(text.strip()) <= 60:
        raise InvalidQuery("clause must be 1-60 characters, e.g. «5.2.3» or «Приложение Б»", details={"field": "clause"})
    text = " ".join(_CLAUSE_PREFIX_RE.sub("", text.strip()).split()).rstrip(".") or text.strip()
    word, *rest = text.split()
    if word[:1].isalpha() and rest:
        return " ".join([word.capitalize(), *(part.upper() if len(part) <= 3 else part for part in rest)])
    return text


def related_queries(parsed: ParsedQuery, correction: str | None) -> list[str]:
    """Broader variants an agent can try when little was found: the correction, unquoted, one term fewer."""
    related = [correction] if correction else []
    if parsed.phrases:
        related.append(parsed.plain)
    words = parsed.terms.split()
    if len(words) > 1:
        related += [" ".join(w for j, w in enumerate(words) if j != i) for i in range(len(words))][:3]
    return list(dict.fromkeys(r for r in related if r))[:5]


class SearchService:
    """The search side of the product, shared by the MCP server and the CLI."""

    def __init__(self, settings: Settings, client: OpenSearch, embedder: Embedder | None) -> None:
        self.settings, self.client, self.embedder = settings, client, embedder
        self.cache = build_cache(settings.search)
        self.limiter = RateLimiter(settings.search.rate_limit, settings.search.redis_url)
        self.log = QueryLog(client, settings.index.queries_index, settings.search.log_queries)
        self.resolver = EmbedderResolver(client, settings, embedder)
        self.coverage = CoverageCache(client, settings.index.alias)

    # -- search -----------------------------------------------------------------------------------

    def _call(self, tool: str, arguments: dict[str, Any], principal: Principal, client_id: str | None,
              run: Callable[[float], T]) -> T:
        """Every tool call: rate limit, run, one query-log entry (refused and failed calls included)."""
        began = time.perf_counter()
        try:
            self.limiter.check(client_id or principal.name, tool)
            result = run(began)
        except Exception as exc:
            self.log.record(call_entry(tool, arguments, principal.name, client_id,
                                       (time.perf_counter() - began) * 1000, error=exc))
            raise
        self.log.record(call_entry(tool, arguments, principal.name, client_id, (time.perf_counter() - began) * 1000,
                                   result=result))
        return result

    def search(self, arguments: dict[str, Any], principal: Principal, client_id: str | None = None) -> SearchResponse:
        return self._call("search_documents", arguments, principal, client_id,
                          lambda began: self._cached_or_run(validate_request(arguments), principal, began))

    def _cached_or_run(self, request: SearchRequest, principal: Principal, began: float) -> SearchResponse:
        if self.cache is None:
            return self._run(request, principal, began)
        # the content generation is part of the key: after any ingest, deletion or change of access
        # rules, no response computed before is served (one real-time GET, ~1 ms)
        key = cache_key(read_generation(self.client, self.settings.index), principal.groups,
                        request.model_dump_json(), self.settings.index.alias)
        if (response := self.cache.get(key)) is not None:
            response.meta.cached = True
            response.meta.timings.total_ms = round((time.perf_counter() - began) * 1000, 2)
            return response
        response = self._run(request, principal, began)
        self.cache.put(key, response)
        return response

    def plan(self, request: SearchRequest, principal: Principal,
             coverage: Coverage | None = None) -> tuple[SearchPlan, list[ParsedQuery], float, str | None]:
        """The plan of a search (embedding included), the parsed phrasings, the embedding time and the
        physical index whose embedder made the query vector."""
        parsed = [parse_query(q) for q in request.all_queries]
        if coverage is not None and coverage.chunks and coverage.pending == coverage.chunks \
                and request.search_mode != "fulltext":
            vector: list[float] | None = None
            embedding_ms, index = 0.0, None
            problem: str | None = "no chunk has its vector yet (text indexed first; `stroidok embed` fills them in)"
        else:
            vector, embedding_ms, problem, index = self._query_vector(request, parsed)
        plan = plan_search(request, parsed, principal.groups, vector, request_offset(request), self._view, problem)
        return plan, parsed, embedding_ms, index

    def _run(self, request: SearchRequest, principal: Principal, began: float) -> SearchResponse:
        coverage = self.coverage.get(principal.groups)
        search_began = time.perf_counter()
        plan, parsed, raw, embedding_ms = self._plan_and_execute(request, principal, coverage)
        search_ms = (time.perf_counter() - search_began) * 1000 - embedding_ms
        offset = plan.offset
        response = self._map(request, parsed[0], plan, raw)
        response.meta.vectors = VectorCoverage(share=coverage.share, pending_chunks=coverage.pending)
        response.meta.timings = Timings(embedding_ms=round(embedding_ms, 2), search_ms=round(search_ms, 2),
                                        total_ms=round((time.perf_counter() - began) * 1000, 2))
        returned = len(response.results)
        response = fit_budget(response, self.settings.search.response_budget_chars,
                              self.settings.search.answer_chars)
        response.meta.pagination = paginate(request, offset, len(response.results), response.meta.total_results,
                                            len(response.results) < returned, exhausted=returned < plan.size)
        return response

    def _plan_and_execute(self, request: SearchRequest, principal: Principal, coverage: Coverage,
                          ) -> tuple[SearchPlan, list[ParsedQuery], dict[str, Any], float]:
        """Plan and run; a dense or hybrid request that fails is run again on BM25 alone, and one answered by
        another physical index than the query vector was made for (an alias swap in between) is run again
        with that index's embedder."""
        embedding_ms = 0.0
        for attempt in (1, 2):
            plan, parsed, took_ms, index = self.plan(request, principal, coverage)
            embedding_ms += took_ms
            try:
                raw = self._execute(plan)
            except IndexUnavailable:
                raise
            except SearchError as exc:
                if plan.route == "bm25":
                    raise
                if attempt == 1 and self.resolver.moved(index):
                    continue  # the alias moved to an index of another embedder: embed the query for that one
                logger.warning("{} request failed ({}), falling back to BM25", plan.route, exc.message)
                plan = plan_search(request.model_copy(update={"threshold": None}), parsed, principal.groups, None,
                                   plan.offset, self._view, f"{plan.route} request failed: {exc.message}")
                raw = self._execute(plan)
            answered = {h.get("_index") for h in raw["hits"]["hits"]}
            if plan.vector is None or index is None or answered <= {index} or attempt == 2:
                break
            logger.info("the alias now points at {} (the query was embedded for {}): searching again",
                        answered, index)
            self.resolver.invalidate()
        return plan, parsed, raw, embedding_ms

    @property
    def _view(self) -> SearchSettingsView:
        return SearchSettingsView.of(self.settings.search)

    def _query_vector(self, request: SearchRequest, parsed: list[ParsedQuery],
                      ) -> tuple[list[float] | None, float, str | None, str | None]:
        """The query's vector (for the dense leg and every result's similarity), the time it took, why
        there is none, and the physical index it was made for. Never raises: a query that cannot be
        embedded still searches BM25."""
        began = time.perf_counter()
        index = None
        try:
            index, embedder = self.resolver.current()
            vector = self._embed(embedder, [q.plain for q in parsed])
            problem = None if vector is not None else "the query has no words the embedder knows"
        except IndexUnavailable:
            raise
        except StroidokError as exc:
            vector, problem = None, f"query embedding failed: {exc.message}"
        except Exception as exc:
            vector, problem = None, f"query embedding failed: {type(exc).__name__}: {exc}"
        if problem and request.search_mode != "fulltext":
            logger.debug("no query vector: {}", problem)
        return vector, (time.perf_counter() - began) * 1000, problem, index

    def _unit_similarity(self, vector: list[float] | None) -> Callable[[list[str]], list[float]] | None:
        """Cosines of passage units to the query vector, with the index's embedder when it is static (navec:
        ~20 µs a unit); None for a model embedder (e5: milliseconds a unit) or a query without a vector."""
        if vector is None:
            return None
        try:
            _, embedder = self.resolver.current()
        except StroidokError:
            return None
        if not getattr(embedder, "static", False):
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

    def _execute(self, plan: SearchPlan) -> dict[str, Any]:
        """The one engine request of a search; a page past the last answers as an empty page with the
        totals and facets of the first."""
        try:
            return self._send(build_request(plan), plan.route)
        except PastLastPage:
            raw = self._send(build_request(dataclasses.replace(plan, offset=0, size=1)), plan.route)
            raw["hits"]["hits"] = []
            return raw

    def _send(self, body: dict[str, Any], route: str | None = None) -> dict[str, Any]:
        """One search request. Partial results are refused: a shard that failed (a node lost mid-request)
        fails the request, which the client retries on another node, instead of silently missing hits."""
        params = {"allow_partial_search_results": "false"}
        if route is not None:
            params["search_pipeline"] = self._pipeline(route)
        with engine_errors():
            raw: dict[str, Any] = self.client.search(index=self.settings.index.alias, body=body, params=params)
        return raw

    def _map(self, request: SearchRequest, first: ParsedQuery, plan: SearchPlan, raw: dict[str, Any]) -> SearchResponse:
        hits = raw["hits"]["hits"]
        lexical_weight = {"bm25": 1.0, "knn": 0.0}.get(plan.route, self.settings.index.bm25_weight)
        results = map_hits(hits, request.include_context, request.max_chunks, self.settings.search.passage_chars,
                           lexical_weight, self._unit_similarity(plan.vector),
                           binding_phrases(first, request.operator))
        aggs = raw.get("aggregations", {})
        # the engine's count of matching documents: the same on every page of a walk (the pages show the best
        # of them, and may end before it: ``paginate``'s ``exhausted``)
        total = int(aggs.get("total_docs", {}).get("value", len(results)))
        correction = map_correction(raw.get("suggest"), first.plain)
        suggestions = Suggestions(corrected_query=correction)
        if total < self.settings.search.few_results:
            suggestions.related_queries = related_queries(first, correction)
        meta = SearchMeta(query=request.query, total_results=total, route_used=plan.route,
                          operator_used=request.operator, fallback_reason=plan.fallback_reason, timings=Timings(),
                          facets=map_facets(aggs), suggestions=suggestions,
                          pagination=Pagination(page=1, limit=request.limit, total_pages=1, has_more=False))
        self._hide_unreadable_editions([r.superseded_by for r in results if r.superseded_by], plan.groups)
        return SearchResponse(results=results, meta=meta)

    def _hide_unreadable_editions(self, editions: list[Edition], groups: tuple[str, ...]) -> None:
        """A newer edition the caller may not read is named by its designation only, never by its id."""
        ids = {e.id for e in editions if e.id}
        if not ids:
            return
        visible = {h["_source"]["doc_id"] for h in self._send(build_visible_ids(sorted(ids), list(groups)))
                   ["hits"]["hits"]}
        for edition in editions:
            if edition.id not in visible:
                edition.id = None

    # -- retrieval by id --------------------------------------------------------------------------

    def get_document(self, result_id: str, principal: Principal, client_id: str | None = None,
                     clause: str | None = None) -> DocumentResponse:
        """A document (by ``id``) or a chunk (by ``chunk_id``) with its neighbouring chunks; with ``clause``
        («5.2.3», «п. 5.2.3», «Приложение Б») the first chunk of that clause in the document.

        A document the caller may not read answers ``NOT_FOUND``, exactly like one that does not exist,
        so ids cannot be probed for existence."""
        arguments = {"id": result_id, **({"clause": clause} if clause is not None else {})}
        return self._call("get_document", arguments, principal, client_id,
                          lambda _: self._get_document(result_id, principal, clause))

    def _get_document(self, result_id: str, principal: Principal, clause: str | None = None) -> DocumentResponse:
        match = _ID_RE.match(result_id.strip()) if isinstance(result_id, str) else None
        if not match:
            raise InvalidQuery("id must be a document id (20 hex characters) or a chunk id (<document id>:<n>)",
                               details={"field": "id"})
        doc_id = match["doc"]
        wanted = int(match["chunk"]) if match["chunk"] is not None else None
        centre = wanted if wanted is not None else 0
        if clause is not None:
            centre = self._clause_start(doc_id, normalize_clause(clause), principal, result_id)
        indexes = [i for i in (centre - 1, centre, centre + 1) if i >= 0]
        body = build_chunks_by_index(doc_id, indexes, list(principal.groups))
        hits = self._send(body)["hits"]["hits"]
        by_index = {h["_source"]["chunk_index"]: h for h in hits}
        if centre not in by_index:
            raise NotFound(f"no document or chunk with id {result_id} is visible to you",
                           details={"id": result_id})
        limit = WHOLE_CHUNK_CHARS
        chunk_hit = by_index[centre]
        document = map_document(chunk_hit["_source"], 1.0)
        chunk = map_chunk(chunk_hit, 1.0, limit)
        neighbours = [map_chunk(by_index[i], 0.0, limit) for i in indexes if i != centre and i in by_index]
        source = chunk_hit["_source"]
        if document.superseded_by:
            self._hide_unreadable_editions([document.superseded_by], principal.groups)
        return DocumentResponse(id=result_id, document=document, chunk=chunk, neighbours=neighbours,
                                cites=self._resolve_cites(source.get("cites") or [], principal) or None,
                                cited_by=self._cited_by(source, principal) or None,
                                replaces=source.get("replaces") or None)

    def _resolve_cites(self, cites: list[str], principal: Principal) -> list[Edition]:
        """Each designation the document cites with the id of the archive's document it names, among those the
        caller may read (an edition as cited; without an edition, the newest readable one)."""
        cites = cites[:MAX_CITES]
        if not cites:
            return []
        hits = self._send(build_cited_lookup(cites, list(principal.groups)))["hits"]["hits"]
        exact: dict[str, str] = {}
        newest: dict[str, tuple[int, str]] = {}
        for hit in hits:
            src = hit["_source"]
            exact.setdefault(str(src.get("designation")), src["doc_id"])
            if src.get("family") and (src.get("edition") or 0) >= newest.get(src["family"], (-1, ""))[0]:
                newest[src["family"]] = (src.get("edition") or 0, src["doc_id"])
        return [Edition(designation=d, id=exact.get(d) or (newest.get(d, (0, None))[1]
                                                           if parse_designation(d).edition is None else None))
                for d in cites]

    def _cited_by(self, source: dict[str, Any], principal: Principal) -> list[CitingDocument]:
        """The documents citing this edition, or (when it is the current one) its designation without an edition."""
        if not source.get("designation"):
            return []
        # a citation without an edition names the current edition: it cites a replaced one only by its edition
        family = None if source.get("superseded_by") else source.get("family")
        body = build_citing_lookup(source["designation"], family, list(principal.groups), MAX_CITED_BY)
        return [CitingDocument(id=h["_source"]["doc_id"], designation=h["_source"].get("designation"),
                               title=h["_source"].get("title") or h["_source"].get("file_name") or "")
                for h in self._send(body)["hits"]["hits"] if h["_source"]["doc_id"] != source["doc_id"]]

    def _clause_start(self, doc_id: str, clause: str, principal: Principal, result_id: str) -> int:
        """The index of the first chunk of ``doc_id`` in which ``clause`` starts or runs."""
        body = build_clause_lookup(doc_id, clause, list(principal.groups))
        hits = self._send(body)["hits"]["hits"]
        if not hits:
            raise NotFound(f"no clause {clause} in a document with id {result_id} visible to you",
                           details={"id": result_id, "clause": clause})
        return int(hits[0]["_source"]["chunk_index"])

    def list_sources(self, principal: Principal, client_id: str | None = None) -> SourcesResponse:
        """What the caller can search: documents by type and folder, the date span."""
        return self._call("list_sources", {}, principal, client_id, lambda _: self._list_sources(principal))

    def _list_sources(self, principal: Principal) -> SourcesResponse:
        raw = self._send(build_sources_body(list(principal.groups)))
        aggs = raw["aggregations"]
        return SourcesResponse(
            total_documents=int(aggs["total_docs"]["value"]), total_chunks=int(raw["hits"]["total"]["value"]),
            document_types={b["key"]: b["docs"]["value"] for b in aggs["document_types"]["buckets"]},
            folders={b["key"]: b["docs"]["value"] for b in aggs["folders"]["buckets"]},
            earliest=aggs["earliest"].get("value_as_string"), latest=aggs["latest"].get("value_as_string"),
            most_cited={b["key"]: b["doc_count"] for b in aggs["cited"]["top"]["buckets"]})


def dumped(model: BaseModel) -> str:
    """A reply as it is sent: compact JSON, absent fields left out (every edge serializes this way)."""
    return model.model_dump_json(exclude_none=True)


def response_size(response: SearchResponse) -> int:
    return len(dumped(response))


def fit_budget(response: SearchResponse, budget_chars: int, answer_chars: int | None = None) -> SearchResponse:
    """Size the answer: every document keeps its best passage; its further ones (up to max_chunks) are added
    best first across the whole answer while it stays within ``answer_chars``; should the answer still exceed
    ``budget_chars``, the last results are left to the next page (``truncated``; the cursor continues right
    after the last result kept, so nothing is lost or repeated). The first result is always kept.

    Each part is serialized once: a list's JSON is its items' JSON joined by commas, so sizes add up."""
    results = response.results
    further = sorted(((-c.relevance_score, i, j, c) for i, r in enumerate(results)
                      for j, c in enumerate(r.context_chunks) if j > 0), key=lambda t: t[:3])
    for result in results:
        result.context_chunks = result.context_chunks[:1]
    sizes = [len(dumped(result)) for result in results]
    rest = response_size(response.model_copy(update={"results": []}))
    total = rest + sum(sizes) + max(0, len(sizes) - 1)
    room = min(budget_chars, answer_chars or budget_chars)
    for _, i, j, chunk in further:
        cost = len(dumped(chunk)) + 1
        if len(results[i].context_chunks) == j and total + cost <= room:
            results[i].context_chunks.append(chunk)
            sizes[i] += cost
            total += cost
    if total <= budget_chars:
        return response
    response.meta.truncated = True
    total += len("true") - len("false")
    while len(results) > 1 and total > budget_chars:
        results.pop()
        total -= sizes.pop() + 1  # and its comma
    return response
