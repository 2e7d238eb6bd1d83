"""What a document is: its designation («ГОСТ 10180-2012», «СП 63.13330.2018») and its name, taken from
the first pages (publisher boilerplate skipped), then the document properties, then the file name, in
that order of trust. The title an agent shows and cites is «designation name».
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from ingest.parse.repair import collapse_letter_spacing, is_word, join_broken_words, join_word_fragments
from service.search.citations.designations import DESIGNATION_RE, find_designation, normalize_designation

_STOP_LINE_RE = re.compile(
    r"^(?:\(?EN\b|\(?ISO\b|\(?IEC\b|\([A-Z]{2,}|Издание\s+официальное|ОКС\b|Дата\s+введения|Москва|Предисловие|ПРЕДИСЛОВИЕ|"
    r"Official|Сведения|Межгосударственн\w+\s+научно|Федеральн\w+\s+закон|В\s+соответствии|Цели\s+и\s+принципы|"
    r"Список\s+изменяющих|Свод\s+правил\s+разработан|«|\"|\d+\s+(?:РАЗРАБОТАН|ВНЕСЕН|ПРИНЯТ|УТВЕРЖДЕН|ВВЕДЕН|"
    r"ПОДГОТОВЛЕН|ИСПОЛНИТЕЛ)|Введ[её]н|Стандартинформ|Российский\s+институт|Ключевые\s+слова|"
    r"Страница\s+\d)", re.IGNORECASE)
_BOILERPLATE_RE = re.compile(
    r"СОВЕТ\s+ПО\s+СТАНДАРТИЗАЦИИ|^\(?(?:МГС|ISC)\)?$|^СВОД\s+ПРАВИЛ$|^(?:МЕЖГОСУДАРСТВЕННЫЙ|НАЦИОНАЛЬНЫЙ)\s+СТАНДАРТ|"
    r"^СТАНДАРТ$|ГОСУДАРСТВЕННЫЙ\s+СТАНДАРТ|^РОССИЙСКАЯ\s+ФЕДЕРАЦИЯ$|^(?:ВЕДОМСТВЕННЫЙ\s+)?СВОД\s+ПРАВИЛ(?:\s+ПО\s+ПРОЕКТИРОВАНИЮ)?$|ГОССТАНДАРТ|ЖИЛИЩНО-КОММУНАЛЬНОГО|^СТРОИТЕЛЬСТВА\s+И\b|^\(?МИНСТРОЙ|^[IVXLC]+$|^(?:МЕЖГОСУДАРСТВЕННЫЙ|НАЦИОНАЛЬНЫЙ|РОССИЙСКОЙ|ФЕДЕРАЦИИ)$|ФЕДЕРАЛЬН\w+\s+(?:СЛУЖБ|АГЕНТСТВ)|ПРАВИТЕЛЬСТВО|МИНИСТЕРСТВО|^МО\s+РФ$|^РОССИЙСКОЙ\s+ФЕДЕРАЦИИ$|КонсультантПлюс|правовая\s+поддержка|www\.|https?:|Документ\s+предоставлен|^Дата\s+сохранения|^Принят\s+Государственной|"
    r"^СТРОИТЕЛЬНЫЕ\s+НОРМЫ(?:\s+И\s+ПРАВИЛА)?$|^ТЕХНИЧЕСКИЙ\s+РЕГЛАМЕНТ$|^ЗАРЕГИСТРИРОВАН|^УТВЕРЖД|^Документ\s+сохран|"
    r"docs\.cntd\.ru|^Microsoft|^Untitled|^Без\s+названия|^(?:ПО\s+ПРОЕКТИРОВАНИЮ\s+)?И\s+СТРОИТЕЛЬСТВУ$|"
    r"^Система\s+нормативных\s+документов", re.IGNORECASE)
#: «Об утверждении свода правил «Конструкции из ячеистых бетонов. Правила проектирования»» (an order ahead)
_APPROVED_RE = re.compile(r"(?:свод[ау]?\s+правил|стандарт[аов]*|СП|ГОСТ)\s*(?:«([^»]{6,300})»|\"([^\"]{6,300})\")",
                          re.IGNORECASE)
_REVISION_RE = re.compile(r"\s*(?:\.\s*)?(?:\((?i:СНиП)|\(с\s+Изменени|\(ред\.|(?i:СНиП)\s+\S*\d|с\s+Изменени"
                          r"|\(Переиздание).*$")


@dataclass(frozen=True)
class Identity:
    designation: str | None
    name: str | None

    @property
    def title(self) -> str | None:
        parts = [p for p in (self.designation, self.name) if p]
        return " ".join(parts) if parts else None


def choose_designation(printed: str | None, named: str | None, head: str) -> str | None:
    """The printed designation, unless the file name's is also printed there (digits compared: OCR often
    spaces out «5 3 1 9 5 .3») and differs: then the file name read it better."""
    if printed and named and named.startswith(printed):
        return named  # the file name has the year the text left out («СП 22.13330»)
    if printed and named and printed.startswith(named):
        return printed  # the file name lost a part («ВСП 22-02-07МО РФ…» reads as «ВСП 22-02»)
    if printed and named and printed != named:
        digits = re.sub(r"\D", "", named)
        if digits and digits in re.sub(r"\D", "", head[:4000]):
            return named
    return printed or named


def printed_designation(lines: list[str]) -> str | None:
    """The designation a document prints as its own: at the start of a line, or on a short line (a title
    page, a running header), also when broken over up to three lines; never one cited inside a sentence."""
    joined = [" ".join(line.split()) for line in lines if line.strip()]
    for i in range(len(joined)):
        for width in (1, 2, 3):
            window = " ".join(joined[i:i + width])
            if window.endswith(("-", "–", "—")) and i + width < len(joined):
                continue  # «ГОСТ / 27772— / 2021»: the number goes on in the next line
            match = DESIGNATION_RE.search(window)
            if match and (match.start() == 0 or len(window.split()) <= 8):
                return normalize_designation(match["kind"], match["number"])
    return None


def is_boilerplate(line: str) -> bool:
    """A publisher, council or ministry header, a document-kind banner, an application's default title."""
    line = " ".join(line.split())
    return len(line) < 4 or bool(_BOILERPLATE_RE.search(line))


def sentence_case(line: str) -> str:
    """«БЕТОННЫЕ И ЖЕЛЕЗОБЕТОННЫЕ КОНСТРУКЦИИ» → «Бетонные и железобетонные конструкции» (also when a
    letter-spaced word came out lower-case: «СИСТЕМЫ ПРОТИВОПОЖАРНОЙ защиты»); mixed case stays."""
    letters = [c for c in line if c.isalpha() and c.lower() != c.upper()]
    if not letters or sum(c.isupper() for c in letters) < 0.6 * len(letters):
        return line  # mixed case is already how it should read
    lowered = " ".join(w if any(c.isdigit() for c in w) else w.lower() for w in line.split(" "))  # «ГФ-021» stays
    return lowered[:1].upper() + lowered[1:]


#: a number OCR spaced out on a title page («ГОСТ / 2 5 1 2 9 - / 2020»)
_SPACED_DIGITS_RE = re.compile(r"(?<![\w.])\d(?: \d){2,}(?: ?-)?(?![\w.])")
MISREAD_RATIO = 0.8
#: «… Лифты для пожарных (EN 81-72:2003)» at the end of a name
_ADOPTED_TAIL_RE = re.compile(r"\s*\(?\b(?:ЕН|EN|ИСО|ISO|МЭК|IEC)\s+\d[\d\-–:.]*\)?\s*$", re.IGNORECASE)
_ADOPTED_RE = re.compile(r"^\((?:ИСО|ISO|МЭК|IEC|EN|ЕН|ASTM)\b[^)]{0,60}\)[\s.]*", re.IGNORECASE)


def _clean_name(name: str) -> str | None:
    """A name without editions or the standard it adopts («(ИСО 7411:1984) болты …» → «Болты …»)."""
    name = _REVISION_RE.sub("", " ".join(name.split()))
    name = _ADOPTED_TAIL_RE.sub("", name).strip(" .,;:—-")
    if adopted := _ADOPTED_RE.match(name):
        name = name[adopted.end():]
        name = name[:1].upper() + name[1:]
    return name if len(name) >= 4 and any(c.isalpha() for c in name) else None


def name_after(lines: list[str], designation: str) -> str | None:
    """The name printed with the designation: the rest of a «designation name» line (a publisher's
    running header), else the title lines that follow the designation on the title page."""
    for line in lines[:12]:
        rest = " ".join(line.split())
        match = DESIGNATION_RE.search(rest) if find_designation(line) == designation else None
        end = match.end() if match else misread(rest, designation)
        tail = rest[end:] if end is not None else ""
        if len(tail.split()) >= 2 and (name := _clean_name(tail)):
            return name
    joined = [" ".join(line.split()) for line in lines]
    # the first line where the designation ends, also when it is broken over lines («ГОСТ / 10180— / 2012»),
    # else the line where an OCR-misread form of it stands alone («СП 226Л326000.2014»)
    exact = next((i for i in range(len(joined))
                  if find_designation(" ".join(joined[max(0, i - 3): i + 1])) == designation), None)
    # the number alone, or broken over lines without its dash («ГОСТ / 25809 / 2019»): a title page can print
    # it so ahead of a running header that prints it whole
    digits = re.sub(r"\D", "", designation)
    bare = next((i for i in range(len(joined)) if re.search(r"\d", joined[i])
                 and re.sub(r"\D", "", " ".join(joined[max(0, i - 2): i + 1])).endswith(digits)), None)
    start = min((i for i in (exact, bare) if i is not None), default=None)
    if start is None:
        start = next((i for i, line in enumerate(joined) if misread(line, designation) == len(line)), None)
    if start is None:
        return None
    parts: list[str] = []
    for line in [line for line in joined[start + 1: start + 60] if line][:14]:
        if is_boilerplate(line) or find_designation(line) or not any(c.isalpha() for c in line):
            if parts:
                break
            continue
        latin = sum(c.isascii() and c.isalpha() for c in line)
        if _STOP_LINE_RE.match(line) or len(line) > 160 or latin > len(line) / 2:
            if parts:
                break
            continue
        parts.append(line)
        if len(" ".join(parts)) > 200:
            break
    return _clean_name(join_title_lines(parts)) if parts else None


def name_before(lines: list[str], designation: str) -> str | None:
    """The name an older title page prints above the designation, in capitals («АРХИТЕКТУРНО-ПЛАНИРОВОЧНЫЕ /
    РЕШЕНИЯ … / СП 31-107-2004»): the upper-case lines right above its first line."""
    joined = [" ".join(line.split()) for line in lines]
    at = next((i for i, line in enumerate(joined) if find_designation(line) == designation), None)
    parts: list[str] = []
    for line in reversed(joined[:at] if at else []):
        if not line:
            continue
        if sentence_case(line) == line or is_boilerplate(line) or find_designation(line) or len(parts) >= 6:
            break
        parts.insert(0, line)
    return _clean_name(join_title_lines(parts)) if parts else None


def misread(line: str, designation: str) -> int | None:
    """Where ``designation`` ends on a title-page line that opens with it as OCR misread it: the same kind,
    then characters most of which are the number's («СП 226Л326000.2014», «СП 3SQ .1325800.2017» for «СП
    356.1325800.2017»); None when the line does not open so."""
    kind, _, number = designation.rpartition(" ")
    if not line.startswith(kind + " "):
        return None
    rest = line[len(kind) + 1:]
    for end in range(len(rest), 0, -1):  # the longest opening that reads as the number
        if (end == len(rest) or rest[end] == " ") and rest[:1].isdigit() and len(rest[:end]) <= len(number) + 4 \
                and SequenceMatcher(None, rest[:end], number).ratio() >= MISREAD_RATIO:
            return len(kind) + 1 + end
    return None


def join_title_lines(parts: list[str]) -> str:
    """Upper-case heading lines form the first sentence, mixed-case lines the next one («БЕТОНЫ» /
    «Методы определения прочности» / «по контрольным образцам» → «Бетоны. Методы … образцам»)."""
    out = ""
    previous_upper = None
    for part in parts:
        upper = sentence_case(part) != part
        text = sentence_case(part)
        if not out:
            out = text
        elif upper != previous_upper and (text[:1].isupper() or (previous_upper and text[:1].isalpha())):
            # after a capitals heading a subtitle starts a sentence, also when printed lower-case («СТАЛЕЙ» / «типы»)
            out += ("" if out.endswith(".") else ".") + " " + text[:1].upper() + text[1:]
        else:
            out += " " + (text[:1].lower() + text[1:] if upper and not out.endswith(".") else text)
        previous_upper = upper
    return out


_ACT_RE = re.compile(r"^(ПОСТАНОВЛЕНИЕ|ПРИКАЗ|РАСПОРЯЖЕНИЕ|УКАЗ|РЕШЕНИЕ|ФЕДЕРАЛЬНЫЙ\s+ЗАКОН)$", re.IGNORECASE)
_ACT_DATE_RE = re.compile(r"^от\s+.{4,40}?\s(?:N|№)\s*\S+$", re.IGNORECASE)


def act_title(lines: list[str]) -> str | None:
    """An act's title: «Постановление от 16 февраля 2008 г. N 87 О составе разделов …», from the kind
    line, the date-and-number line and the «О …» subject that follow it."""
    joined = [" ".join(line.split()) for line in lines[:30] if line.strip()]
    for i, line in enumerate(joined[:-2]):
        if _ACT_RE.match(line) and _ACT_DATE_RE.match(joined[i + 1]):
            subject = joined[i + 2]
            if not re.match(r"^(?:О|Об|Обо)\s", subject, re.IGNORECASE):
                return None
            return f"{line.capitalize()} {joined[i + 1]} {_clean_name(sentence_case(subject)) or ''}".strip()
    return None


def looks_like_title(line: str) -> bool:
    """A first-page line that can name a document: 2-15 words starting with a letter, no quotes or
    trailing comma, not boilerplate, not a line of broken letters («П ра ви л а у с тро й»)."""
    words = line.split()
    if not 2 <= len(words) <= 15 or len(line) > 150 or not line.strip()[:1].isalpha():
        return False
    if any(q in line for q in '"«»') or line.rstrip().endswith((",", ";")) or _STOP_LINE_RE.match(line.strip()):
        return False
    if sum(1 for w in words if len(w) <= 2) > 0.4 * len(words):
        return False
    return not is_boilerplate(line)


#: short words a capitals line holds as words («ДОРОГ И АЭРОДРОМОВ», «РАСЧЕТ НА ПРОЧНОСТЬ»), never an ending
_FUNCTION_WORDS = frozenset(["и", "а", "в", "с", "к", "о", "у", "я", "на", "по", "от", "до", "за", "из", "не", "ни",
                             "но", "при", "или", "для", "без", "над", "под", "про", "что", "как", "же", "ли", "бы"])
_CAPS_ENDING_RE = re.compile(r"(?<![А-ЯЁ])([А-ЯЁ]{3,}) ([А-ЯЁ]{1,3})(?![А-ЯЁа-яё])")


def join_caps_endings(line: str) -> str:
    """A title page set in capitals splits a word before its ending, leaving two dictionary words («В
    СИСТЕМ АХ», «ОБЩ ЕГО НАЗНАЧЕНИЯ»), which the general repair never joins: on a capitals line, a word and
    one to three letters join when the join is a dictionary word of six letters or more."""
    if not line.strip() or line != line.upper():
        return line
    return _CAPS_ENDING_RE.sub(lambda m: m[1] + m[2] if m[2].lower() not in _FUNCTION_WORDS
                               and len(m[1] + m[2]) >= 6 and is_word(m[1] + m[2]) else m[0], line)


def identify(head: str, metadata_title: str | None, path: Path) -> Identity:
    """Designation and name from the first pages' raw text, the document properties, the file name."""
    # the whole head at once: a word set vertically, one letter a line («М / Е / Ж …»), joins only so
    lines = [_SPACED_DIGITS_RE.sub(lambda m: m[0].replace(" ", ""), join_caps_endings(line))
             for line in collapse_letter_spacing(join_broken_words(head)).splitlines()]
    lines = [line for line in lines if not _BOILERPLATE_RE.search(" ".join(line.split()))]
    stem = path.stem.replace("_", " ")
    designation = choose_designation(printed_designation(lines[:60]), find_designation(stem), head)
    name = name_after(lines[:80], designation) if designation else None
    if designation and (name is None or title_problems(f"{designation} {name}", designation)):
        name = name_before(lines[:80], designation) or name
    if name is None and designation and (quoted := _APPROVED_RE.search(" ".join(lines[:80]))):
        name = _clean_name(quoted[1] or quoted[2])
    if name is None and metadata_title and not is_boilerplate(metadata_title) \
            and find_designation(metadata_title) in (None, designation):
        name = _clean_name(metadata_title.replace(designation or "\0", ""))
    if name is None and designation is None and (act := act_title(lines)):
        name = act
    if name is None and designation is None:
        first = next((" ".join(line.split()) for line in lines[:30] if looks_like_title(line)), None)
        name = _clean_name(sentence_case(first)) if first else None
    if name is None:
        cut = stem
        if designation:
            match = DESIGNATION_RE.search(stem)
            cut = (stem[:match.start()] + stem[match.end():]) if match else ""
        name = _clean_name(cut) if designation else _clean_name(stem) or stem
    return Identity(designation, sentence_case(name) if name and designation else name)


_SPACED_LETTERS_RE = re.compile(r"(?<!\w)(?:[А-Яа-яЁё] ){2,}[А-Яа-яЁё](?!\w)")
#: what a document's name never holds: an order or a publisher's imprint, a database's notes, a vote
_NOISE_RE = re.compile(
    r"\bприказ\w*\b|\bпостановлени\w*\b|\bутвержд\w*\b|Общество\s+с\s+ограниченной|ответственностью|РААСН|"
    r"\bНИИ\w*\b|метрологии\s+и\s+сертификации|по\s+делам\s+гражданской\s+обороны|санитарный\s+врач|"
    r"см\.\s+по\s+ссылке|Предисловие|Примечание\s+изготовителя|Источник:|проголосовали|Код\s+страны|"
    r"\(в\s+ред\.|№\s*\d|\bN\s+\d|^изменени|Дата\s+введения|СВОД\s+ПРАВИЛ|\(Издание|В\s+каком\s+месте|^С\.\s*\d",
    re.IGNORECASE)
MAX_NAME_CHARS = 200
_ACT_NAME_RE = re.compile(r"^(?:Постановление|Приказ|Распоряжение|Указ|Решение|Федеральный\s+закон)\s+от\s")
TITLE_PROBLEMS = ("bare", "letter_split", "boilerplate", "length")


def title_name(title: str | None, designation: str | None) -> str:
    """The name part of a «designation name» title."""
    title = " ".join((title or "").split())
    return title[len(designation):].strip() if designation and title.startswith(designation) else title


def title_problems(title: str | None, designation: str | None) -> list[str]:
    """What is wrong with a title an agent would show and cite: ``bare`` (a designation and no name),
    ``letter_split`` (spaced or split letters left: «Авто м о бильны е»), ``boilerplate`` (an order, an
    imprint, a database note, a name starting in lower case: «вязаный жакет»), ``length`` (under 4 or over
    200 characters)."""
    name = title_name(title, designation)
    if not name or find_designation(name) == name:
        return ["bare"]
    problems = []
    if _SPACED_LETTERS_RE.search(name) or join_word_fragments(name) != name:
        problems.append("letter_split")
    act = designation is None and bool(_ACT_NAME_RE.match(name))  # «Постановление от … N 87 О …» is a name
    if is_boilerplate(name) or (not act and _NOISE_RE.search(name)) or not name[:1].isupper():
        problems.append("boilerplate")
    if len(name) < 4 or len(name) > MAX_NAME_CHARS:
        problems.append("length")
    return problems
