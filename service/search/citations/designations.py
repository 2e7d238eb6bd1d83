"""The grammar of normative designations, shared by the ingest (what a document is and cites) and the search
(the ``cites`` filter): «Свод правил 63.13330.2018» → «СП 63.13330.2018», its family «СП 63.13330» and its
edition 2018; «СНиП 52-01-2003» → family «СНиП 52-01», edition 2003; «ГОСТ 464-79» → edition 1979.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

KINDS = {"гостр": "ГОСТ Р", "гост": "ГОСТ", "сп": "СП", "сводправил": "СП", "снип": "СНиП", "санпин": "СанПиН",
         "сн": "СН", "всн": "ВСН", "всп": "ВСП", "рд": "РД", "мдс": "МДС", "нпб": "НПБ", "пб": "ПБ", "тртс": "ТР ТС",
         "ту": "ТУ", "одм": "ОДМ", "сто": "СТО", "гэсн": "ГЭСН", "фер": "ФЕР"}
#: kinds as printed, OCR splits included («ГО СТР», «ГОСТР»)
KIND_RE = (r"ГО\s?СТ\s?Р|ГО\s?СТ|Свод\s+правил|СП|СНиП|Сан[Пп]и[НнH]|СН|ВСН|ВСП|РД|МДС|НПБ|ПБ|ТР\s+ТС|ТУ|ОДМ|СТО|"
           r"ГЭСН|ФЕР")
#: a designation's number: digits in dotted or dashed groups, a СНиП's roman part first («СНиП II-94-80»); a dot
#: followed by a space ends it («по ГОСТ 27751-2014. 2 Нормативные ссылки»)
DESIGNATION_RE = re.compile(
    rf"(?<![\w])(?P<kind>{KIND_RE})\s+(?P<number>(?:[IVX]{{1,4}}\s*[\-–—]\s*)?\d{{1,8}}"
    rf"(?:\.\d{{1,8}}|\s*[\-–—]\s*\d{{1,8}}){{0,5}})(?!\w)(?!\.\d)",
    re.IGNORECASE)
_DASHED_YEAR_RE = re.compile(r"^(?P<family>.+?)-(?P<year>\d{2}|\d{4})$")
_DOTTED_YEAR_RE = re.compile(r"^(?P<family>\d+\.\d+)\.(?P<year>(?:19|20)\d{2})$")


@dataclass(frozen=True)
class Designation:
    """A normalized designation, its family (the designation without its edition) and its edition's year."""

    text: str
    family: str
    edition: int | None


def normalize_designation(kind: str, number: str) -> str:
    """«Свод правил 63.13330.2018» → «СП 63.13330.2018»; «ГОСТ 10180— 2012» → «ГОСТ 10180-2012»."""
    canonical = KINDS.get("".join(kind.lower().split()).replace("h", "н"), kind.upper())
    number = re.sub(r"\s*[\-–—]\s*", "-", re.sub(r"\s*\.\s*", ".", number.strip()))
    return f"{canonical} {number}"


def find_designation(text: str) -> str | None:
    """The first designation in ``text`` (whitespace and dashes normalized), if any."""
    match = DESIGNATION_RE.search(" ".join(text.split()))
    return normalize_designation(match["kind"], match["number"]) if match else None


def designation_words(text: str) -> list[str]:
    """The words of every designation in ``text`` as typed, whole numbers and their parts («По СП 158.13330 …»
    → «СП», «158.13330», «158», «13330»)."""
    return [word for m in DESIGNATION_RE.finditer(" ".join(text.split()))
            for word in dict.fromkeys([*m[0].split(), *re.findall(r"\w+", m[0])])]


def find_designations(text: str) -> list[str]:
    """Every designation in ``text``, normalized, in order of first mention."""
    flat = " ".join(text.split())
    return list(dict.fromkeys(normalize_designation(m["kind"], m["number"]) for m in DESIGNATION_RE.finditer(flat)))


def full_year(year: str) -> int:
    """«79» → 1979, «03» → 2003, «2018» → 2018."""
    value = int(year)
    if len(year) == 4:
        return value
    return 2000 + value if value <= 40 else 1900 + value


@lru_cache(maxsize=65_536)
def parse_designation(designation: str) -> Designation:
    """A normalized designation's family and edition: a dashed year ends ГОСТ, СНиП, СанПиН and old СП numbers
    («ГОСТ 10180-2012», «СНиП 2.02.01-83», «СП 52-105-2009»); a dotted year ends a СП of the 13330/1325800
    series («СП 63.13330.2018»). Without a year the designation is its own family («СП 63.13330»)."""
    kind, _, number = designation.rpartition(" ")
    dashed = _DASHED_YEAR_RE.match(number)
    if dashed and "-" in number and kind in ("ГОСТ", "ГОСТ Р", "СНиП", "СанПиН", "СП", "СН", "ВСН", "РД", "МДС", "НПБ"):
        year = full_year(dashed["year"])
        if 1920 <= year <= 2100 and (len(dashed["year"]) == 4 or kind in ("ГОСТ", "ГОСТ Р", "СНиП", "СН", "ВСН")):
            return Designation(designation, f"{kind} {dashed['family']}", year)
    dotted = _DOTTED_YEAR_RE.match(number)
    if dotted and kind == "СП":
        return Designation(designation, f"{kind} {dotted['family']}", int(dotted["year"]))
    return Designation(designation, designation, None)
