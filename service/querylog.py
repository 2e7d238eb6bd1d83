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
