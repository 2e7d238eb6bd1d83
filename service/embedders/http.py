"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (a large model served elsewhere)."""

from __future__ import annotations

import httpx
import numpy as np
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from service.embedders.base import EmbedderIdentity, Kind, StatelessEmbedder, l2_normalize, with_prefix
from service.errors import ConfigError, EmbeddingError
from service.settings import EmbedderSettings


class HttpEmbedder(StatelessEmbedder):
    def __init__(self, settings: EmbedderSettings) -> None:
        if not settings.url or not settings.model or not settings.dimension:
            raise ConfigError("the http embedder needs STROIDOK_EMBEDDER_URL, _MODEL and _DIMENSION")
        self.settings = settings
        self.identity = EmbedderIdentity("http", settings.model, settings.dimension)
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self._client = httpx.Client(base_url=settings.url.rstrip("/"), headers=headers, timeout=settings.timeout_s)

    @retry(retry=retry_if_exception_type(httpx.TransportError), stop=stop_after_attempt(3),
           wait=wait_exponential(max=10), reraise=True)
    def _post(self, texts: list[str], kind: Kind) -> list[list[float]]:
        body: dict[str, object] = {"model": self.settings.model, "input": texts}
        if self.settings.input_type:
            body["input_type"] = kind
        response = self._client.post("/embeddings", json=body)
        response.raise_for_status()
        data = sorted(response.json()["data"], key=lambda item: item["index"])
        return [item["embedding"] for item in data]

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.identity.dimension), dtype=np.float32)
        texts = with_prefix(texts, self.settings.query_prefix if kind == "query" else self.settings.passage_prefix)
        try:
            rows = [v for start in range(0, len(texts), self.settings.batch_size)
                    for v in self._post(texts[start:start + self.settings.batch_size], kind)]
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise EmbeddingError(f"embedding endpoint failed: {exc}") from exc
        matrix = np.asarray(rows, dtype=np.float32)
        if matrix.shape[1] != self.identity.dimension:
            raise ConfigError(f"endpoint returned dimension {matrix.shape[1]}, settings say {self.identity.dimension}")
        return l2_normalize(matrix)
