"""Every query logged to stderr and to the query-log index (best effort: logging never fails a search)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from loguru import logger
from opensearchpy import OpenSearch
from opensearchpy import exceptions as os_exc


class QueryLog:
    def __init__(self, client: OpenSearch, index: str, enabled: bool = True) -> None:
        self.client, self.index, self.enabled = client, index, enabled

    def record(self, entry: dict[str, Any]) -> None:
        entry = {"timestamp": datetime.now(UTC).isoformat(), **entry}
        logger.info("query {}", entry)
        if not self.enabled:
            return
        try:
            self.client.index(index=self.index, body=entry, request_timeout=5)
        except (os_exc.OpenSearchException, OSError) as exc:
            logger.warning("query log not written: {}", exc)
