"""The size of an answer: serialized once, further passages added best first while it fits, the last
results left to the next page when it does not.
"""

from __future__ import annotations

from pydantic import BaseModel

from service.search.query.models import (
    SearchResponse,
)


def dumped(model: BaseModel) -> str:
    """A reply as it is sent: compact JSON, absent fields left out (every edge serializes this way)."""
    return model.model_dump_json(exclude_none=True)


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
    rest = response_size(response.model_copy(update={"results": []}))
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
