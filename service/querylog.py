"""The query log: one entry per tool call, refused calls included, with every argument and the error code.

Entries go to the query-log index (for OpenSearch Dashboards) and, at DEBUG, to stderr (``--verbose``).
Logging is best effort: it never fails a call.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from loguru import logger
from opensearchpy import OpenSearch
from opensearchpy import exceptions as os_exc
from pydantic import BaseModel, ValidationError

from service.errors import StroidokError
from service.query.contract import SearchRequest

MAX_ARGUMENTS = 40
MAX_VALUE_CHARS = 500


def logged_arguments(arguments: dict[str, Any]) -> dict[str, str]:
    """The call's arguments as the log keeps them: each value as JSON text, bounded in count and length."""
    kept = list(arguments.items())[:MAX_ARGUMENTS]
    return {str(k)[:100]: json.dumps(v, ensure_ascii=False, default=str)[:MAX_VALUE_CHARS] for k, v in kept}


def result_summary(result: BaseModel | None) -> dict[str, Any]:
    """What a successful call returned, in the log's fields."""
    meta = getattr(result, "meta", None)
    if meta is not None:  # a search
        return {"route_used": meta.route_used, "operator_used": meta.operator_used,
                "total_results": meta.total_results, "returned": len(getattr(result, "results", [])),
                "cached": meta.cached, "truncated": meta.truncated, "embedding_ms": meta.timings.embedding_ms,
                "search_ms": meta.timings.search_ms}
    if hasattr(result, "total_documents"):
        return {"total_results": result.total_documents}  # type: ignore[union-attr]
    return {"returned": 1} if result is not None else {}


def request_fields(arguments: dict[str, Any]) -> dict[str, Any]:
    """The validated search request's main fields (defaults filled), when the arguments are valid."""
    try:
        request = SearchRequest.model_validate(arguments)
    except (ValidationError, TypeError, ValueError):
        return {}
    return {"search_mode": request.search_mode, "operator": request.operator, "page": request.page,
            "document_types": request.document_types}


def call_entry(tool: str, arguments: dict[str, Any], principal: str, client: str | None, total_ms: float,
               result: BaseModel | None = None, error: BaseException | None = None) -> dict[str, Any]:
    """One log entry of a tool call. Pure."""
    code = error.code if isinstance(error, StroidokError) else ("INTERNAL_ERROR" if error else None)
    entry: dict[str, Any] = {
        "tool": tool, "principal": principal, "client": client,
        "query": str(arguments.get("query") or arguments.get("id") or "")[:500],
        "status": "error" if error else "ok", "error_code": code, "total_ms": round(total_ms, 2),
        "arguments": logged_arguments(arguments),
    }
    if tool == "search_documents":
        entry.update(request_fields(arguments))
    entry.update(result_summary(result))
    return entry


class QueryLog:
    def __init__(self, client: OpenSearch, index: str, enabled: bool = True) -> None:
        self.client, self.index, self.enabled = client, index, enabled
        self._exists = False

    def _ready(self) -> bool:
        """Write only into the index `stroidok index init` created (never auto-create one without its mapping)."""
        if not self._exists:
            try:
                self._exists = bool(self.client.indices.exists(index=self.index))
            except (os_exc.OpenSearchException, OSError):
                return False
            if not self._exists:
                logger.warning("query log index {} missing; run `stroidok index init`", self.index)
        return self._exists

    def record(self, entry: dict[str, Any]) -> None:
        entry = {"timestamp": datetime.now(UTC).isoformat(), **entry}
        logger.debug("query {}", entry)  # on stderr with --verbose; always in the query-log index
        if not self.enabled or not self._ready():
            return
        try:
            self.client.index(index=self.index, body=entry, request_timeout=5)
        except (os_exc.OpenSearchException, OSError) as exc:
            logger.warning("query log not written: {}", exc)
