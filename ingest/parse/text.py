"""Text clean-up and heading detection shared by every parser."""

from __future__ import annotations

import re

from ingest.parse.model import Block, BlockKind, PageRole
from ingest.parse.repair import DocumentWords, join_broken_words, repair_text
from ingest.parse.tables import TABLE_ROW, TABLE_START
from service.search.answer.text import is_number_row

_HEADING_RE = re.compile(r"^(?:\d{1,2}(?:\.\d{1,3})*\.?|[IVXLC]+\.|Раздел\s+\d+|Глава\s+\d+"
                         r"|Приложение\s+[А-ЯA-Z0-9]+)\s+\S",
                         re.IGNORECASE)
_SPACES_RE = re.compile(r"[ \t\u00a0]+")
_LEADER_RE = re.compile(r"(?:\.\s?){4,}|_{4,}")
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def strip_controls(text: str) -> str:
    """Remove terminal escape sequences, control characters (tab, newline and form feed stay), zero-width
    and bidirectional marks: they would reach an agent's context and a terminal raw."""
    return _CONTROL_RE.sub("", _ANSI_RE.sub("", text))


def clean_text(text: str, words: DocumentWords | None = None) -> str:
    """Repair broken and letter-spaced words (``words``: the whole document's, where the parser has it), drop
    control characters and leaders, fold spaces."""
    text = repair_text(text.replace("\r\n", "\n").replace("\r", "\n"), words)
    text = strip_controls(text.replace("\ufffe", "").replace("\u00ad", "").replace("\u2011", "-"))
    text = _LEADER_RE.sub(" … ", text)
    return "\n".join(_SPACES_RE.sub(" ", line).strip() for line in text.split("\n"))


def looks_like_heading(line: str) -> bool:
    """A short numbered or upper-case line without a final full stop."""
    line = line.strip()
    words = len(line.split())
    if not re.search(r"[А-Яа-яЁё]{3}", line):
        return False  # «C7H7NO2», «180 М Джм'2»: table cells, not headings
    if not 3 <= len(line) <= 100 or line.endswith((".", ",", ";", ":")):
        return False
    if _HEADING_RE.match(line):
        return words <= 10
    letters = [c for c in line if c.isalpha()]
    return len(letters) >= 4 and words <= 8 and all(c.isupper() for c in letters)


_DOTTED_KEY_RE = re.compile(r"^#(?:\.#){1,5}\.?$")


def _line_key(line: str) -> str:
    return re.sub(r"\d+", "#", line.strip().lower())


#: a page's number as standards print it at its edge: «С. 25», «Стр. 3»
_PAGE_MARK = r"(?:С|Стр|стр)\.\s*\d{1,4}"
#: a line of page furniture: page numbers, with at most a designation between them («С. 16 ГОСТ 5264-80»,
#: «ГОСТ 5 2 6 4 -8 0 С. 17», letter-spaced as a scan's layer gives it)
_PAGE_MARK_LINE_RE = re.compile(rf"^(?:{_PAGE_MARK}\s*)+(?:(?:ГОСТ|СП|СНиП|ОСТ|РД|СанПиН)\s*[РP]?\s*[\d\s.\-—–/]*\d)?"
                                rf"(?:\s*{_PAGE_MARK})*$|^(?:ГОСТ|СП|СНиП|ОСТ|РД|СанПиН)\s*[РP]?\s*[\d\s.\-—–/]*\d"
                                rf"(?:\s*{_PAGE_MARK})+$")


def is_page_mark(line: str) -> bool:
    """Whether a line is only page furniture: a page number «С. 25», alone or with the designation."""
    return bool(_PAGE_MARK_LINE_RE.match(line.strip()))


def strip_running_lines(pages: list[str], edge: int = 4, min_share: float = 0.3) -> list[str]:
    """Drop running headers and footers: edge lines repeated (digits aside) on many pages, and lines of page
    numbers («С. 16 ГОСТ 5264-80») wherever a page holds them."""
    pages = ["\n".join(ln for ln in text.splitlines() if not is_page_mark(ln)) for text in pages]
    if len(pages) < 4:
        return pages
    counts: dict[str, int] = {}
    edges = []
    for text in pages:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        keys = {_line_key(ln) for ln in lines[:edge] + lines[-edge:]}
        edges.append(keys)
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
    # a clause's number on a line of its own («9.2.5») opens many pages of some norms: it is text, not a header
    running = {k for k, c in counts.items() if c >= max(3, min_share * len(pages)) and not _DOTTED_KEY_RE.match(k)}
    if not running:
        return pages
    return ["\n".join(ln for ln in text.splitlines() if _line_key(ln) not in running or _line_key(ln) not in keys)
            for text, keys in zip(pages, edges, strict=True)]


_CLAUSE_START_RE = re.compile(r"^(?:\d{1,2}(?:\.\d{1,3}){1,5}\.?\s+\S"
                              r"|(?:Таблица|Приложение|ТАБЛИЦА|ПРИЛОЖЕНИЕ)\s+[А-ЯЁA-Z0-9]"
                              r"|(?:Статья|СТАТЬЯ)\s+\d)")


#: a contents line: a title, leaders (``clean_text`` makes them «…») and a page number, or leaders ending it
_CONTENTS_LINE_RE = re.compile(r"\S.*…\s*(?:[IVXLC]+|\d{1,3}|[А-ЯA-Z]\.?\d{0,2})?$")
_CONTENTS_HEAD_RE = re.compile(r"^(?:Содержание|СОДЕРЖАНИЕ|Оглавление|ОГЛАВЛЕНИЕ)$")
#: what only a cover or an imprint page carries (a publisher's print data, the «official edition» banner)
_IMPRINT_RE = re.compile(r"Издание официальное|Подписано в печать|Формат\s*60\s*[xх×]\s*(?:84|90|108)"
                         r"|Усл\.\s*печ\.\s*л|Тираж\s+\d|\bISBN\b", re.IGNORECASE)
IMPRINT_CHARS = 1200  # a page with more text than this is content, whatever banner it carries
#: what opens content: a numbered clause with words («1 Область применения», «1.Настоящий стандарт»)
_CONTENT_START_RE = re.compile(r"^\d{1,2}(?:\.\d{1,3})*\.?\s*[А-ЯЁ][а-яё]{2,}|Дата введения", re.MULTILINE)


def page_role(text: str) -> PageRole | None:
    """Whether a cleaned page is a contents listing (most of its lines end in leaders and a page number,
    or it is headed «Содержание» and three of its lines do) or a short cover or imprint page (a print
    banner and no clause or date of entry: the first page of a standard carries the banner too)."""
    lines = [line for line in text.split("\n") if line.strip()]
    listed = sum(1 for line in lines if _CONTENTS_LINE_RE.match(line))
    headed = any(_CONTENTS_HEAD_RE.match(line.strip()) for line in lines[:4])
    if listed >= 3 and (headed or listed >= 0.5 * len(lines)):
        return "contents"
    if len(text) <= IMPRINT_CHARS and _IMPRINT_RE.search(text) and not _CONTENT_START_RE.search(text):
        return "imprint"
    return None


#: the most characters of the lines above a table's first row taken as its column headers
HEADER_CHARS = 300


def header_lines(buffer: list[str]) -> list[str]:
    """The lines above a table's first row that name its columns, taken off ``buffer``: those after its
    caption («Таблица 1 — …»), or the whole paragraph when it is short and has no caption."""
    caption = next((i for i, line in enumerate(buffer) if line.startswith(("Таблица", "ТАБЛИЦА"))), None)
    start = caption + 1 if caption is not None else 0
    header = buffer[start:]
    if not header or sum(map(len, header)) > HEADER_CHARS:
        return []
    del buffer[start:]
    return header


def page_blocks(text: str, page: int, page_label: str | None = None,
                words: DocumentWords | None = None) -> list[Block]:
    """Blocks of one page: heading lines become ``title`` blocks, the rest paragraphs; a line that opens
    a numbered clause («4.2.5 Количество …») or a table or appendix starts a paragraph of its own. Rows of
    numbers (a table without ruling) stay lines of a ``table`` block led by the lines naming their columns, so
    that a row is a unit of its own under its caption's number. Every block of a contents, cover or imprint
    page carries its ``role``. ``words``: the whole document's, a witness for words broken at a line's end."""
    blocks: list[Block] = []
    buffer: list[str] = []
    cleaned = clean_text(text, words)
    role = page_role(cleaned)

    table: list[str] = []

    def flush(kind: BlockKind = "text") -> None:
        if buffer:
            blocks.append(Block(" ".join(buffer), page, kind, page_label, role))
            buffer.clear()
        if table:
            blocks.append(Block("\n".join(table), page, "table", page_label, role))
            table.clear()

    lines = cleaned.split("\n")
    for at, line in enumerate(lines):
        if line.startswith((TABLE_START, TABLE_ROW)):  # a row of a table found by its ruling (parse/tables.py)
            if line[0] == TABLE_START or buffer:
                flush()
            table.append(line[1:].strip())
            continue
        if is_number_row(line):
            if not table:
                header = header_lines(buffer)
                flush()
                if header:
                    table.append(" ".join(header))
            table.append(line)
            continue
        if table:
            flush()
        if not line:
            flush()
        elif looks_like_heading(line):
            flush()
            buffer.append(line)
            flush("title")
        else:
            if _CLAUSE_START_RE.match(line) or opens_clause_alone(line, lines[at + 1:at + 3]):
                flush()
            buffer.append(line)
    flush()
    return blocks


_CLAUSE_ALONE_RE = re.compile(r"^\d{1,2}(?:\.\d{1,3}){1,5}\.?$")


_BARE_NUMBER_RE = re.compile(r"^\d[\d.,]*$")


def opens_clause_alone(line: str, following: list[str]) -> bool:
    """A clause's number on a line of its own, its text starting on the next line with a capital («9.2.5» /
    «Длину каждого …»), as some typeset norms lay them out. Not a table's cells: a lone number before another
    number, or before one line of text and then a number again (a column of clause numbers beside their names,
    «7.3» / «Отклонение длины» / «4.7»)."""
    if not _CLAUSE_ALONE_RE.match(line.strip()) or not following or not following[0].strip()[:1].isupper():
        return False
    return len(following) < 2 or not _BARE_NUMBER_RE.match(following[1].strip())


_ENDS_BROKEN_RE = re.compile(r"[А-Яа-яЁё][-‐‑\u00ad]$")


def merge_broken_blocks(blocks: list[Block]) -> list[Block]:
    """Paragraphs a word was broken across («эффектив-» / «ность …», as DOCX exported from a typeset
    page holds them) become one, the word joined when the dictionary or the document (written whole elsewhere)
    knows the joined form."""
    words = DocumentWords([block.text for block in blocks])
    merged: list[Block] = []
    for block in blocks:
        previous = merged[-1] if merged else None
        if previous is not None and previous.kind == block.kind == "text" and previous.page == block.page \
                and _ENDS_BROKEN_RE.search(previous.text) and block.text[:1].islower():
            joined = join_broken_words(previous.text.replace("\u00ad", "-") + "\n" + block.text, words)
            merged[-1] = Block(joined.replace("\n", " "), block.page, "text", block.page_label, block.role)
        else:
            merged.append(block)
    return merged
