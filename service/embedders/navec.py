"""Russian static embeddings without torch: navec GloVe vectors (shipped inside the ``natasha`` wheel)
averaged with SIF weights (Arora et al. 2017).

A text's vector is the weighted mean of its words' vectors, weight a/(a+p(w)), p(w) the word's
frequency in the indexed corpus; a word navec lacks falls back to its pymorphy3 lemma; the corpus's
first principal component is removed. The statistics come from the index's own corpus (``fit``) and
are stored with the index, so queries are embedded exactly like the chunks they are compared with.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from service.embedders.base import EmbedderIdentity, l2_normalize
from service.settings import EmbedderSettings

NAVEC_FILE = "navec_news_v1_1B_250K_300d_100q.tar"
#: the most words the word table holds (``NavecEmbedder._row``: 1.2 KB a word)
TABLE_WORDS = 200_000
_WORD_RE = re.compile(r"[а-яa-z]+(?:-[а-яa-z]+)*")
_STRESS = dict.fromkeys(map(ord, "\u0301\u0300"))


def navec_path() -> Path:
    import natasha

    return Path(natasha.__file__).parent / "data" / "emb" / NAVEC_FILE


# Snowball's Russian stop list plus interrogatives and copulas of questions, left out when
# ``stop_words`` is set: the dense leg alone gains ~2 points, the hybrid does not (docs/relevance.md).
STOP_WORDS = frozenset(["и", "в", "во", "не", "что", "он", "на", "я", "с", "со", "как", "а", "то", "все", "она", "так",
                        "его", "но", "да", "ты", "к", "у", "же", "вы", "за", "бы", "по", "только", "ее", "мне", "было",
                        "вот", "от", "меня", "еще", "нет", "о", "из", "ему", "теперь", "когда", "даже", "ну", "вдруг",
                        "ли", "если", "уже", "или", "ни", "быть", "был", "него", "до", "вас", "нибудь", "опять", "уж",
                        "вам", "ведь", "там", "потом", "себя", "ничего", "ей", "может", "они", "тут", "где", "есть",
                        "надо", "ней", "для", "мы", "тебя", "их", "чем", "была", "сам", "чтоб", "без", "будто", "чего",
                        "раз", "тоже", "себе", "под", "будет", "ж", "тогда", "кто", "этот", "того", "потому", "этого",
                        "какой", "совсем", "ним", "здесь", "этом", "один", "почти", "мой", "тем", "чтобы", "нее",
                        "сейчас", "были", "куда", "зачем", "всех", "никогда", "можно", "при", "наконец", "два", "об",
                        "другой", "хоть", "после", "над", "больше", "тот", "через", "эти", "нас", "про", "всего",
                        "них", "какая", "много", "разве", "три", "эту", "моя", "впрочем", "хорошо", "свою", "этой",
                        "перед", "иногда", "лучше", "чуть", "том", "нельзя", "такой", "им", "более", "всегда",
                        "конечно", "всю", "между", "какое", "какие", "каком", "какому", "каким", "какими", "каких",
                        "какого", "какую", "кем", "кому", "кого", "чему", "откуда", "сколько", "почему", "является",
                        "являлся", "являлась", "являются", "называется", "называют"])


def tokenize(text: str) -> list[str]:
    """Lowercased Russian/Latin words with ё folded to е and stress marks removed."""
    if "\u0301" in text or "\u0300" in text:
        text = text.translate(_STRESS)
    return _WORD_RE.findall(text.lower().replace("ё", "е"))


def fit_stats(token_lists: list[list[str]], min_count: int = 2) -> dict[str, Any]:
    """Word counts over a corpus sample (rare words dropped to keep the stored table small)."""
    counts = Counter(w for tokens in token_lists for w in tokens)
    total = sum(counts.values())
    return {"total": total, "counts": {w: c for w, c in counts.items() if c >= min_count}}


class WordTable:
    """The SIF-weighted vectors of the words asked for so far, a row each (added the first time), and each row's
    weight: a text's words are gathered in one array operation. Rows only grow; past ``TABLE_WORDS`` a word gets
    a row number the table does not hold (its caller embeds word by word)."""

    def __init__(self, dimension: int, stop: frozenset[str] = frozenset()) -> None:
        self.rows: dict[str, int] = dict.fromkeys(stop, -1)  # a stop word is left out as one without a vector
        self.weights: list[float] = []
        self.vectors = np.zeros((0, dimension), dtype=np.float32)
        self._lock = threading.Lock()

    def rows_of(self, words: list[str], weighted: Callable[[str], tuple[np.ndarray, float] | None]) -> list[int]:
        """The rows of ``words`` that have one, in order."""
        get = self.rows.get
        rows = [get(w, -2) for w in words]
        if -2 in rows:
            rows = [self.row(w, weighted) if r == -2 else r for w, r in zip(words, rows, strict=True)]
        return [r for r in rows if r >= 0]

    def row(self, word: str, weighted: Callable[[str], tuple[np.ndarray, float] | None]) -> int:
        """``word``'s row; -1 for a word without a vector (``weighted``: the word's vector and weight)."""
        row = self.rows.get(word)
        if row is not None:
            return row
        with self._lock:
            if (row := self.rows.get(word)) is not None:
                return row
            found = weighted(word)
            row = -1 if found is None else len(self.weights) if len(self.weights) < TABLE_WORDS else TABLE_WORDS
            if 0 <= row < TABLE_WORDS and found is not None:
                if row == len(self.vectors):
                    grown = np.zeros((max(1024, 2 * row), self.vectors.shape[1]), dtype=np.float32)
                    grown[:row] = self.vectors[:row]
                    self.vectors = grown
                self.vectors[row] = found[0]
                self.weights.append(found[1])
                self.rows[word] = row
            return row


class NavecEmbedder:
    """SIF-weighted navec averages; thread-compatible, loads the vectors once."""

    #: a text costs microseconds: the search may embed passage units per call (service/search/answer/map.py)

    def __init__(self, settings: EmbedderSettings) -> None:
        from navec import Navec

        self.settings = settings
        self.navec = Navec.load(str(navec_path()))
        self.identity = EmbedderIdentity("navec", NAVEC_FILE.removesuffix(".tar") + "+sif", self.navec.pq.dim)
        self._counts: dict[str, int] = {}
        self._total = 0
        self._pc: np.ndarray | None = None
        self._stop: frozenset[str] = frozenset()
        self._vector = lru_cache(maxsize=200_000)(self._lookup)
        #: a word's SIF-weighted vector and weight (cleared when the statistics change)
        self._weighted = lru_cache(maxsize=200_000)(self._weighted_lookup)
        self._table = WordTable(self.identity.dimension)
        self._morph: Any = None

    def _lemma(self, word: str) -> str:
        if self._morph is None:
            import pymorphy3

            self._morph = pymorphy3.MorphAnalyzer()
        return str(self._morph.parse(word)[0].normal_form).replace("ё", "е")

    def _lookup(self, word: str) -> np.ndarray | None:
        if word in self.navec:
            return np.asarray(self.navec[word])
        if self.settings.lemma_fallback and (lemma := self._lemma(word)) != word and lemma in self.navec:
            return np.asarray(self.navec[lemma])
        return None

    def _weight(self, word: str) -> float:
        if not self._total:
            return 1.0
        p = self._counts.get(word, 1) / self._total
        return self.settings.sif_a / (self.settings.sif_a + p)

    def _weighted_lookup(self, word: str) -> tuple[np.ndarray, float] | None:
        vector = self._vector(word)
        if vector is None:
            return None
        weight = self._weight(word)
        return (weight * vector).astype(np.float32), weight

    def _raw(self, text: str) -> np.ndarray:
        found = [e for e in map(self._weighted, self._words(text)) if e is not None]
        if not found:
            return np.zeros(self.identity.dimension, dtype=np.float32)
        # added in order, as ``np.sum`` over the words adds them, without building an array of them first
        total = functools.reduce(np.add, [v for v, _ in found])
        return np.asarray(total / sum(w for _, w in found), dtype=np.float32)

    def _words(self, text: str) -> list[str]:
        return [w for w in tokenize(text) if w not in self._stop]

    def _means(self, texts: list[str]) -> np.ndarray:
        """``_raw`` of each text, bit for bit: the rows of all their words gathered from the word table at once and
        each text's rows added by one ``sum`` over them (in order, as ``_raw`` adds them). A call embeds ~100
        passage units of ~35 words; an array operation per word was most of it."""
        table = self._table  # one table for the whole call (new statistics bring a new one)
        found = [table.rows_of(tokenize(text), self._weighted) for text in texts]
        rows = [r for text_rows in found for r in text_rows]
        if rows and max(rows) >= TABLE_WORDS:
            return np.vstack([self._raw(t) for t in texts])  # past the table's bound
        bounds, start = [], 0
        for i, text_rows in enumerate(found):
            if text_rows:
                bounds.append((i, start, start + len(text_rows), sum(table.weights[r] for r in text_rows)))
                start += len(text_rows)
        matrix = np.zeros((len(texts), self.identity.dimension), dtype=np.float32)
        gathered = table.vectors[rows]  # read once every row is in: the table may have grown meanwhile
        for i, start, end, total in bounds:
            matrix[i] = gathered[start:end].sum(axis=0) / total
        return matrix

    def _embed(self, texts: list[str]) -> np.ndarray:
        matrix = self._means(texts)
        if self._pc is not None:
            matrix = matrix - np.outer(matrix @ self._pc, self._pc)
        return l2_normalize(matrix).astype(np.float32)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([text])[0]
        return vector

    def fit(self, texts: list[str]) -> dict[str, Any]:
        """Word counts and (optionally) the first principal component of the sample's SIF vectors."""
        self._stop = STOP_WORDS if self.settings.stop_words else frozenset()
        stats = {**fit_stats([self._words(t) for t in texts]), "stop_words": self.settings.stop_words}
        self.load_stats({**stats, "pc": None})
        if self.settings.remove_pc and len(texts) >= 2:
            matrix = np.vstack([self._raw(t) for t in texts])
            _, _, vt = np.linalg.svd(matrix, full_matrices=False)
            stats["pc"] = vt[0].astype(float).tolist()
        else:
            stats["pc"] = None
        self.load_stats(stats)
        return stats

    def load_stats(self, stats: dict[str, Any]) -> None:
        self._counts = dict(stats.get("counts") or {})
        self._total = int(stats.get("total") or 0)
        self._weighted.cache_clear()
        pc = stats.get("pc")
        self._pc = None if pc is None else np.asarray(pc, dtype=np.float32)
        # an index fitted before stop words existed keeps embedding queries as its chunks were embedded
        self._stop = STOP_WORDS if stats.get("stop_words") else frozenset()
        self._table = WordTable(self.identity.dimension, self._stop)
