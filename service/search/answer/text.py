"""A passage's text as shown: spacing folded, table rows kept one to a line with their header put before, a
highlight or a chunk cut at a word. Pure functions."""

from __future__ import annotations

import re

MARK = "**"  # how a highlight shows the query's words


def is_row(line: str) -> bool:
    """A table row as the parsers write one: cells joined by `` | ``."""
    return " | " in line


#: one cell of a table's row as a text layer gives it: a number, a range, a fraction or a size («0,2», «10–16»,
#: «3/8», «6×10», «(12)», «45 %» as two tokens)
NUMBER_CELL_RE = re.compile(r"^[(\[]?[-+−–]?\d[\d.,/×x:–-]*[)\]]?%?$|^[%—–-]$")


def is_number_row(line: str) -> bool:
    """A row of a table without ruling as a text layer (or a TXT render) gives it: three or more numbers and
    (almost) nothing else («6 10 0,2 0,5 2,20»); the ingest keeps it a line of its own."""
    cells = line.split()
    numbers = sum(1 for cell in cells if NUMBER_CELL_RE.match(cell))
    return numbers >= 3 and numbers >= 0.8 * len(cells)


def passage_text(raw: str) -> str:
    """A passage as shown: each line's spacing folded and lines joined by a space (a PDF wraps sentences at
    line ends), except around table rows, ruled (cells joined by `` | ``) or rows of numbers, which stay one
    to a line."""
    lines = [" ".join(line.split()) for line in raw.split("\n")]
    lines = [line for line in lines if line]
    kept = [is_row(line) or is_number_row(line) for line in lines]
    out = lines[:1]
    for i in range(1, len(lines)):
        out.append(("\n" if kept[i - 1] or kept[i] else " ") + lines[i])
    return "".join(out)


#: the longest table header put before a passage
HEADER_CHARS = 300


def table_header(text: str, start: int) -> tuple[int, int] | None:
    """Where the header row is of the table a passage starting at ``start`` opens inside of (the first row of
    the rows around it: the parsers and the chunker lead every table and table piece with it), when the
    passage does not start with it: a cell's number means nothing without its column."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    if not is_row(text[line_start:line_end if line_end >= 0 else len(text)]):
        return None
    first = line_start
    while first > 0:
        above = text.rfind("\n", 0, first - 1) + 1
        if not is_row(text[above:first - 1]):
            break
        first = above
    return None if first == line_start else (first, text.find("\n", first))


def header_text(text: str, span: tuple[int, int] | None) -> str:
    """The header row put before a passage (cut at a word past ``HEADER_CHARS``), with its line break."""
    if span is None:
        return ""
    header = " ".join(text[span[0]:span[1]].split())
    return (header if len(header) <= HEADER_CHARS else header[:HEADER_CHARS].rsplit(" ", 1)[0] + " …") + "\n"


def cut_at_word(text: str, limit: int) -> str:
    """``text`` as a passage shows it (spacing folded, a table's rows one to a line) cut to at most ``limit``
    characters at a word boundary, with an ellipsis when cut."""
    return _cut(passage_text(text), limit)


def _cut(text: str, limit: int) -> str:
    """``cut_at_word`` of a text whose spacing is already folded."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[: cut if cut > limit // 2 else limit - 1].rstrip(" ,;:") + "…"


def snippet(passage: str, limit: int) -> str | None:
    """A highlight: up to ``limit`` characters of ``passage`` from shortly before its first marked word, with
    its marks paired; None when nothing in it is marked (a dense-only hit's opening)."""
    return marked_snippet(" ".join(passage.split()), limit)


def marked_snippet(text: str, limit: int) -> str | None:
    """``snippet`` of a passage whose whitespace is already single spaces."""
    first = text.find(MARK)
    if first < 0:
        return None
    start = 0 if first <= limit // 5 else text.rfind(" ", 0, first - limit // 5) + 1
    cut = ("…" if start else "") + _cut(text[start:], limit - (1 if start else 0))
    return cut if cut.count(MARK) % 2 == 0 else cut.rstrip("…") + MARK + ("…" if cut.endswith("…") else "")
