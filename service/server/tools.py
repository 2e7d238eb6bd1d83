"""The MCP tools: ``search_documents``, ``get_document`` and ``list_sources``, read-only, with their output
schemas, served by the SDK's low-level ``Server`` through its public handlers only: it advertises what it
serves (tools) and nothing else (no prompts, no resources).

Each tool's input schema is generated from the contract (``service.search.request.contract``): bounds are published
there and enforced by the service, so a bad argument comes back as the product's own ``INVALID_QUERY``.
"""

from __future__ import annotations

import base64
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import version as package_version
from typing import Any

import anyio
import orjson
from loguru import logger
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel

from service.caller.identity import SCOPE_KEY
from service.caller.limits import RateLimiter
from service.caller.principal import Principal, stdio_principal
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.errors import InvalidQuery, RateLimited, RendersBusy, StroidokError, Unauthorized
from service.search.answer.budget import sent
from service.search.answer.models import (
    CitationsResponse,
    DocumentResponse,
    PageReply,
    SearchResponse,
    SourcesResponse,
)
from service.search.request.contract import (
    CitationsRequest,
    DocumentRequest,
    PageRequest,
    SearchRequest,
    SourcesRequest,
)
from service.search.request.schema import parameter_schemas, provided
from service.search.service import SearchService
from service.server.errors import (
    Refusal,
    admits_null,
    caller_address,
    error_text,
    product_error,
    published_schema,
    refusal_logger,
    refused_nulls,
    unknown_arguments,
)
from service.settings import Settings

#: a document or a citation check answers with whole clause texts, a document's citing lists and neighbours, which
#: can pass the 50,000 characters Claude Code keeps in the context by default
RESULT_CHARS = 200_000
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "Search Russian construction documents (СП, ГОСТ, СНиП, project documentation). Use search_documents with a "
    "Russian query phrased as a norm would state it, with alternative phrasings in `queries`; quote exact phrases "
    "(\"...\"); cite results by title, clause, page_number and chunk_id; fetch more "
    "context with get_document(chunk_id), or open a clause by its citation with get_document(designation, "
    "clause). Before answering with a norm's clause, check the draft's citations with check_citations. "
    "list_sources shows what is indexed, to choose filters."
)

#: a tool's service call: (service, the arguments the caller set, principal, client id) -> its reply
Run = Callable[[SearchService, dict[str, Any], Principal, str], BaseModel]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what the agent reads of it, its contract both ways, and its service call."""

    name: str
    description: str
    request: type[BaseModel]
    returns: type[BaseModel] | None  # None: an image tool (no structured content, which Claude Code would read instead)
    run: Run
    #: runs in a render slot (``render_slots``), never a tool-call slot: a page render may take its 30 s
    renders: bool = False
    #: what Claude Code's tool search matches (Russian and English words an agent or engineer would use)
    hint: str = ""
    #: kept in the model's view from the first turn instead of deferred behind the tool search
    always_load: bool = False
    #: a result up to this many characters stays in the context (Claude Code's own limit is lower); None: the
    #: tool's answers stay well under that limit
    result_chars: int | None = None

    @property
    def parameters(self) -> set[str]:
        return set(self.request.model_fields)

    @property
    def nullable(self) -> set[str]:
        """The parameters whose published schema admits null (an optional one sent as null is "not given")."""
        return {name for name, schema in parameter_schemas(self.request).items() if admits_null(schema)}

    def published(self) -> Tool:
        """The tool as ``tools/list`` shows it: the contract's schema as clients' converters take it."""
        properties = {name: {"title": name.replace("_", " ").title(), **prop}
                      for name, prop in parameter_schemas(self.request).items()}
        schema: dict[str, Any] = {"type": "object", "properties": properties, "title": f"{self.name}Arguments"}
        if required := [name for name, f in self.request.model_fields.items() if f.is_required()]:
            schema["required"] = required
        return Tool(name=self.name, description=" ".join(self.description.split()),
                    input_schema=published_schema(schema),
                    output_schema=self.returns.model_json_schema(mode="serialization") if self.returns else None,
                    annotations=READ_ONLY, _meta=self.meta())

    def meta(self) -> dict[str, Any]:
        """The tool's ``_meta`` for Claude Code: its search hint, whether it is always loaded, how large a result
        stays in the context."""
        meta: dict[str, Any] = {"anthropic/searchHint": self.hint}
        if self.always_load:
            meta["anthropic/alwaysLoad"] = True
        if self.result_chars is not None:
            meta["anthropic/maxResultSizeChars"] = self.result_chars
        return meta


TOOLS = (
    ToolSpec("search_documents", """Search the indexed construction documents. Returns documents with their best
        chunks (text, page number, clause, chunk_id, similarity), highlights, relevance, facets by type and month,
        suggestions and pagination (next_cursor). An empty result is a success. Norms rarely use the asker's words:
        write `query` in a norm's terminology and add alternative phrasings in `queries` (one request for all).
        When the right document is found but no shown passage answers, search inside it: get_document with its
        id and the query, or the same query with `path` set to its file_path and `max_chunks` 10 (every chunk of
        it is then ranked).""", SearchRequest, SearchResponse, lambda svc, a, p, c: svc.search(a, p, c),
             hint="поиск по нормам СП ГОСТ СНиП пункт требования; search construction norms standards clauses",
             always_load=True),
    ToolSpec("get_document", """A document or chunk by id — or by `designation` («СП 1.13130.2020»; without an
        edition the current one) —: metadata, the chunk's full text, its neighbouring chunks, page and clause;
        with `clause`, the chunk where that clause of the document starts (`compare`: that clause in every
        edition held, with what changed); with `query`, the document's best passages for it (every chunk of it
        ranked), each with clause and page — the call to make when the right document was found but no shown
        passage answers. Unknown ids or designations, clauses not in the document, and documents you may not
        read, give NOT_FOUND.""", DocumentRequest,
             DocumentResponse, lambda svc, a, p, c: svc.get_document(
                 a.get("id"), p, c, a.get("clause"), a.get("query"), designation=a.get("designation"),
                 compare=a.get("compare")),
             hint="открыть документ пункт норматива редакции; open a norm's document, clause or edition",
             result_chars=RESULT_CHARS),
    ToolSpec("check_citations", """Check every norm citation in a text before you answer with it: each «СП
        54.13330.2016, п. 5.8», «п.5.8 СП 54.13330», «табл. 2 ГОСТ 13579-2018» found in the text gets a verdict
        — found (with the clause's text, page and chunk_id), clause_not_found (with the nearest clauses),
        superseded (with the replacing document and its clause), edition_not_found, document_not_found,
        ambiguous — and a value stated after a colon («п. 5.8: не менее 2,7 м») or quoted «…» is checked
        against the clause, its bound and modality too (value_matches; clause_words says what the clause says).
        Cite only what comes back found and current; quote the value from the found text. With document_id
        instead of text: every citation of an indexed document (a project's note), each with its page and
        line, and a summary by verdict.""", CitationsRequest, CitationsResponse,
             lambda svc, a, p, c: svc.check_citations(a, p, c),
             hint="проверить ссылки на нормы пункт редакция нормоконтроль; verify norm citations before answering",
             always_load=True, result_chars=RESULT_CHARS),
    ToolSpec("get_page_image", """A page of a PDF document as an image (PNG, at most 1600 pixels on a side): to
        read what a scan's text layer garbles — a table's numbers, a drawing's labels — when get_document's text
        of that page does not read right. `page` as page_number gives it. Not for text you can read: it costs
        far more context than the page's text.""", PageRequest, None,
             lambda svc, a, p, c: svc.get_page_image(a, p, c), renders=True,
             hint="страница PDF изображение скан чертеж таблица; a PDF page as an image"),
    ToolSpec("list_sources", """What is indexed and visible to you: documents per file type and folder, chunk
        count, date span; with `folder`, only what lies below it.""", SourcesRequest, SourcesResponse,
             lambda svc, a, p, c: svc.list_sources(p, c, a),
             hint="какие документы проиндексированы папки архив; what the archive holds"),
)


@dataclass
class AppState:
    service: SearchService
    settings: Settings
    gate: anyio.CapacityLimiter
    #: page renders: slots of their own, so a slow render never keeps another tool's call waiting
    renders: anyio.CapacityLimiter


def answer(reply: BaseModel, returns: type[BaseModel]) -> CallToolResult:
    """A tool's reply as structured content plus the same JSON, compact, as its text block (indented JSON is
    whitespace an agent's context pays for), absent what is empty, checked against its own published output
    schema."""
    structured = sent(reply)
    returns.model_validate(structured)  # a reply of ours that breaks its schema is our error, not the caller's
    return CallToolResult(content=[TextContent(type="text", text=orjson.dumps(structured).decode())],
                          structured_content=structured)


def picture(reply: PageReply) -> CallToolResult:
    """A page image: the PNG as MCP image content, and what it is as a short JSON text; no structured content
    (a client reading only that would miss the image)."""
    facts = orjson.dumps(reply.model_dump(exclude={"png"}, exclude_none=True)).decode()
    return CallToolResult(content=[ImageContent(type="image", data=base64.b64encode(reply.png).decode("ascii"),
                                                mime_type="image/png"), TextContent(type="text", text=facts)])


def refusal(error: StroidokError) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=error_text(error))], is_error=True)


def caller(ctx: ServerRequestContext[Any], state: AppState) -> tuple[Principal, str]:
    """The principal and the name its calls are limited under: over stdio from settings; over HTTP as the door
    read it (``service.server.http.Door``), never read again here. An HTTP request the door did not admit has no
    caller: refused."""
    request = ctx.request
    if request is None:
        principal = stdio_principal(state.settings.server)
        return principal, principal.name
    admitted = request.scope.get("state", {}).get(SCOPE_KEY)
    if admitted is None:
        raise Unauthorized("a valid bearer token is required (Authorization: Bearer <token>)")
    principal, name = admitted
    return principal, name


class ProductServer(Server[AppState]):
    """The SDK's low-level server with the product's tools and its one error boundary around every call.
    Calls refused at the door (unknown tool, unknown or null arguments) go to ``on_refused`` (the query log),
    which the lifespan sets to the service's own log; the HTTP guard refuses through it too."""

    on_refused: Refusal | None = None

    def __init__(self, settings: Settings, service: SearchService | None = None) -> None:
        self.tools = {spec.name: spec for spec in TOOLS}
        self.published = [spec.published() for spec in TOOLS]
        self.nullable = {spec.name: spec.nullable for spec in TOOLS}
        super().__init__(name="stroidok-search", version=package_version("stroidok"), instructions=INSTRUCTIONS,
                         lifespan=self._lifespan_of(settings, service), on_list_tools=self._list_tools,
                         on_call_tool=self._call_tool, get_tool_input_schema=self._input_schema)

    def _lifespan_of(self, settings: Settings, service: SearchService | None
                     ) -> Callable[[Server[AppState]], Any]:
        """The lifespan owns the one engine client and query log; refused calls are logged through the
        service's. ``service`` may be given (tests), else it is built here."""

        @asynccontextmanager
        async def lifespan(_: Server[AppState]) -> AsyncIterator[AppState]:
            built = service or SearchService(settings, build_client(settings), build_embedder(settings.embedder))
            if service is None:
                await anyio.to_thread.run_sync(lambda: settle(built))
            self.on_refused = refusal_logger(built.log, RateLimiter(settings.search.refused_rate_limit,
                                                                    settings.search.redis_url))
            try:
                yield AppState(built, settings, anyio.CapacityLimiter(settings.server.max_inflight),
                               anyio.CapacityLimiter(settings.server.render_slots))
            finally:  # uvicorn re-raises SIGTERM after shutdown, so exit handlers would not run: write the log now
                self.on_refused = None
                await anyio.to_thread.run_sync(lambda: built.log.flush(5.0))

        return lifespan

    async def _list_tools(self, _: ServerRequestContext[AppState], __: PaginatedRequestParams | None
                          ) -> ListToolsResult:
        return ListToolsResult(tools=self.published)

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        tool = next((t for t in self.published if t.name == name), None)
        return None if tool is None else tool.input_schema

    async def _call_tool(self, ctx: ServerRequestContext[AppState], params: CallToolRequestParams) -> CallToolResult:
        """One tool call: the door's checks, then the service call in a worker thread (at most max_inflight
        at once, the others wait their turn in order, holding no thread); every failure as the product's error."""
        arguments = params.arguments or {}
        spec = self.tools.get(params.name)
        refused = (InvalidQuery(f"unknown tool: {params.name[:100]}", details={"known": sorted(self.tools)})
                   if spec is None else unknown_arguments(arguments, spec.parameters)
                   or refused_nulls(arguments, self.nullable[spec.name]))
        if refused is not None or spec is None:
            return refusal(self._refused(params.name, arguments, refused or InvalidQuery("unknown tool"), ctx))
        state = ctx.lifespan_context
        principal, client_id = caller(ctx, state)
        try:
            reply = await in_slot(state, spec.renders, lambda: spec.run(state.service, provided(arguments), principal,
                                                                     client_id))
            if isinstance(reply, PageReply) or spec.returns is None:
                return picture(PageReply.model_validate(reply))
            return answer(reply, spec.returns)
        except Exception as exc:  # the one boundary: the service has logged (and rate-limited) its own errors
            return refusal(product_error(exc))

    def _refused(self, name: str, arguments: dict[str, Any], error: StroidokError, ctx: Any) -> StroidokError:
        """Log a call refused before the service; past the refused-call limit, RATE_LIMIT instead."""
        if self.on_refused is None:
            return error
        try:
            self.on_refused(name, arguments, error, caller_address(ctx))
        except RateLimited as limited:
            return limited
        return error


async def in_slot(state: AppState, renders: bool, call: Callable[[], BaseModel]) -> BaseModel:
    """``call`` in a worker thread: a tool call in a tool-call slot (waiting its turn, holding no thread); a page
    render in a render slot, waited for at most ``render_wait_s`` (then ``RENDER_BUSY``)."""
    if not renders:
        return await anyio.to_thread.run_sync(call, limiter=state.gate)
    wait_s = state.settings.server.render_wait_s
    with anyio.move_on_after(wait_s) as waiting:
        await state.renders.acquire()  # the deadline is on the wait only, never on the render under way
    if waiting.cancelled_caught:
        raise RendersBusy(f"every page-render slot stayed taken for {wait_s:.0f} s: ask again in a few seconds",
                          details={"render_slots": state.settings.server.render_slots})
    try:
        return await anyio.to_thread.run_sync(call)
    finally:
        state.renders.release()


#: the cyclic collector's young-generation threshold while serving (Python's default: 700). A call allocates
#: ~100 K objects that reference counting frees; at 700 the collector ran ~15 times a call, and every few calls a
#: full collection walked the whole heap (2–3 ms a call on the captured default calls)
YOUNG_OBJECTS = 50_000


def settle(service: SearchService) -> None:
    """Before the first call: load what every call reads (the alias's embedder and its statistics), then move
    the heap built so far out of the cyclic collector's reach (``gc.freeze``: the vectors, dictionaries and
    statistics live as long as the server) and let it run less often. Collection by reference counting is
    untouched; a cycle is still collected, later. An engine that is down leaves the embedder to the first call."""
    try:
        service.resolver.current()
    except StroidokError as exc:
        logger.debug("the embedder is loaded by the first call: {}", exc.message)
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])


def build_server(settings: Settings, service: SearchService | None = None) -> ProductServer:
    """The MCP server for ``settings``; ``service`` may be given (tests), else built in the lifespan."""
    logging.getLogger("mcp").setLevel(logging.WARNING)  # the SDK's own chatter; stdout stays the protocol's
    return ProductServer(settings, service)


async def run_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over stdio until the client closes it."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
