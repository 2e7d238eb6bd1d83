"""The one error boundary of the MCP server: every failed call, whatever raised it (the service, the SDK's
argument validation, a crash), leaves as the product's error object ``{"status": "error", "code",
"message", "details"}`` in a ``ToolError``: the client sees ``isError`` and a code it can act on, never a
traceback or the SDK's wording."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from loguru import logger
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from service.errors import InvalidQuery, RateLimited, StroidokError
from service.querylog import QueryLog, refused_entry
from service.security import RateLimiter

#: (tool, arguments, error, who: an address or caller) -> None; raises ``RateLimited`` past the refused-call limit
Refusal = Callable[[str, dict[str, Any], StroidokError, str], None]


def error_text(exc: StroidokError) -> str:
    return json.dumps({"status": "error", **exc.to_dict()}, ensure_ascii=False)


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the chain of exceptions it was raised from."""
    cause: BaseException | None = exc
    while cause is not None:
        yield cause
        cause = cause.__cause__


def product_error(exc: BaseException, known: set[str] | None) -> StroidokError:
    """What a failed call means in the product's terms: our own error where one was raised, the SDK's
    validation of the caller's arguments as INVALID_QUERY (field and reason in details), and anything else —
    a crash, or a reply of ours that fails its own published output schema — as INTERNAL_ERROR (the reason
    in the server's log, never blamed on the caller's arguments)."""
    for cause in causes(exc):
        if isinstance(cause, StroidokError):
            return cause
        if isinstance(cause, ValidationError) and isinstance(exc, UnexpectedToolError):
            logger.error("a reply failed its output schema: {}", cause)
            return StroidokError("the server could not form a valid reply; the server log has the details")
        if isinstance(cause, ValidationError):
            return InvalidQuery.from_validation(cause, "arguments", "arguments")
    if known is None:
        return InvalidQuery(str(exc).removeprefix("Error executing tool ")[:300])
    return StroidokError("the tool failed unexpectedly; the server log has the details")


def from_service(exc: BaseException) -> bool:
    """Whether a product error raised by the service is among ``exc``'s causes."""
    return any(isinstance(cause, StroidokError) for cause in causes(exc))


def refused_nulls(arguments: dict[str, Any], nullable: set[str]) -> InvalidQuery | None:
    """Arguments sent as null where the published schema does not admit null (``limit: null``): refused,
    not taken as "not given" (the schema says what a caller may send; null is not among it)."""
    if not (wrong := sorted(name for name, value in arguments.items() if value is None and name not in nullable)):
        return None
    return InvalidQuery(f"null is not allowed for: {', '.join(wrong)[:200]}",
                        details={"problems": [{"field": w[:100], "problem": "null is not allowed"} for w in wrong[:20]]})


def admits_null(schema: dict[str, Any]) -> bool:
    """Whether a parameter's JSON schema admits null (``"type": "null"`` alone or among ``anyOf``)."""
    return any(option.get("type") == "null" for option in schema.get("anyOf", [schema]))


def unknown_arguments(arguments: dict[str, Any], known: set[str]) -> InvalidQuery | None:
    """Arguments the tool does not declare: refused, not ignored (a misspelt filter would widen a search)."""
    if not (unknown := sorted(set(arguments) - known)):
        return None
    return InvalidQuery(f"unknown argument(s): {', '.join(unknown)[:200]}",
                        details={"problems": [{"field": u[:100], "problem": "unknown argument"} for u in unknown[:20]],
                                 "known": sorted(known)})


class ProductServer(MCPServer):
    """The SDK's server with the product's error boundary around every tool call. Calls refused before
    the service sees them (unknown or malformed arguments) go to ``on_refused`` (the query log), which
    the lifespan sets to the service's own log."""

    on_refused: Refusal | None = None
    _parameters: dict[str, set[str]] | None = None
    _nullable: dict[str, set[str]] | None = None

    #: what the server does not offer, so does not advertise: no prompts, no resources
    UNSERVED = ("prompts/list", "prompts/get", "resources/list", "resources/templates/list", "resources/read",
                "resources/subscribe", "resources/unsubscribe")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, subscriptions=False, **kwargs)
        # the SDK registers a handler for every method, and advertises a capability for each it serves
        for method in self.UNSERVED:
            self._lowlevel_server._request_handlers.pop(method, None)

    def publish_schemas(self) -> None:
        """Each tool's input schema as published: ``published_schema`` of what the SDK generated."""
        for tool in self._tool_manager.list_tools():
            tool.parameters = published_schema(tool.parameters)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        known = (await self._known_parameters()).get(name)
        try:
            if known is not None and (refused := unknown_arguments(arguments, known)
                                      or refused_nulls(arguments, (self._nullable or {}).get(name, set()))):
                raise refused
            return await super().call_tool(name, arguments, context)
        except InvalidQuery as exc:
            raise ToolError(error_text(self._refused(name, arguments, exc, context))) from exc
        except ToolError as exc:
            error = product_error(exc, known)
            if not from_service(exc):  # the service has logged (and rate-limited) its own errors
                error = self._refused(name, arguments, error, context)
            raise ToolError(error_text(error)) from exc

    async def _known_parameters(self) -> dict[str, set[str]]:
        """Each tool's declared parameters, from the tool list the SDK publishes (tools are fixed once built)."""
        if self._parameters is None:
            tools = await self.list_tools()
            self._parameters = {tool.name: set(tool.input_schema.get("properties", {})) for tool in tools}
            self._nullable = {tool.name: {name for name, schema in tool.input_schema.get("properties", {}).items()
                                          if admits_null(schema)} for tool in tools}
        return self._parameters

    def _refused(self, name: str, arguments: dict[str, Any], error: StroidokError, context: Any) -> StroidokError:
        """Log a call refused before the service; past the refused-call limit, RATE_LIMIT instead."""
        if self.on_refused is None:
            return error
        try:
            self.on_refused(name, arguments, error, caller_address(context))
        except RateLimited as limited:
            return limited
        return error


def caller_address(context: Any) -> str:
    """Who sent a call, as far as the transport tells: the HTTP peer's address, else stdio."""
    request = getattr(getattr(context, "request_context", None), "request", None)
    client = getattr(request, "client", None)
    return f"addr:{client.host}" if client is not None else "stdio"


def refusal_logger(log: QueryLog, limiter: RateLimiter) -> Refusal:
    """Records a call refused before it reached the service (unknown or malformed arguments, no token) as a
    compact entry, at most the refused-call limit per address or caller: past it ``RateLimited`` is raised and
    nothing is written, so a flood of refused calls costs neither the log nor the engine."""

    def record(tool: str, arguments: dict[str, Any], error: StroidokError, who: str) -> None:
        if who != "stdio":  # the one local agent of a stdio server is not a flood
            limiter.check(who, "refused")
        log.record(refused_entry(tool, arguments, error, who))

    return record


def published_schema(schema: Any) -> Any:
    """A tool's input schema as clients' converters take it: no boolean ``additionalProperties`` at any depth
    (google-genai's MCP conversion reads every one as a schema and fails on ``false``; OpenAI's strict mode,
    through openai-agents, closes each object itself). Unknown arguments are refused all the same: by the
    server at the top (``unknown_arguments``), by the contract's models inside."""
    if isinstance(schema, list):
        return [published_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: published_schema(v) for k, v in schema.items()
            if not (k == "additionalProperties" and isinstance(v, bool))}
