"""Where a page of results starts and what comes next: offsets, cursors bound to their query, page numbers.
"""

from __future__ import annotations

import base64
import hashlib
import json

from service.errors import (
    InvalidQuery,
)
from service.search.answer.models import (
    Pagination,
)
from service.search.request.contract import MAX_PAGE_DEPTH, SearchRequest


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
        offset, fingerprint = data["o"], data["f"]
        if type(offset) is not int or not isinstance(fingerprint, str):  # Infinity, 1e400, 1.5, true: not offsets
            raise ValueError("not a cursor")
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
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
    ranks at most ``pagination_depth`` chunks) before the count did: nothing comes after what was found.

    A full page cannot tell that the ranking ends right after it; the cursor page after it comes back empty
    and says how far the walk reached (its offset: the pages before it were full)."""
    page = offset // request.limit + 1
    pages = max(1, -(-total // request.limit))
    has_more = offset + returned < min(total, MAX_PAGE_DEPTH) and (cut or (returned > 0 and not exhausted))
    # the ranking ran out on this page before the count: say how far a walk reaches (a page past it says nothing)
    ended_early = exhausted and not cut and returned > 0 and offset + returned < total
    # the ranking ran out exactly where the previous page of this walk ended
    ended_before = exhausted and returned == 0 and bool(request.cursor) and 0 < offset < total
    if ended_before:
        return Pagination(page=page, limit=request.limit, total_pages=max(1, -(-offset // request.limit)),
                          has_more=False, reachable=offset)
    return Pagination(page=page, limit=request.limit, total_pages=page if ended_early else pages, has_more=has_more,
                      next_cursor=encode_cursor(request, offset + returned) if has_more else None,
                      reachable=offset + returned if ended_early else None)
