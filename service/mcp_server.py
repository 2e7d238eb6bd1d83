"""The MCP server: ``search_documents``, ``get_document`` and ``list_sources``, read-only tools with
pydantic output models (so clients get output schemas).

Bounds are published in the input schema but enforced by the service, so a bad argument comes back
as the product's own ``INVALID_QUERY`` error. A failing tool raises ``ToolError`` whose text is a JSON
object ``{"status": "error", "code", "message", "details"}``: the client sees ``isError`` and a code
it can act on, never a traceback.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, cast

import anyio
import orjson
from loguru import logger
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from service.embedders.factory import build_embedder
from service.errors import InvalidQuery, StroidokError, Unauthorized
from service.opensearch import build_client
from service.query.contract import provided, tool_parameters
from service.query.models import DocumentResponse, SearchResponse, SourcesResponse
from service.querylog import QueryLog, call_entry
from service.search import SearchService
from service.security import Principal, known_token, stdio_principal, token_principal
from service.settings import ServerSettings, Settings

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "Search Russian construction documents (СП, ГОСТ, СНиП, project documentation). Use search_documents with a "
    "Russian query; quote exact phrases (\"...\"); cite results by title, page_number and chunk_id; fetch more "
    "context with get_document(chunk_id). list_sources shows what is indexed, to choose filters."
)


def bounded(description: str, **schema: Any) -> Any:
    """A parameter whose bounds appear in the schema but are checked by the service (own error code)."""
    return Field(description=description, json_schema_extra=schema or None)


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


def error_text(exc: StroidokError) -> str:
    return json.dumps({"status": "error", **exc.to_dict()}, ensure_ascii=False)


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the chain of exceptions it was raised from."""
    cause: BaseException | None = exc
    while cause is not None:
        yield cause
        cause = cause.__cause__


def product_error(exc: BaseException, known: set[str] | None) -> StroidokError:
    """What a failed call means in the product's terms: our own error where one was raised, the
    SDK's schema validation as INVALID_QUERY (field and reason in details), a crash as INTERNAL_ERROR."""
    for cause in causes(exc):
        if isinstance(cause, StroidokError):
            return cause
        if isinstance(cause, ValidationError):
            return InvalidQuery.from_validation(cause, "arguments", "arguments")
    if known is None:
        return InvalidQuery(str(exc).removeprefix("Error executing tool ")[:300])
    return StroidokError("the tool failed unexpectedly; the server log has the details")


def from_service(exc: BaseException) -> bool:
    """Whether a product error raised by the service is among ``exc``'s causes."""
    return any(isinstance(cause, StroidokError) for cause in causes(exc))


Refusal = Callable[[str, dict[str, Any], StroidokError], None]


class ProductServer(MCPServer):
    """The SDK's server, with every failure answered as the product's error object (no SDK prefix, no
    SDK validation text) and unknown arguments refused instead of ignored. Calls refused here, before
    the service sees them, go to ``on_refused`` (the query log)."""

    on_refused: Refusal | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        known = set(tool.parameters.get("properties", {})) if tool else None
        try:
            if known is not None and (unknown := sorted(set(arguments) - known)):
                raise InvalidQuery(f"unknown argument(s): {', '.join(unknown)[:200]}",
                                   details={"problems": [{"field": u[:100], "problem": "unknown argument"}
                                                         for u in unknown[:20]], "known": sorted(known)})
            return await super().call_tool(name, arguments, context)
        except InvalidQuery as exc:
            self._refused(name, arguments, exc)
            raise ToolError(error_text(exc)) from exc
        except ToolError as exc:
            error = product_error(exc, known)
            if not from_service(exc):  # the service has logged its own errors
                self._refused(name, arguments, error)
            raise ToolError(error_text(error)) from exc

    def _refused(self, name: str, arguments: dict[str, Any], error: StroidokError) -> None:
        if self.on_refused is not None:
            self.on_refused(name, arguments, error)


def refusal_logger(log: QueryLog) -> Refusal:
    """Records a call refused before it reached the service (unknown or malformed arguments, no token)."""

    def record(tool: str, arguments: dict[str, Any], error: StroidokError) -> None:
        log.record(call_entry(tool, arguments, "unknown", None, 0.0, error=error))

    return record


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


def build_server(settings: Settings, service: SearchService | None = None) -> MCPServer:
    """The MCP server for ``settings``; ``service`` may be given (tests), else built in the lifespan."""

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[AppState]:
        built = service or SearchService(settings, build_client(settings), build_embedder(settings.embedder))
        try:
            yield AppState(built, settings, anyio.CapacityLimiter(settings.server.max_inflight))
        finally:  # uvicorn re-raises SIGTERM after shutdown, so exit handlers would not run: write the log now
            await anyio.to_thread.run_sync(lambda: (built.log.flush(5.0), refusals.flush(5.0)))

    server = ProductServer(name="stroidok-search", instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING")
    refusals = QueryLog(build_client(settings), settings.index.queries_index, settings.search.log_queries)
    server.on_refused = refusal_logger(refusals)

    def state_of(ctx: Context) -> AppState:
        return cast(AppState, ctx.request_context.lifespan_context)

    async def call(ctx: Context, fn: Callable[[SearchService, Principal, str], BaseModel]) -> CallToolResult:
        state = state_of(ctx)
        try:
            principal, client_id = caller(ctx, state)
            # at most max_inflight calls run at once; the others wait their turn in order, holding no thread
            return answer(await anyio.to_thread.run_sync(lambda: fn(state.service, principal, client_id),
                                                         limiter=state.gate))
        except StroidokError as exc:
            raise ToolError(error_text(exc)) from exc

    async def search_documents(ctx: Context, **arguments: Any) -> CallToolResult:
        """Search the indexed construction documents. Returns documents with their best chunks (text, page
        number, chunk_id, similarity), highlights, relevance, facets by type and month, suggestions and
        pagination (next_cursor). An empty result is a success."""
        return await call(ctx, lambda svc, p, c: svc.search(provided(arguments), p, c))

    search_documents.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context),
         *tool_parameters()], return_annotation=Annotated[CallToolResult, SearchResponse])
    server.tool(annotations=READ_ONLY, structured_output=True)(search_documents)

    @server.tool(annotations=READ_ONLY, structured_output=True)
    async def get_document(
        ctx: Context,
        id: Annotated[str, bounded("A result id (document) or a chunk_id (<document id>:<n>).", maxLength=40)],
        clause: Annotated[str | None, bounded("Open this clause of the document: «5.2.3», «п. 5.2.3», "
                                              "«Приложение Б», «Таблица 4».", maxLength=60)] = None,
    ) -> Annotated[CallToolResult, DocumentResponse]:
        """A document or chunk by id: metadata, the chunk's full text, its neighbouring chunks, page and clause;
        with `clause`, the chunk where that clause of the document starts. Unknown ids, clauses not in the
        document, and ids of documents you may not read, give NOT_FOUND."""
        return await call(ctx, lambda svc, p, c: svc.get_document(id, p, c, clause))

    @server.tool(annotations=READ_ONLY, structured_output=True)
    async def list_sources(ctx: Context) -> Annotated[CallToolResult, SourcesResponse]:
        """What is indexed and visible to you: documents per file type and folder, chunk count, date span."""
        return await call(ctx, lambda svc, p, c: svc.list_sources(p, c))

    return server


def transport_security(settings: ServerSettings) -> TransportSecuritySettings:
    """DNS-rebinding protection on every bind address (the SDK enables it only for loopback names):
    Host and Origin must be loopback, the bind address, or listed in settings."""
    hosts = ["127.0.0.1", "localhost", "[::1]"] + ([settings.host] if settings.host not in ("0.0.0.0", "::") else [])
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + [h for h in hosts] + settings.allowed_hosts,
        allowed_origins=[f"http://{h}:*" for h in hosts] + [f"https://{h}:*" for h in hosts] + settings.allowed_origins,
    )


class RequireToken:
    """ASGI guard: with tokens configured, a request without a valid bearer token gets 401 and our
    ``UNAUTHORIZED`` object, before the MCP layer sees it (no session, no tool list)."""

    def __init__(self, app: Any, settings: ServerSettings, on_refused: Refusal | None = None) -> None:
        self.app, self.settings, self.on_refused = app, settings, on_refused

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.settings.tokens:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if known_token(self.settings, headers.get("authorization")) is None:
                error = Unauthorized("a valid bearer token is required (Authorization: Bearer <token>)")
                if self.on_refused is not None:
                    client = scope.get("client") or ("?", 0)
                    self.on_refused("http", {"path": scope.get("path"), "client": client[0]}, error)
                body = error_text(error)
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body.encode()})
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer, settings: ServerSettings) -> Any:
    """The streamable-HTTP ASGI app with the product's guards around the SDK's."""
    app = server.streamable_http_app(stateless_http=True, json_response=settings.json_response,
                                     host=settings.host,
                                     transport_security=transport_security(settings),
                                     max_request_body_size=settings.max_body_bytes)
    return RequireToken(app, settings, getattr(server, "on_refused", None))


def http_app_from_environment() -> Any:
    """The HTTP app of one worker process (``serve --http --workers N``): settings from the environment,
    as the CLI reads them."""
    settings = Settings()
    return http_app(build_server(settings), settings.server)


def run(settings: Settings, http_port: int | None = None, workers: int = 1) -> None:
    """Serve over stdio (Claude Code), or streamable HTTP on ``http_port`` with ``workers`` processes
    (they share the query cache and rate limits only through Redis: set ``STROIDOK_REDIS_URL``)."""
    if http_port is None:
        build_server(settings).run("stdio")
        return
    import uvicorn

    if workers > 1 and not settings.search.redis_url:
        logger.warning("{} workers without STROIDOK_REDIS_URL: each keeps its own cache and rate limits", workers)
    options = uvicorn_options(settings.server, http_port)
    if workers > 1:
        uvicorn.run("service.mcp_server:http_app_from_environment", factory=True, workers=workers, **options)
        return
    uvicorn.Server(uvicorn.Config(http_app(build_server(settings), settings.server), **options)).run()


def uvicorn_options(settings: ServerSettings, port: int) -> dict[str, Any]:
    """How uvicorn serves the HTTP app on ``port``."""
    return {
        "host": settings.host, "port": port, "log_level": "warning",
        "limit_concurrency": settings.max_connections,
        # longer than clients keep idle connections (httpx: 5 s), so a client never sends on a connection
        # the server is closing (that race reset 1 of 50 concurrent sessions at 5 s)
        "timeout_keep_alive": settings.keep_alive_s,
        "h11_max_incomplete_event_size": 16 * 1024, "backlog": 2048}
