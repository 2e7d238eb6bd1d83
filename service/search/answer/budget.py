"""The size of an answer: serialized once, further passages added best first while it fits, the last
results left to the next page when it does not.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from service.search.answer.models import (
    SearchResponse,
    Timings,
)

#: lists a reply leaves out when they are empty: a document's passages (none asked for, or shown as
#: ``passages`` by ``get_document`` with a query) and a chunk's neighbours (none, or a query answer)
LEFT_OUT_WHEN_EMPTY = frozenset({"context_chunks", "neighbours"})


def without_empty(value: Any) -> Any:
    """``value`` with every ``LEFT_OUT_WHEN_EMPTY`` key whose list is empty removed, at any depth (an empty
    ``results`` stays: it is the answer)."""
    if isinstance(value, dict):
        return {key: without_empty(item) for key, item in value.items()
                if not (key in LEFT_OUT_WHEN_EMPTY and item == [])}
    if isinstance(value, list):
        return [without_empty(item) for item in value]
    return value


def sent(model: BaseModel) -> dict[str, Any]:
    """A reply as it is sent, as JSON data: absent fields and empty passages or neighbours left out (every edge
    serializes this way)."""
    return without_empty(model.model_dump(mode="json", by_alias=True, exclude_none=True))  # type: ignore[no-any-return]


def dumped(model: BaseModel) -> str:
    """A reply as it is sent: compact JSON of ``sent``."""
    return orjson.dumps(sent(model)).decode()


#: the timings an answer is sized with: their widest, so the same passages fit whatever a call's times were (their
#: digits moved an answer at its edge by a passage between two runs of one question)
WIDEST_TIMINGS = Timings(embedding_ms=99_999.99, search_ms=99_999.99, total_ms=99_999.99)


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
    rest = response_size(response.model_copy(update={"results": [], "meta": response.meta.model_copy(
        update={"timings": WIDEST_TIMINGS})}))
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
