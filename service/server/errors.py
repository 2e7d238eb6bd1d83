"""The one error boundary of the MCP server: every failed call, whatever raised it (the service, the SDK's
argument validation, a crash), leaves as the product's error object ``{"status": "error", "code",
"message", "details"}`` in a ``ToolError``: the client sees ``isError`` and a code it can act on, never a
traceback or the SDK's wording."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from service.errors import InvalidQuery, StroidokError
from service.querylog import QueryLog, call_entry

Refusal = Callable[[str, dict[str, Any], StroidokError], None]


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

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        known = (await self._known_parameters()).get(name)
        try:
            if known is not None and (refused := unknown_arguments(arguments, known)):
                raise refused
            return await super().call_tool(name, arguments, context)
        except InvalidQuery as exc:
            self._refused(name, arguments, exc)
            raise ToolError(error_text(exc)) from exc
        except ToolError as exc:
            error = product_error(exc, known)
            if not from_service(exc):  # the service has logged its own errors
                self._refused(name, arguments, error)
            raise ToolError(error_text(error)) from exc

    async def _known_parameters(self) -> dict[str, set[str]]:
        """Each tool's declared parameters, from the tool list the SDK publishes (tools are fixed once built)."""
        if self._parameters is None:
            self._parameters = {tool.name: set(tool.input_schema.get("properties", {}))
                                for tool in await self.list_tools()}
        return self._parameters

    def _refused(self, name: str, arguments: dict[str, Any], error: StroidokError) -> None:
        if self.on_refused is not None:
            self.on_refused(name, arguments, error)


def refusal_logger(log: QueryLog) -> Refusal:
    """Records a call refused before it reached the service (unknown or malformed arguments, no token)."""

    def record(tool: str, arguments: dict[str, Any], error: StroidokError) -> None:
        log.record(call_entry(tool, arguments, "unknown", None, 0.0, error=error))

    return record
