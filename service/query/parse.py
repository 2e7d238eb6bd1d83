"""Split a user query into free terms and quoted phrases (no query syntax reaches the engine)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PHRASE_RE = re.compile(r'"([^"]+)"|«([^»]+)»')


@dataclass(frozen=True)
class ParsedQuery:
    terms: str
    phrases: tuple[str, ...]

    @property
    def is_phrase_only(self) -> bool:
        return bool(self.phrases) and not self.terms

    @property
    def plain(self) -> str:
        """All words, without quotes (for the dense leg and suggestions)."""
        return " ".join([*self.phrases, self.terms]).strip()


def parse_query(text: str) -> ParsedQuery:
    """``"..."`` and «...» parts are phrases; the rest are terms. An unmatched quote is ignored."""
    phrases = tuple(p.strip() for m in _PHRASE_RE.finditer(text) if (p := (m[1] or m[2])).strip())
    rest = _PHRASE_RE.sub(" ", text).replace('"', " ").replace("«", " ").replace("»", " ")
    return ParsedQuery(" ".join(rest.split()), phrases)
