"""Bulk writes with typed item outcomes, and scans: opensearch-py's helpers, their failures the product's."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch, helpers
from opensearchpy import exceptions as os_exc

from service.engine.gateway.errors import translate


def scan(client: OpenSearch, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """opensearch-py's ``helpers.scan``, whose own failure (a scroll some shards failed) is the product's error
    too: its requests already are, through the client."""
    try:
        yield from helpers.scan(client, **kwargs)
    except os_exc.OpenSearchException as exc:
        raise translate(exc) from exc


@dataclass(frozen=True)
class ItemOutcome:
    """One bulk item's outcome: its action, document id, the engine's status and, when refused, its reason."""

    ok: bool
    action: str
    id: str | None
    status: int | None
    reason: str | None

    @property
    def missing(self) -> bool:
        """The item's document is not there (a delete of what is gone, an update of what was deleted)."""
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409


def bulk_outcomes(client: OpenSearch, actions: Iterable[dict[str, Any]], **options: Any) -> Iterator[ItemOutcome]:
    """Every item's outcome of opensearch-py's streaming bulk, refused items reported, not raised; ``options``
    are its own (chunk_size, max_retries, request_timeout, refresh …). A failure of a bulk request itself is
    the product's error, as every request's is."""
    try:
        for ok, item in helpers.streaming_bulk(client, actions, raise_on_error=False, **options):
            action, result = next(iter(item.items()))
            status = result.get("status")
            yield ItemOutcome(bool(ok), action, result.get("_id"), status if isinstance(status, int) else None,
                              None if ok else str(result.get("error", result))[:300])
    except os_exc.OpenSearchException as exc:
        raise translate(exc) from exc
