"""The section kinds a chunk is tagged with at ingest (``ingest.sections``), and which of them a query weighs down:
front matter — a foreword, contents, normative references, abbreviations, a correction sheet, bibliography — and
the terms and definitions, an annex of worked examples (its values are an example's, not a requirement's) are shown
first only when the question asks for them. Pure functions.
"""

from __future__ import annotations

import re
from typing import Literal

SectionKind = Literal["scope", "terms", "references", "foreword", "contents", "abbreviations", "correction",
                      "amendment", "bibliography", "annex", "example", "table"]

#: kinds that are not a norm's requirements: shown first only when the question asks for them (the scope names
#: every subject of its norm: «распространяется на проектирование … тоннелей» answers no question of a tunnel; a
#: term's definition names its subject: «высотный стеллажный склад: складское помещение …» states no requirement)
ASIDE: frozenset[str] = frozenset({"scope", "foreword", "contents", "references", "abbreviations", "correction",
                                   "bibliography", "terms", "example"})

#: what a question says when it asks for a front-matter section itself
_ASKS: dict[str, re.Pattern[str]] = {kind: re.compile(pattern, re.IGNORECASE) for kind, pattern in (
    ("scope", r"област\w*\s+применени|распространя|применя\w*\s+ли\b|действует\s+ли\b"),
    ("references", r"ссыл[ка]|ссылает"),
    ("foreword", r"разработ(ан|чик)|внес[её]н|утвержд[её]н|предислов|взамен|введ[её]н\w*\s+(впервые|в\s+действие)"),
    ("abbreviations", r"сокращ|аббревиатур|расшифров"),
    ("contents", r"содержани[ея]\s+(стандарта|свода|документа)|оглавлени"),
    ("correction", r"поправк|опечатк"),
    ("bibliography", r"библиограф|литератур"),
    ("terms", r"термин|определени|понят|что\s+(такое|означает|понимается)|называ"),
    ("example", r"пример"),
)}


def aside_for(texts: list[str]) -> frozenset[str]:
    """The front-matter kinds weighed down for a query: every ``ASIDE`` kind its texts do not ask for."""
    return frozenset(k for k in ASIDE if not any(_ASKS[k].search(t) for t in texts))
