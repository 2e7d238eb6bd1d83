"""What a normative document says of other documents: the designations it cites, the names its «Нормативные
ссылки» section gives them, and the editions it replaces («Взамен ГОСТ 10180-90», «Актуализированная редакция
СНиП II-26-76»). Pure functions over the parsed blocks; the index links them across the archive
(``ingest/links.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ingest.parse.model import Block
from ingest.parse.repair import repair_text
from service.search.citations.designations import (
    DESIGNATION_RE,
    find_designations,
    full_year,
    normalize_designation,
    parse_designation,
)

_REFERENCES_HEADING_RE = re.compile(r"^\s*(?:\d{1,2}\.?\s+)?Нормативные\s+ссылки\s*$", re.IGNORECASE)
_SECTION_HEADING_RE = re.compile(r"^\s*\d{1,2}\.?\s+[А-ЯЁ]")
#: where a standard's own text begins (its preface and imprint cite the standardization system's rules)
_SCOPE_RE = re.compile(r"^\s*1\.?\s+(?:Область\s+применения|Общие\s+положения)", re.IGNORECASE)
_REPLACES_RE = re.compile(r"(?<![\w])взамен\b\s*:?\s*", re.IGNORECASE)
_REVISES_RE = re.compile(r"(?<![\w])актуализированная\s+редакция\b\s*:?\s*", re.IGNORECASE)
TITLE_GAP = 300  # characters between a СП's designation and «Актуализированная редакция» on its title page
FRONT_BLOCKS = 60  # a document without a «1 Область применения» heading: its first blocks are its front
_SEPARATOR_RE = re.compile(r"[\s,;*]*(?:и\s+)?")
#: what follows a name in a reference list and is not part of it
_NAME_TAIL_RE = re.compile(r"\s*(?:\((?:с\s+изменени|в\s+редакции|ред\.|Изменени)[^)]*\)?|\*+|\.\s*$).*$",
                           re.IGNORECASE)
#: «(актуализированная редакция СНиП …)», «. Актуализированная редакция …» after a cited СП's name
_REVISION_NOTE_RE = re.compile(r"[\s.(]*актуализированн\w+\s+редакци\w*.*$", re.IGNORECASE)
_NAME_NOISE_RE = re.compile(r"\((?:ИСО|ISO|ЕН|EN|МЭК|IEC|ASTM|DIN)[^)]*\)", re.IGNORECASE)
#: what comes right before a designation that is part of an entry's name, not an entry of its own
_INNER_RE = re.compile(r"(?:«|редакци[яи]\s*\"?|взамен\s*)$", re.IGNORECASE)  # «"ГОСТ …"» opens an entry
_LEADIN_RE = re.compile(r"^.*?(?:на\s+следующие\s+(?:документы|стандарты|нормативные\s+документы)|документы)\s*:\s*",
                        re.IGNORECASE | re.DOTALL)
MAX_NAME = 250


_MONTHS = ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября",
           "ноября", "декабря")
_SEP = r"\s*[^\w\s]\s*"
_INTRODUCED_RE = re.compile(
    rf"Дата\s+введения\s*(?:установлена\s*(?:с\s*)?)?[^\w\s]?\s*(?:(?P<y>(?:19|20)\d{{2}}){_SEP}(?P<m>\d{{2}}){_SEP}(?P<d>\d{{2}})"
    rf"|(?P<d2>\d{{2}})\s*\.\s*(?P<m2>\d{{2}})\s*\.\s*(?P<y2>(?:19|20)?\d{{2}})(?!\d)"
    rf"|(?P<d3>\d{{1,2}})\s+(?P<m3>{'|'.join(_MONTHS)})\s+(?P<y3>(?:19|20)\d{{2}}))", re.IGNORECASE)
_AMENDMENTS_RE = re.compile(r"Изменени(?:е|ем|я|ями)\s*№\s*(?P<n>\d{1,2}(?:\s*(?:,|и)\s*\d{1,2}){0,9})")
#: a document's own stamp that it is no longer in force («Утратил силу в Российской Федерации с 01.01.2021»)
_WITHDRAWN_RE = re.compile(r"(?<![\w])(?:Утратил[аи]?\s+силу|УТРАТИЛ[АИ]?\s+СИЛУ)"
                           r"(?:[ \t]+(?:в|на|с)[ \t]+(?:[^.\n]|\.(?=\d)){1,60})?")
#: how far into its first page a document stamps itself withdrawn
WITHDRAWN_HEAD = 600


@dataclass
class References:
    """A document's links: the designations it cites (its own family left out), the names its references
    section gives them, and the designations it replaces; and its status as it states it on its first pages:
    the date it came into force, its amendments, a stamp that it is withdrawn."""

    cites: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    replaces: list[str] = field(default_factory=list)
    introduced: str | None = None
    amendments: list[str] = field(default_factory=list)
    withdrawn: str | None = None


def introduced_date(front: str) -> str | None:
    """«Дата введения — 2013—07—01», «01.07.2015», «01.01.82», «24 января 2023 года» → an ISO date (the first
    such line)."""
    match = _INTRODUCED_RE.search(" ".join(front.split()))
    if match is None:
        return None
    if match["y"]:
        year, month, day = match["y"], match["m"], match["d"]
    elif match["y2"]:
        year, month, day = str(full_year(match["y2"])), match["m2"], match["d2"]
    else:
        year, month, day = match["y3"], f"{_MONTHS.index(match['m3'].lower()) + 1:02d}", f"{int(match['d3']):02d}"
    return f"{year}-{month}-{day}" if 1 <= int(month) <= 12 and 1 <= int(day) <= 31 else None


def amendment_numbers(front: str) -> list[str]:
    """«с Изменениями № 1, 2, 3», «Изменение № 3 к СП …» → «Изменение № 1», … in order, once each."""
    numbers = [n for m in _AMENDMENTS_RE.finditer(" ".join(front.split())) for n in re.findall(r"\d+", m["n"])]
    return [f"Изменение № {n}" for n in dict.fromkeys(numbers)]


def withdrawn_stamp(head: str) -> str | None:
    """The document's own stamp that it is withdrawn, near the top of its first page, as printed."""
    lines = "\n".join(" ".join(line.split()) for line in head[:WITHDRAWN_HEAD].splitlines())
    match = _WITHDRAWN_RE.search(lines)
    return match[0].strip() if match else None


def references_section(blocks: Sequence[Block]) -> str:
    """The text of the «Нормативные ссылки» section (a contents line naming it is not the section)."""
    parts: list[str] = []
    inside = False
    for block in blocks:
        if block.role:
            continue
        if not inside:
            inside = bool(_REFERENCES_HEADING_RE.match(block.text))
            continue
        if block.kind == "title" and _SECTION_HEADING_RE.match(block.text):
            break
        parts.append(block.text)
    return "\n".join(parts)


def clean_reference_name(text: str) -> str | None:
    """A cited document's name as a list gives it, without editions, amendments or the standard it adopts."""
    name = _NAME_NOISE_RE.sub(" ", " ".join(text.split()))
    name = _NAME_TAIL_RE.sub("", _REVISION_NOTE_RE.sub("", name)).strip(" .,;:—-–«»\"")
    if len(name) < 6 or len(name) > MAX_NAME or not name[:1].isupper() or sum(c.isalpha() for c in name) < 5:
        return None
    return name


def reference_entries(section: str) -> tuple[dict[str, str | None], dict[str, str]]:
    """The designations a references section lists, each with the name it gives (None when it gives none
    clean), and the names it gives every designation, quoted ones too. Each designation opens an entry whose
    name runs to the next entry. A designation in quotes or after «Актуализированная редакция» («СП
    28.13330.2017 «СНиП 2.03.11—85 Защита …»») is the СНиП the entry revises: part of the entry's name, not an
    entry of its own — but the quoted name is that СНиП's too."""
    flat = _LEADIN_RE.sub("", " ".join(section.split()), count=1)
    matches = list(DESIGNATION_RE.finditer(flat))
    opens = [not _INNER_RE.search(flat[max(0, m.start() - 40):m.start()])
             and not (i and not flat[matches[i - 1].end():m.start()].strip(" *«\""))  # «СП 20.13330.2016 СНиП …»
             for i, m in enumerate(matches)]
    entries: dict[str, str | None] = {}
    names: dict[str, str] = {}
    for i, match in enumerate(matches):
        designation = normalize_designation(match["kind"], match["number"])
        if not plausible(designation):
            continue
        following = next((m for m, o in zip(matches[i + 1:], opens[i + 1:], strict=True) if o), None)
        tail = DESIGNATION_RE.sub(" ", flat[match.end(): following.start() if following else len(flat)])
        name = clean_reference_name(tail.split("»")[0] if not opens[i] else tail)
        if opens[i]:
            entries.setdefault(designation, None)
            entries[designation] = entries[designation] or name
        if name:
            names.setdefault(designation, name)
    return entries, {**names, **{d: n for d, n in entries.items() if n}}


def reference_names(section: str) -> dict[str, str]:
    """Designation → the name a references section gives it («ГОСТ 27751—2014 Надежность строительных
    конструкций …»)."""
    return reference_entries(section)[1]


def plausible(designation: str) -> bool:
    """A designation, not an OCR crumb of one («ГОСТ 2 4 05-80» read as «ГОСТ 2»): its number has a separator
    or three digits."""
    number = designation.rpartition(" ")[2]
    return any(c in number for c in ".-") or len(number) >= 3


def designations_after(flat: str, opening: re.Match[str]) -> list[str]:
    """The designations listed right after ``opening`` («ВЗАМЕН ГОСТ 14782-76, ГОСТ 22368-77»); «взамен
    электродов …» lists none."""
    found: list[str] = []
    at = opening.end()
    while (match := DESIGNATION_RE.match(flat, at)) is not None:
        found.append(normalize_designation(match["kind"], match["number"]))
        separator = _SEPARATOR_RE.match(flat, match.end())
        at = separator.end() if separator else match.end()
    return [d for d in found if plausible(d)]


def replaced_designations(front: str, own: str | None) -> list[str]:
    """What a document replaces, from its front matter: «Взамен …» (an imprint page), and the one document a
    СП is the «Актуализированная редакция» of — on its title page, right after its own designation (further
    on, a reference list says the same of every СП it cites)."""
    flat = " ".join(front.split())
    found = [d for opening in _REPLACES_RE.finditer(flat) for d in designations_after(flat, opening)]
    if own:
        family = parse_designation(own).family
        titles = [m.end() for m in DESIGNATION_RE.finditer(flat)
                  if parse_designation(normalize_designation(m["kind"], m["number"])).family == family]
        revises = next((designations_after(flat, opening)[:1] for opening in _REVISES_RE.finditer(flat)
                        if any(0 <= opening.start() - end <= TITLE_GAP for end in titles)), [])
        found = revises + found
    return [d for d in dict.fromkeys(found) if d != own]


def document_references(blocks: Sequence[Block], head: str, own: str | None) -> References:
    """A document's links from its parsed blocks (contents and imprint pages too, for «Взамен»)."""
    own_family = parse_designation(own).family if own else None
    head = repair_text(head)  # a title page's «А к т у а л и з и р о в а н н а я  р е д а к ц и я», read as words
    start = next((i for i, b in enumerate(blocks) if not b.role and _SCOPE_RE.match(b.text)), 0)
    # the front matter: title page, preface, imprint (a reference list comes after the scope)
    front = "\n".join([head, *(b.text for b in blocks[:start or FRONT_BLOCKS])])
    replaces = replaced_designations(front, own)
    listed, named = reference_entries(references_section(blocks))
    entries = {d: n for d, n in listed.items() if parse_designation(d).family != own_family}
    if entries:  # the document's own list of what it cites
        cited = list(entries)
    else:
        body = " ".join(b.text for b in blocks[start:] if not b.role)
        cited = [m for m in find_designations(body) if plausible(m) and parse_designation(m).family != own_family]
    cites = [d for d in without_undated_duplicates(cited) if d not in replaces]
    # the title page's «Дата введения» may follow a contents page whose «1 Область применения» ended ``front``
    title_pages = "\n".join([head, *(b.text for b in blocks[:max(start, FRONT_BLOCKS)])])
    return References(cites, {d: n for d, n in named.items() if parse_designation(d).family != own_family}, replaces,
                      introduced_date(title_pages), amendment_numbers(front), withdrawn_stamp(head))


def without_undated_duplicates(designations: list[str]) -> list[str]:
    """«СП 1.13130» left out when «СП 1.13130.2009» is there too: the undated mention is that edition."""
    dated = {parse_designation(d).family for d in designations if parse_designation(d).edition is not None}
    return [d for d in designations if parse_designation(d).edition is not None or d not in dated]
