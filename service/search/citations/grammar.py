"""The grammar of citations: where a text cites a norm's clause, table or appendix, and the value it states.

A citation is a designation (``service.search.citations.designations``) with, right after it or right before it, what it
points at — «СП 54.13330.2016, п. 5.8», «п.5.8 СП 54.13330», «табл. 2 ГОСТ 13579-2018», «СНиП 2.01.07-85*, пункт
10.1», «приложение Б СП 20.13330» — and, after that, a value it states: «п. 5.8: не менее 2,7 м», «…: «2,7»».
A designation alone cites the document. Pure functions; ``service.search.citations.check`` resolves them in the archive.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from service.search.citations.designations import DESIGNATION_RE, normalize_designation, parse_designation
from service.search.citations.wording import number_key

#: how many citations one text is read for (a draft answer holds a few; a list may hold many)
MAX_CITATIONS = 50

#: a clause number, a letter after it included («4.2.19а»: checked as written, never as «4.2.19»)
_NUMBER = r"\d{1,3}(?:\.\d{1,3}){0,5}(?:[а-яё](?![\w]))?"
_RANGE = rf"{_NUMBER}(?:\s*(?:[–—-]|\.\.\.?|…)\s*{_NUMBER})?"
_LETTER = r"[А-ЯЁA-Z]"
#: what a citation points at inside a document, as Russian documents and engineers write it
POINTER_RE = re.compile(
    rf"(?P<kind>"
    rf"пп?\.|подп\.|подпункт(?:ы|а|ом|е|ах|ов)?|пункт(?:ы|а|ом|е|ах|ов)?|"
    rf"табл\.|таблиц(?:а|ы|е|у|ей|ах)?|"
    rf"прил\.|приложени(?:е|я|ю|ем|и|ях)|"
    rf"разд\.|раздел(?:ы|а|е|ом|ах)?)"
    rf"\s*(?:№\s*)?"
    rf"(?P<label>{_LETTER}\.{_NUMBER}|{_LETTER}(?![\w.])|{_RANGE})",
    re.IGNORECASE)
#: a clause number written without «п.» right after a designation (« 4.2.19», «, Б.2», « (5.8)»): dotted, or an
#: appendix's clause; not a date, a decimal or a quantity («2.7 м»), and not «С. 16», a page
BARE_CLAUSE_RE = re.compile(
    rf"(?P<kind>)(?P<label>(?![СC]\.){_LETTER}\.\d{{1,3}}(?:\.\d{{1,3}}){{0,4}}|\d{{1,3}}(?:\.\d{{1,3}}){{1,5}})"
    r"(?![\w.,]?\d)(?!\w)(?![ \t\u00a0]*(?:%|°|(?:мм|см|м|км|м2|м3|кг|т|кПа|МПа|Па|ч|мин|шт|л|кВт|Вт|лк|дБ|чел)\b))")
#: a bare clause number ending right before a designation, not at a line's start
_BARE_BEFORE_RE = re.compile(r"(?<=[^\s\n][ \t])(?P<label>\d{1,3}(?:\.\d{1,3}){1,5})[ \t]*$")
#: between a designation and a bare clause number: a space, a comma, an opening parenthesis
_BARE_GAP_RE = re.compile(r"\**(?:[ \t]*[,(][ \t]*|[ \t]+)")
#: between a designation and the pointer after it: «, », «*, », «: », « (»
_AFTER_GAP_RE = re.compile(r"\**[ \t]*[,:(]?[ \t]*(?:см\.[ \t]*)?")
#: between a pointer and the designation after it: « », « по », « в », « из »
_BEFORE_GAP_RE = re.compile(r"[ \t]*(?:,[ \t]*)?(?:(?:по|в|из|согласно|требований)[ \t]+)?$", re.IGNORECASE)
#: a stated value: after a colon or dash, to the end of its sentence, or the quoted text (quotes inside it too:
#: «… в хостеле категории «одна звезда» …»)
_VALUE_RE = re.compile(r"\)?[ \t]*(?::|—|–|-|=)[ \t]*(?:«(?P<quoted>(?:[^«»\n]|«[^«»\n]{0,100}»){1,400})»|"
                       r"\"(?P<dquoted>[^\"\n]{1,400})\"|(?P<plain>[^\n;()]{1,120}?))"
                       r"(?=[ \t]*(?:[;\n()]|\.(?:\s|$)|$|»))")
_VALUE_NUMBER_RE = re.compile(r"\d+(?:[ \u00a0]\d{3})*(?:[.,]\d+)?")
#: the further labels of a list after a pointer: «пп. 5.8, 5.9 и 5.10»
_MORE_LABELS_RE = re.compile(rf"[ \t]*(?:,|и)[ \t]*(?P<label>{_LETTER}\.{_NUMBER}|{_RANGE})(?![\w.]\d)")
#: where a sentence ends (a citation's further clauses are read up to it)
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s+[А-ЯЁA-Z])|\n")
_RANGE_SPLIT_RE = re.compile(r"\s*(?:[–—-]|\.\.\.?|…)\s*")


@dataclass(frozen=True)
class Citation:
    """One citation as written: the text matched, its designation (normalized), what it points at (as chunks
    label it: «5.8», «Таблица 2», «Приложение Б»; ``clause_end`` for a range), and the value stated beside it."""

    cited: str
    designation: str
    clause: str | None = None
    clause_end: str | None = None
    value: str | None = None
    #: the value was quoted («…»): checked as the clause's words
    quoted: bool = False

    @property
    def dated(self) -> bool:
        return parse_designation(self.designation).edition is not None


def pointer_label(kind: str, label: str) -> tuple[str, str | None]:
    """A pointer as chunks label it: («п.», «5.8») → «5.8»; («табл.», «А.1») → «Таблица А.1»; («прил.», «б»)
    → «Приложение Б»; a range («4.2.19–4.2.21») → its first and last clause."""
    head = kind.lower()
    first, *rest = _RANGE_SPLIT_RE.split(label.strip(), maxsplit=1)
    last = rest[0] if rest else ""
    if head.startswith("табл"):
        return f"Таблица {first.upper()}", None
    if head.startswith("прил"):
        return f"Приложение {first.upper()}", None
    return first, last or None


def find_citations(text: str, limit: int = MAX_CITATIONS) -> list[Citation]:
    """Every citation in ``text`` in the order found: each designation with the pointer right before it (or, if
    none, right after it) and the value stated after the pointer; then, up to the end of its sentence, the further
    clauses it names — a list («пп. 5.8 и 5.9») or pointers of their own («…, п. 5.8: 2,7 м (п. 5.9: 2,5 м)») —
    each a citation of the same document; at most ``limit``."""
    flat = text
    found: list[tuple[int, Citation]] = []
    taken = 0  # the text before this offset belongs to a citation already read
    matches = list(DESIGNATION_RE.finditer(flat))
    for i, match in enumerate(matches):
        if match.start() < taken:
            continue  # inside what a citation before took: its quoted value («… по ГОСТ 20.57.406 …»)
        designation = normalize_designation(match["kind"], match["number"])
        start, end = match.start(), match.end()
        next_start = matches[i + 1].start() if i + 1 < len(matches) else len(flat)
        pointer = preceding_pointer(flat, taken, start)  # «п. 4.2.99 СП 1.13130, табл. 1 ГОСТ …»: its own first
        if pointer is not None:
            start = pointer.start()
        else:
            gap = _AFTER_GAP_RE.match(flat, end)
            pointer = POINTER_RE.match(flat, gap.end() if gap else end)
            if pointer is None and (gap := _BARE_GAP_RE.match(flat, end)) is not None:
                pointer = BARE_CLAUSE_RE.match(flat, gap.end())
            if pointer is not None and pointer.end() <= next_start:
                end = pointer.end() + (flat.startswith(")", pointer.end()) and "(" in gap[0] if gap else 0)
            else:
                pointer = None
        clause, clause_end = pointer_label(pointer["kind"], pointer["label"]) if pointer else (None, None)
        stated, end = stated_value(flat, end, next_start) if pointer is not None else (None, end)
        found.append((start, Citation(flat[start:end].strip(), designation, clause, clause_end, stated)))
        if pointer is not None:
            following = next_start
            if i + 1 < len(matches) and (own := preceding_pointer(flat, end, next_start)) is not None:
                following = own.start()  # the next designation's own pointer is not this one's
            more, end = further_clauses(flat, pointer, end, following, designation)
            found += more
        taken = end
        if len(found) >= limit:
            break
    return [dataclasses.replace(c, quoted=is_quoted(c.cited, c.value))
            for _, c in sorted(found, key=lambda item: item[0])][:limit]


def stated_value(flat: str, end: int, bound: int) -> tuple[str | None, int]:
    """The value stated right after a pointer ending at ``end`` (not reaching ``bound`` unless quoted), and where
    it ends."""
    value = _VALUE_RE.match(flat, end)
    stated = value and (value["quoted"] or value["dquoted"] or value["plain"] or "").strip()
    # a quote may hold designations of its own («… по ГОСТ 15150»): its closing mark bounds it
    if value is not None and stated and (value.end() <= bound or not value["plain"]):
        return stated, value.end()
    return None, end


def is_quoted(cited: str, value: str | None) -> bool:
    """Whether a citation's value was written in quotes (the citation's text ends with it quoted)."""
    return value is not None and cited.rstrip().endswith((f"«{value}»", f'"{value}"'))


def further_clauses(flat: str, pointer: re.Match[str], end: int, bound: int,
                    designation: str) -> tuple[list[tuple[int, Citation]], int]:
    """The clauses a citation names after its first, up to the end of its sentence (and before ``bound``): a list
    after its pointer («пп. 5.8, 5.9 и 5.10») and pointers of their own («(п. 5.9: 2,5 м)»); and where they end."""
    found: list[tuple[int, Citation]] = []
    at = pointer.end()
    if at == end:  # no value in between: a list may follow the pointer
        while (more := _MORE_LABELS_RE.match(flat, at)) is not None and more.end() <= bound:
            if not more["label"][:1].isdigit() and not pointer["kind"].lower().startswith(("табл", "прил")):
                break
            clause, clause_end = pointer_label(pointer["kind"], more["label"])
            stated, at = stated_value(flat, more.end(), bound)
            found.append((more.start("label"), Citation(flat[more.start("label"):at].strip(), designation, clause,
                                                        clause_end, stated)))
            end = at
            if stated:
                break  # a value ends the list
    sentence = _SENTENCE_END_RE.search(flat, end, bound)
    stop = sentence.start() if sentence else bound
    for own in POINTER_RE.finditer(flat, end, stop):
        clause, clause_end = pointer_label(own["kind"], own["label"])
        stated, last = stated_value(flat, own.end(), stop)
        found.append((own.start(), Citation(flat[own.start():last].strip(), designation, clause, clause_end, stated)))
        end = max(end, last)
    return found, end


def preceding_pointer(flat: str, floor: int, start: int) -> re.Match[str] | None:
    """The pointer that ends right before a designation («п. 5.8 СП 54.13330», «табл. 2 по ГОСТ 13579»), not
    reaching into text an earlier citation took."""
    window = flat[max(floor, start - 60):start]
    gap = _BEFORE_GAP_RE.search(window)
    head = window[:gap.start()] if gap else window
    last = None
    for candidate in POINTER_RE.finditer(head):
        last = candidate
    offset = max(floor, start - 60)
    if last is None:
        # a clause number alone right before it, inside a line («см. 4.2.19 СП 1.13130.2020»; at a line's start
        # it would be a clause's own label)
        bare = _BARE_BEFORE_RE.search(head)
        return BARE_CLAUSE_RE.match(flat, offset + bare.start("label")) if bare else None
    if last.end() != len(head):
        return None
    return POINTER_RE.match(flat, offset + last.start())


def numbers_of(text: str) -> list[str]:
    """The numbers in ``text``, as values compare: «2,7» and «2.7» alike, «1 000» as «1000»."""
    return [number_key(n) for n in _VALUE_NUMBER_RE.findall(text)]


def fold(text: str) -> str:
    """Text as the index's ``folded`` normalizer compares it: lower case, «ё» as «е»."""
    return text.lower().replace("ё", "е")
