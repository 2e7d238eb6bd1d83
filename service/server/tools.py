"""The MCP tools: ``search_documents``, ``get_document`` and ``list_sources``, read-only, with pydantic output
models (so clients get output schemas).

Each tool's input schema is generated from the contract (``service.query.contract``): bounds are published
there and enforced by the service, so a bad argument comes back as the product's own ``INVALID_QUERY``.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import version as package_version
from typing import Annotated, Any, cast

import anyio
import orjson
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from service.embedders.factory import build_embedder
from service.opensearch import build_client
from service.query.contract import DocumentRequest, SearchRequest, SourcesRequest, provided, tool_parameters
from service.query.models import DocumentResponse, SearchResponse, SourcesResponse
from service.search import SearchService
from service.security import Principal, RateLimiter, stdio_principal, token_principal
from service.server.errors import ProductServer, refusal_logger
from service.settings import Settings

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "Search Russian construction documents (СП, ГОСТ, СНиП, project documentation). Use search_documents with a "
    "Russian query phrased as a norm would state it, with alternative phrasings in `queries`; quote exact phrases "
    "(\"...\"); cite results by title, clause, page_number and chunk_id; fetch more "
    "context with get_document(chunk_id). list_sources shows what is indexed, to choose filters."
)

Call = Callable[[SearchService, Principal, str], BaseModel]


@dataclass
class AppState:
    service: SearchService
    settings: Settings
    gate: anyio.CapacityLimiter


def answer(reply: BaseModel) -> CallToolResult:
    """A tool's reply as structured content plus the same JSON, compact, as its text block (the SDK would
    indent it: ~11 % more bytes, and indentation is whitespace an agent's context pays for)."""
    structured = reply.model_dump(mode="json", by_alias=True, exclude_none=True)  # dumped once; orjson writes the same JSON text
    return CallToolResult(content=[TextContent(type="text", text=orjson.dumps(structured).decode())],
                          structured_content=structured)


def caller(ctx: Context | None, state: AppState) -> tuple[Principal, str]:
    """The principal: from the bearer token over HTTP, from settings over stdio."""
    request = getattr(getattr(ctx, "request_context", None), "request", None) if ctx is not None else None
    if request is None:
        principal = stdio_principal(state.settings.server)
        return principal, principal.name
    principal = token_principal(state.settings.server, request.headers.get("authorization"))
    if state.settings.server.tokens:
        return principal, principal.name
    client = request.client.host if request.client else "http"
    return principal, f"{principal.name}@{client}"


def with_contract(fn: Callable[..., Any], model: type[BaseModel], returns: type[BaseModel]) -> Callable[..., Any]:
    """``fn(ctx, **arguments)`` given the contract's parameters as its signature, so the SDK publishes the
    model's exact schema and passes the arguments through for the service to validate once."""
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context),
         *tool_parameters(model)], return_annotation=Annotated[CallToolResult, returns])
    return fn


def build_server(settings: Settings, service: SearchService | None = None) -> MCPServer:
    """The MCP server for ``settings``; ``service`` may be given (tests), else built in the lifespan. The
    lifespan owns the one engine client and query log: refused calls are logged through the service's."""

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[AppState]:
        built = service or SearchService(settings, build_client(settings), build_embedder(settings.embedder))
        cast(ProductServer, server).on_refused = refusal_logger(
            built.log, RateLimiter(settings.search.refused_rate_limit, settings.search.redis_url))
        try:
            yield AppState(built, settings, anyio.CapacityLimiter(settings.server.max_inflight))
        finally:  # uvicorn re-raises SIGTERM after shutdown, so exit handlers would not run: write the log now
            cast(ProductServer, server).on_refused = None
            await anyio.to_thread.run_sync(lambda: built.log.flush(5.0))

    server = ProductServer(name="stroidok-search", version=package_version("stroidok"), instructions=INSTRUCTIONS,
                           lifespan=lifespan, log_level="WARNING")

    async def call(ctx: Context, fn: Call) -> CallToolResult:
        """Run a tool's service call in a worker thread: at most max_inflight at once, the others wait their
        turn in order, holding no thread. Errors go up to the server's one boundary (``ProductServer``)."""
        state = cast(AppState, ctx.request_context.lifespan_context)
        principal, client_id = caller(ctx, state)
        return answer(await anyio.to_thread.run_sync(lambda: fn(state.service, principal, client_id),
                                                     limiter=state.gate))

    async def search_documents(ctx: Context, **arguments: Any) -> CallToolResult:
        """Search the indexed construction documents. Returns documents with their best chunks (text, page
        number, clause, chunk_id, similarity), highlights, relevance, facets by type and month, suggestions and
        pagination (next_cursor). An empty result is a success. Norms rarely use the asker's words: write
        `query` in a norm's terminology and add alternative phrasings in `queries` (one request for all). When
        the right document is found but no shown passage answers, search inside it: get_document with its id and
        the query, or the same query with `path` set to its file_path and `max_chunks` 10 (every chunk of it
        is then ranked)."""
        return await call(ctx, lambda svc, p, c: svc.search(provided(arguments), p, c))

    async def get_document(ctx: Context, **arguments: Any) -> CallToolResult:
        """A document or chunk by id: metadata, the chunk's full text, its neighbouring chunks, page and clause;
        with `clause`, the chunk where that clause of the document starts; with `query`, the document's best
        passages for it (every chunk of it ranked), each with clause and page — the call to make when the right
        document was found but no shown passage answers. Unknown ids, clauses not in the document, and ids of
        documents you may not read, give NOT_FOUND."""
        given = provided(arguments)
        return await call(ctx, lambda svc, p, c: svc.get_document(given.get("id", ""), p, c, given.get("clause"),
                                                                  given.get("query")))

    async def list_sources(ctx: Context, **arguments: Any) -> CallToolResult:
        """What is indexed and visible to you: documents per file type and folder, chunk count, date span; with
        `folder`, only what lies below it."""
        given = provided(arguments)
        return await call(ctx, lambda svc, p, c: svc.list_sources(p, c, given))

    for tool in (with_contract(search_documents, SearchRequest, SearchResponse),
                 with_contract(get_document, DocumentRequest, DocumentResponse),
                 with_contract(list_sources, SourcesRequest, SourcesResponse)):
        server.tool(description=inspect.cleandoc(tool.__doc__ or ""), annotations=READ_ONLY,
                    structured_output=True)(tool)
    server.publish_schemas()
    return server
