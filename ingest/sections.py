"""A chunk's section kind: what part of a norm it is — requirements (no kind), scope, terms, normative references,
foreword, abbreviations, a correction or amendment sheet, bibliography, an annex, an annex of worked examples, a
table. Pure functions.

A kind is set by the heading that opens its section («2 Нормативные ссылки», «Предисловие», «Поправка к ГОСТ …»)
and holds until a numbered clause outside that heading's section, an appendix, or a heading of another kind.
The search weighs it as a signal (a passage of the foreword is rarely the answer), never as a
filter: a question about a term, a reference or the scope still finds that section.
"""

from __future__ import annotations

import re

from service.search.dsl.sections import SectionKind

#: what a heading names (after its number), first match wins
_HEADING_PATTERNS: tuple[tuple[SectionKind, str], ...] = (
    ("correction", r"^поправка\s+к\b|^поправки\s+к\b"),
    ("amendment", r"^изменени[ея]\s*(№|n)\s*\d+\s+(к\b|(гост|сп|cп|снип)\s)"),
    ("foreword", r"^(предисловие|введение\s*$|сведения\s+о\s+(стандарте|своде\s+правил|документе))"),
    ("scope", r"^область\s+применения\b"),
    ("references", r"^нормативные\s+ссылки\b|^ссылочные\s+нормативн"),
    ("terms", r"^термины\b|^определения\b|^понятия\b"),
    ("abbreviations", r"^(обозначения\s+и\s+сокращения|сокращения|условные\s+обозначения\s+и\s+сокращения|"
                      r"перечень\s+сокращений|(основные\s+)?(условные\s+)?буквенные\s+обозначения)\b"),
    ("bibliography", r"^библиография\b|^список\s+(использованной\s+)?литературы\b"),
    #: an annex's title only (``next_kind``): «Пример условного обозначения …» in a clause is a requirement's
    ("example", r"^примеры?\s"),
)
_HEADINGS = tuple((kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _HEADING_PATTERNS)
#: a foreword's numbered items, in capitals as standards print them («4 ВВЕДЕН ВПЕРВЫЕ», «2 ВНЕСЕН Техническим …»)
_FOREWORD_ITEM_RE = re.compile(r"^(РАЗРАБОТАН|ВНЕСЕН|ПРИНЯТ|УТВЕРЖДЕН|ВВЕДЕН|ЗАРЕГИСТРИРОВАН|ПОДГОТОВЛЕН|ВЗАМЕН|"
                               r"ПЕРЕИЗДАНИЕ|ИЗДАНИЕ|ИСПОЛНИТЕЛИ|РАЗРАБОТЧИКИ)[А-ЯЁ]*\b")
#: a contents listing's head, however long the block it opens (its lines may come in one block)
_CONTENTS_RE = re.compile(r"^(Содержание|СОДЕРЖАНИЕ|Оглавление|ОГЛАВЛЕНИЕ)(\s|$)")
#: the number that opens a clause or a section heading («5», «5.2.3»)
_NUMBER_RE = re.compile(r"^(\d{1,2}(?:\.\d{1,3})*)\.?\s+")
_APPENDIX_RE = re.compile(r"^(приложение|appendix)\s+[А-ЯЁA-Z0-9]", re.IGNORECASE)
#: what leads an annex's title: «Приложение А (справочное)», or the status alone on a line of its own
_ANNEX_LEAD_RE = re.compile(r"^(?:(?:приложение|appendix)\s+[А-ЯЁA-Z0-9]{1,2}\b\.?\s*)?"
                            r"(?:\((?:обязательное|справочное|рекомендуемое|информационное)\)\s*)?", re.IGNORECASE)
#: a standard's colophon, after its last annex («УДК 691.32:620.17:006.354 МКС 91.100.30 Ключевые слова …»): what
#: follows it (an amendment sheet restating clauses) is no annex's
_COLOPHON_RE = re.compile(r"^(УДК|МКС)\s+\d")
#: the section number of an annex of symbols: only another appendix or kind heading ends it (a list of symbols has
#: no clauses; the numbers in it are formulas' or an OCR'd page number's)
IN_ANNEX = "annex"
#: the most characters of a block read as a heading
HEADING_CHARS = 120


def heading_kind(text: str, heading: bool = True) -> SectionKind | None:
    """The kind a block opens, read without its number or an annex's lead («Приложение А (справочное) Основные
    буквенные обозначения» → abbreviations): a heading's («2 Нормативные ссылки» → references; a
    block of text only as short as a heading), or a foreword's numbered item («4 ВВЕДЕН ВПЕРВЫЕ»); else None."""
    stripped = text.strip()
    if _CONTENTS_RE.match(stripped):
        return "contents"
    head = _ANNEX_LEAD_RE.sub("", _NUMBER_RE.sub("", stripped, count=1), count=1)[:HEADING_CHARS]
    if head != stripped[:HEADING_CHARS] and _FOREWORD_ITEM_RE.match(head):
        return "foreword"
    kind = next((kind for kind, pattern in _HEADINGS if pattern.search(head)), None)
    if heading or len(stripped) <= HEADING_CHARS or kind is None:
        return kind
    # a heading run into its first paragraph: numbered («1 Область применения 1.1 Настоящий …»), or the front
    # of a document («Предисловие Цели и принципы …», «Поправка к ГОСТ …»)
    return kind if head != stripped[:HEADING_CHARS] or kind in ("foreword", "correction", "amendment") else None


def clause_number(text: str) -> str | None:
    """The number a block opens with («5.2.3 …» → «5.2.3»), or None."""
    match = _NUMBER_RE.match(text.strip())
    return match.group(1) if match else None


def within(number: str, section: str | None) -> bool:
    """Whether clause ``number`` is inside the section numbered ``section`` («3.2.1» in «3.2», not «3.20»)."""
    return section is not None and (number == section or number.startswith(section + "."))


def next_kind(kind: SectionKind | None, number: str | None, text: str, heading: bool
              ) -> tuple[SectionKind | None, str | None]:
    """The section kind in effect after a block, and the number of the heading that set it: a kind's heading
    sets them, an appendix opens an annex, a numbered block outside that heading's section returns to
    requirements. A foreword's numbered items («4 ВВЕДЕН ВПЕРВЫЕ») stay in the foreword, a contents listing's
    lines («5 Требования … 12») in the contents; an annex of symbols («Приложение А Основные буквенные
    обозначения») or of worked examples («Приложение Ж Пример расчета …») holds to the next appendix, kind
    heading or a standard's colophon («УДК …»), whatever its lines are numbered."""
    if kind == "contents" and "…" in text:
        return kind, number
    opened = clause_number(text)
    named = heading_kind(text, heading)
    appendix = _APPENDIX_RE.match(text.strip()) is not None
    if number == IN_ANNEX and _COLOPHON_RE.match(text.strip()):
        return None, None
    in_annex = kind == "annex" or appendix
    if named == "example" and not in_annex:
        named = None  # an example in a clause's own text is that clause's
    if named is not None:
        if named in ("abbreviations", "example") and in_annex:
            return named, IN_ANNEX
        # a foreword's items are numbered 1, 2, 3 …: their numbers open no section the next clause is inside
        return named, None if named == "foreword" else opened
    if appendix and (heading or len(text) <= HEADING_CHARS or number == IN_ANNEX):
        return "annex", None  # after an annex of symbols, the next appendix even run into its first paragraph
    if opened is not None and kind not in (None, "annex") and number != IN_ANNEX and not within(opened, number):
        return None, None
    return kind, number
