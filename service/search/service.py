"""SearchService: the five tools behind one facade, shared by the MCP server, the HTTP door and the CLI.

Every call goes through ``_call`` (rate limit, run, one query-log entry); each tool's work is one module of
``service.search.tools``, named for it. Access filters are part of every request body a tool builds.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from opensearchpy import OpenSearch
from pydantic import BaseModel

from service.caller.limits import RateLimiter
from service.caller.principal import Principal
from service.embedders.base import Embedder
from service.search.answer.models import CitationsResponse, DocumentResponse, PageReply, SearchResponse, SourcesResponse
from service.search.cache import build_cache
from service.search.citations.document import Pages
from service.search.documents import Documents
from service.search.reads import EngineReads
from service.search.request.contract import (
    validate_citations_request,
    validate_page_request,
    validate_request,
    validate_sources_request,
)
from service.search.request.schema import logged_fields
from service.search.tools import check_citations, get_document, get_page_image, list_sources
from service.search.tools.search_documents import Searcher
from service.search.vectors import CoverageCache, EmbedderResolver
from service.settings import Settings
from service.usage.feedback import RecentSearches
from service.usage.querylog import QueryLog, call_entry

T = TypeVar("T", bound=BaseModel)


class SearchService:
    """The search side of the product: one instance per process, its engine client and embedder shared."""

    def __init__(self, settings: Settings, client: OpenSearch, embedder: Embedder | None) -> None:
        self.settings, self.client, self.embedder = settings, client, embedder
        self.cache = build_cache(settings.search)
        self.limiter = RateLimiter(settings.search.rate_limit, settings.search.redis_url)
        self.log = QueryLog(client, settings.index.queries_index, settings.search.log_queries,
                            retention_days=settings.search.log_retention_days,
                            max_bytes=settings.search.log_queue_bytes)
        self.resolver = EmbedderResolver(client, settings, embedder)
        self.coverage = CoverageCache(client, settings.index.alias)
        self.reads = EngineReads(settings, client)
        self.documents = Documents(self.reads.send, settings.search.passage_chars)
        self.searcher = Searcher(settings, client, self.reads, self.cache, self.resolver, self.coverage,
                                 self.documents)
        self.recent = RecentSearches(settings.search.feedback_window_s)

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
        """search_documents (``service.search.tools.search_documents``)."""
        return self._call("search_documents", arguments, principal, client_id,
                          lambda began: self.searcher.search(validate_request(arguments), principal, began))

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
                          lambda _: get_document.open_document(arguments, principal, self.documents, self.searcher))

    def get_page_image(self, arguments: dict[str, Any], principal: Principal,
                       client_id: str | None = None) -> PageReply:
        """A PDF page of a document the caller may read, rendered (``service.search.tools.get_page_image``)."""
        return self._call("get_page_image", arguments, principal, client_id,
                          lambda _: get_page_image.page_image(validate_page_request(arguments), principal, self.reads))

    def check_citations(self, arguments: dict[str, Any], principal: Principal,
                        client_id: str | None = None) -> CitationsResponse:
        """Every citation in a text, or in an indexed document, checked against the archive the caller may read."""
        return self._call("check_citations", arguments, principal, client_id,
                          lambda _: check_citations.citations_of(validate_citations_request(arguments), principal,
                                                                 self.documents, self.reads,
                                                                 self.settings.search.answer_chars))

    def check_pages(self, name: str, pages: Pages, principal: Principal, client_id: str | None = None,
                    progress: Callable[[int, int], None] | None = None) -> CitationsResponse:
        """Every citation of a file's ``pages`` checked; ``progress(done, total)`` after each batch."""
        return self._call("check_citations", {"file": name}, principal, client_id,
                          lambda _: check_citations.check_pages(name, pages, principal, self.documents,
                                                                self.settings.search.answer_chars, progress))

    def list_sources(self, principal: Principal, client_id: str | None = None,
                     arguments: dict[str, Any] | None = None) -> SourcesResponse:
        """What the caller can search (below ``folder``, if given): documents by type and folder, the date span."""
        given = arguments or {}
        return self._call("list_sources", given, principal, client_id,
                          lambda _: list_sources.sources(principal, validate_sources_request(given).folder,
                                                         self.reads))
