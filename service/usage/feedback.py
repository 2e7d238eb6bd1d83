"""What the agent opened after a search: each ``get_document`` call linked to the search of the same client whose
results held the opened document, with the rank it was shown at. The product's own accuracy signal over real use
(``stroidok stats``): a search followed by an opening showed something worth reading, and where.

Searches are remembered per client in this process (a stdio server serves one client; HTTP workers each their
own), for ``window_s``, at most ``per_client`` of them, the newest first when an id was shown by several.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

#: the most clients remembered at once (the least recently active are forgotten first)
MAX_CLIENTS = 1000


@dataclass(frozen=True)
class ShownSearch:
    """A search as its caller saw it: its log id, when, and each result's 1-based rank (across pages)."""

    call_id: str
    at: float
    ranks: dict[str, int]


@dataclass(frozen=True)
class Opening:
    """A ``get_document`` call that opened a result of ``follows`` (a search's log id) shown at ``rank``."""

    follows: str
    rank: int


def document_of(result_id: str) -> str:
    """The document a ``get_document`` id names: a document id, or a chunk id («<document>:<n>»)."""
    return result_id.rsplit(":", 1)[0] if ":" in result_id else result_id


class RecentSearches:
    """The searches each client made in the last ``window_s``, to link what it opens to them. Thread-safe."""

    def __init__(self, window_s: float = 1800.0, per_client: int = 20) -> None:
        self.window_s, self.per_client = window_s, per_client
        self._by_client: OrderedDict[str, deque[ShownSearch]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, client: str, call_id: str, result_ids: list[str], offset: int = 0) -> None:
        shown = ShownSearch(call_id, time.monotonic(), {rid: offset + i + 1 for i, rid in enumerate(result_ids)})
        with self._lock:
            searches = self._by_client.pop(client, None) or deque(maxlen=self.per_client)
            searches.appendleft(shown)
            self._by_client[client] = searches
            while len(self._by_client) > MAX_CLIENTS:
                self._by_client.popitem(last=False)

    def opened(self, client: str, result_id: str) -> Opening | None:
        """The newest search of ``client`` within the window that showed the opened document, if any."""
        document, now = document_of(result_id), time.monotonic()
        with self._lock:
            searches = list(self._by_client.get(client, ()))
        for shown in searches:
            if now - shown.at > self.window_s:
                break
            if document in shown.ranks:
                return Opening(shown.call_id, shown.ranks[document])
        return None
