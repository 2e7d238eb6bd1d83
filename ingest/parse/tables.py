"""Born-digital PDF tables as tables: ruled cells found by pdfplumber, rows kept with their column headers.

A page's text layer gives a table's cells in reading order, headers far from their numbers («Значения при ,
равном 20 10 8 6 0,95 2 2,3 …»). On a page drawn with enough lines to hold a ruled table (counted cheaply
with pdfium), pdfplumber finds the tables by their ruling; each becomes one line per row, cells joined by
`` | `` as Word and Excel tables are, its header rows (a multi-level header: a cell spanning several columns
over the cells that split it) flattened into one first row that names every column. The page's text is
then the layer's text above, between and below the tables with the tables in their places; each table row
carries a mark ``page_blocks`` turns into a table block (the chunker keeps its caption and repeats its
header in every chunk of a long table). A "table" of one column or of paragraphs (a framed note) is not a
table and is left to the text layer. Only pages that caption a table («Таблица N», «Продолжение таблицы N»)
are searched: pdfplumber costs ~0.15 s a page (docs/scale.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.parse.layer import judge

#: a page drawing fewer lines and boxes than this holds no ruled table worth a pdfplumber pass
MIN_PATHS = 6
#: the first row of a table, and every further row (private-use marks no document contains)
TABLE_START, TABLE_ROW = "\ue010", "\ue011"
#: a cell longer than this on average: framed paragraphs, not a table
MAX_MEAN_CELL = 160
MAX_HEADER_ROWS = 3
#: points a table's ruling is widened by when the text around it is read (a cell's glyphs can overhang it)
EDGE = 2.0


#: a line that captions a table or continues one on a new page («Таблица 3 — …», «Продолжение таблицы 3»)
_CAPTION_RE = re.compile(r"(?m)^\s*(?:Таблица|ТАБЛИЦА|Продолжение\s+таблицы|Окончание\s+таблицы|"
                         r"ПРОДОЛЖЕНИЕ\s+ТАБЛИЦЫ|ОКОНЧАНИЕ\s+ТАБЛИЦЫ)\b")


def has_caption(text: str) -> bool:
    """Whether a page's text captions a table or continues one: only such pages are worth a pdfplumber pass
    (~0.15 s a page, ~40× the rest of parsing a born-digital page: docs/scale.md)."""
    return bool(_CAPTION_RE.search(text))


@dataclass(frozen=True)
class FoundTable:
    """A table as it will be indexed: where it is on its page, its title row's text and its lines."""

    top: float  # from the top of the page, in points
    bottom: float
    title: str
    lines: list[str]


def ruled_pages(pdf: Any, indexes: list[int]) -> list[int]:
    """Those of ``indexes`` whose pages draw enough paths to hold a ruled table."""
    import pypdfium2.raw as pdfium_c

    found = []
    for index in indexes:
        page = pdf[index]
        try:
            paths = sum(1 for _ in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_PATH,), max_depth=2))
        finally:
            page.close()
        if paths >= MIN_PATHS:
            found.append(index)
    return found


def find_tables(path: Path, indexes: list[int]) -> dict[int, list[FoundTable]]:
    """Page index → its ruled tables (top to bottom), for ``indexes``; pages without one are left out."""
    import pdfplumber

    out: dict[int, list[FoundTable]] = {}
    with pdfplumber.open(str(path), pages=[i + 1 for i in indexes]) as pdf:
        for index, page in zip(indexes, pdf.pages, strict=True):
            tables = (read_table(t.extract(), t.bbox[1], t.bbox[3]) for t in page.find_tables())
            kept = sorted((t for t in tables if t is not None), key=lambda t: t.top)
            if kept:
                out[index] = kept
            page.close()
    return out


def cell(value: str | None) -> str:
    """A cell's text on one line, a word hyphenated across its lines joined."""
    text = (value or "").replace("\u00ad\n", "").replace("\x02\n", "").replace("-\n", "-")
    return " ".join(text.replace("\u00ad", "").replace("\x02", "").split())


def read_table(rows: list[list[str | None]], top: float = 0.0, bottom: float = 0.0) -> FoundTable | None:
    """The rows pdfplumber found between ``top`` and ``bottom`` as a table, or None when they are not one: at
    least two rows and two columns with text, cells short enough to be cells, and language as it will be shown
    (its header repeated over the columns it spans): a cell read from glyphs drawn turned comes out reversed,
    «нилиц ртемаиД»."""
    cells = [[cell(c) for c in row] for row in rows]
    texts = [text for row in cells for text in row if text]
    columns = max((sum(1 for text in row if text) for row in cells), default=0)
    if len(rows) < 2 or columns < 2 or not texts or sum(map(len, texts)) / len(texts) > MAX_MEAN_CELL:
        return None
    title, lines = table_lines(rows)
    return None if judge("\n".join([title, *lines])).garbage else FoundTable(top, bottom, title, lines)


def title_rows(rows: list[list[str | None]]) -> int:
    """How many leading rows are a title over the whole table (one text across its columns: «Таблица 6
    Размеры в миллиметрах»), not column headers."""
    count = 0
    while count < len(rows) - 2 and len({cell(c) for c in rows[count] if cell(c)}) == 1 \
            and sum(1 for c in rows[count] if c is None or cell(c)) > 1:
        count += 1
    return count


def header_rows(rows: list[list[str | None]]) -> int:
    """How many leading rows are the header: the first, and the next while their first cell is the header's
    merged down (None), or a cell of theirs is merged and none holds a number — at most ``MAX_HEADER_ROWS``."""
    count = 1
    while count < min(MAX_HEADER_ROWS, len(rows) - 1):
        row = rows[count]
        # a row under the header's first cell, merged down (its numbers head columns: «18 | 25 | 37 кВт»), or
        # a row with a merged cell and no number
        if (row and row[0] is None) or (any(c is None for c in row)
                                      and not any(any(ch.isdigit() for ch in cell(c)) for c in row)):
            count += 1
        else:
            break
    return count


def spread(rows: list[list[str | None]]) -> list[list[str]]:
    """Header rows with each merged cell (None) resolved: under a cell of the row above it continues that cell
    down (no text of its own), else the cell on its left across."""
    out: list[list[str]] = []
    for r, row in enumerate(rows):
        level: list[str] = []
        for c, value in enumerate(row):
            if value is not None:
                level.append(cell(value))
            elif r and c < len(rows[r - 1]) and rows[r - 1][c] is not None:
                level.append("")
            else:
                level.append(level[-1] if level else "")
        out.append(level)
    return out


def flat_header(rows: list[list[str | None]]) -> list[str]:
    """One label per column: the header rows' texts from the top down («Обозначение единицы: русское»)."""
    levels = spread(rows)
    labels = []
    for column in range(max(map(len, levels))):
        parts = [level[column] for level in levels if column < len(level) and level[column]]
        labels.append(": ".join(dict.fromkeys(parts)))
    return labels


def table_lines(rows: list[list[str | None]]) -> tuple[str, list[str]]:
    """The table's title row's text, if it has one, and the table as ``cell | cell`` lines, the header
    flattened into the first; empty rows dropped."""
    titled = title_rows(rows)
    title = " ".join(next(cell(c) for c in row if cell(c)) for row in rows[:titled])
    rows = rows[titled:]
    head = header_rows(rows)
    lines = [" | ".join(flat_header(rows[:head]))]
    for row in rows[head:]:
        cells = [cell(c) for c in row]
        if any(cells):
            lines.append(" | ".join(cells))
    return title, lines


def page_with_tables(pdf: Any, index: int, tables: list[FoundTable]) -> str:
    """The page's text with its tables in their places: the layer's text of the bands above, between and
    below them, each table's rows marked (``TABLE_START``, ``TABLE_ROW``)."""
    page = pdf[index]
    textpage = page.get_textpage()
    try:
        width, height = page.get_size()
        parts: list[str] = []
        top = 0.0
        for table in tables:
            if table.top - EDGE > top:
                parts.append(textpage.get_text_bounded(0, height - table.top + EDGE, width, height - top))
            parts.append("\n".join([*([table.title] if table.title else []), TABLE_START + table.lines[0],
                                    *(TABLE_ROW + line for line in table.lines[1:])]))
            top = max(top, table.bottom + EDGE)
        parts.append(textpage.get_text_bounded(0, 0, width, height - top))
        return "\n".join(part for part in parts if part.strip())
    finally:
        textpage.close()
        page.close()
