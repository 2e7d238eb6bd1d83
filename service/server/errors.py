"""The one error boundary of the MCP server: every failed call, whatever raised it (the door's checks of the
arguments, the service, a crash), leaves as the product's error object ``{"status": "error", "code",
"message", "details"}`` in a result marked ``isError``: the client gets a code it can act on, never a
traceback or the SDK's wording."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from loguru import logger
from pydantic import ValidationError

from service.caller.limits import RateLimiter
from service.errors import InvalidQuery, StroidokError
from service.usage.querylog import QueryLog, refused_entry

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


def product_error(exc: BaseException) -> StroidokError:
    """What a failed call means in the product's terms: our own error where one was raised, and anything
    else — a crash, or a reply of ours that fails its own published output schema — as INTERNAL_ERROR (the
    reason in the server's log, never blamed on the caller's arguments)."""
    for cause in causes(exc):
        if isinstance(cause, StroidokError):
            return cause
    if isinstance(exc, ValidationError):
        logger.error("a reply failed its output schema: {}", exc)
        return StroidokError("the server could not form a valid reply; the server log has the details")
    logger.opt(exception=exc).error("a tool failed unexpectedly")
    return StroidokError("the tool failed unexpectedly; the server log has the details")


def refused_nulls(arguments: dict[str, Any], nullable: set[str]) -> InvalidQuery | None:
    """Arguments sent as null where the published schema does not admit null (``limit: null``): refused,
    not taken as "not given" (the schema says what a caller may send; null is not among it)."""
    if not (wrong := sorted(name for name, value in arguments.items() if value is None and name not in nullable)):
        return None
    return InvalidQuery(f"null is not allowed for: {', '.join(wrong)[:200]}",
                        details={"problems": [{"field": w[:100],
                                               "problem": "null is not allowed"} for w in wrong[:20]]})


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


def caller_address(ctx: Any) -> str:
    """Who sent a call, as far as the transport tells: the HTTP peer's address, else stdio."""
    client = getattr(getattr(ctx, "request", None), "client", None)
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
