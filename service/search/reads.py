"""The search's one way to the engine: a search request on the alias, bounded in time, partial results refused,
on the search pipeline its route names."""

from __future__ import annotations

from typing import Any

from opensearchpy import OpenSearch

from service.engine.gateway import bounded_search
from service.settings import Settings


class EngineReads:
    """Every read a tool makes of the chunk index (``send``) and the pipeline each route searches with."""

    def __init__(self, settings: Settings, client: OpenSearch) -> None:
        self.settings, self.client = settings, client

    def pipeline(self, route: str) -> str:
        index = self.settings.index
        if route != "hybrid":
            return index.single_pipeline
        return index.rrf_pipeline if self.settings.search.fusion == "rrf" else index.hybrid_pipeline

    def send(self, body: dict[str, Any], route: str | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        """One search request, bounded (``bounded_search``; by ``timeout_s``, else the search setting). Partial
        results are refused: a shard that failed (a node lost mid-request) fails the request, which the client
        retries on another node, instead of silently missing hits."""
        params = {"allow_partial_search_results": "false"}
        if route is not None:
            params["search_pipeline"] = self.pipeline(route)
        return bounded_search(self.client, self.settings.index.alias, body, params,
                              timeout_s if timeout_s is not None else self.settings.search.timeout_s)
