"""Split a user query into free terms and quoted phrases (no query syntax reaches the engine)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PHRASE_RE = re.compile(r'"([^"]+)"|«([^»]+)»')


@dataclass(frozen=True)
class ParsedQuery:
    """``exact``: parts in straight double quotes, the search syntax for an exact phrase. ``named``: parts
    in «guillemets», which Russian typography puts around names of works, standards and organisations:
    they rank as phrases but bind only under operator AND."""

    terms: str
    phrases: tuple[str, ...]
    exact: tuple[str, ...] = ()
    #: all words in the order typed, without quotes (PHRASE, the dense leg, suggestions)
    plain: str = ""


def parse_query(text: str) -> ParsedQuery:
    """``"..."`` and «...» parts are phrases; the rest are terms. An unmatched quote is ignored."""
    phrases = tuple(p.strip() for m in _PHRASE_RE.finditer(text) if (p := (m[1] or m[2])).strip())
    exact = tuple(m[1].strip() for m in _PHRASE_RE.finditer(text) if m[1] and m[1].strip())
    rest = _PHRASE_RE.sub(" ", text).replace('"', " ").replace("«", " ").replace("»", " ")
    plain = text.replace('"', " ").replace("«", " ").replace("»", " ")
    return ParsedQuery(" ".join(rest.split()), phrases, exact, " ".join(plain.split()))
