"""Blocks → chunks of about ``size`` characters, with overlap, each knowing its pages, section and clause.

Running text fills a chunk up to ``size`` across paragraphs and pages; a chunk that fills up continues into
the next one with ``overlap`` characters of its tail (cut at a word boundary), so a sentence split across
chunks is still found whole. Boundaries prefer headings: a heading (a numbered clause, «Приложение Б»)
starts a new chunk once the current one is at least half full. A new sheet (XLSX) always starts a chunk.
Each chunk carries the page it starts on and the one it ends on, the section title and the clause
(«5.2.3», «Приложение Б», «Таблица 4») in effect where it starts, every clause that begins inside it, and
``spans``: the character offsets at which the page or the clause in effect changes, so that a passage cut
from anywhere in the chunk is labelled with its own clause and page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.parse.model import Block, PageRole
from ingest.sections import next_kind
from service.search.dsl.sections import SectionKind

_CLAUSE_RE = re.compile(
    r"^(?:(?P<num>\d{1,2}(?:\.\d{1,3}){1,5})\.?(?=\s|$)"
    r"|(?P<head>\d{1,2})\.?\s+(?=[А-ЯЁA-Z])"
    r"|(?P<named>(?:Приложение|ПРИЛОЖЕНИЕ|Таблица|ТАБЛИЦА|Раздел|РАЗДЕЛ|Статья|СТАТЬЯ)\s+(?:[N№]\s*(?=\d))?"
    r"(?!N\b)[А-ЯЁA-Z0-9]{1,3}(?:\.\d{1,3})*)(?=[\s.—–-]|$))")


#: a paragraph of flat numbering, as orders, federal norms and rules number theirs: «1197. При установке …»
_FLAT_RE = re.compile(r"^(?P<num>\d{1,4})\.\s+(?=[А-ЯЁA-Z])")
#: flat numbering is the document's own when at least this many paragraphs have it, and more than twice as
#: many as its dotted clauses (an СП's lists «1. …» inside a clause or a note stay part of that clause)
FLAT_MIN = 10


@dataclass(frozen=True)
class ChunkText:
    index: int
    text: str
    page: int
    page_label: str | None
    section_title: str | None
    page_end: int | None = None
    clause: str | None = None
    clauses: tuple[str, ...] = ()
    #: (offset in ``text``, page, clause in effect) wherever the page or the clause changes; the first at 0
    spans: tuple[tuple[int, int, str | None], ...] = ()
    #: «contents» or «imprint» for a chunk of such pages (a role change always starts a chunk)
    role: PageRole | None = None
    #: the section kind in effect where it starts (``ingest.sections``; None: requirements), «table» for a
    #: requirements chunk holding a table
    kind: SectionKind | None = None


def flat_numbered(blocks: list[Block]) -> bool:
    """Whether the document numbers its paragraphs flat («1.», «2.», … «1197.») rather than by section
    («5.2.3») or by article (a law's «1.», «2.» are parts of its «Статья 89»): then such a paragraph starts
    a clause of its own."""
    body = [b.text for b in blocks if b.role is None and b.kind != "title"]
    if any(text.startswith(("Статья ", "СТАТЬЯ ")) for text in body):
        return False  # a law numbers the parts of each article: the article is the clause
    flat = sum(1 for text in body if _FLAT_RE.match(text))
    dotted = sum(1 for text in body if (m := _CLAUSE_RE.match(text)) is not None and m["num"])
    return flat >= FLAT_MIN and flat > 2 * dotted


def clause_of(block: Block, flat: bool = False) -> str | None:
    """The clause a block starts, if it starts one: «5.2.3 …», a heading «5 Общие требования»,
    «Приложение Б», «Таблица 4», «Статья 89»; with ``flat`` numbering, «1197. При …». A bare single number
    starts a clause only in a heading, or in a document numbered flat."""
    if flat and block.kind != "title" and (plain := _FLAT_RE.match(block.text)):
        return plain["num"]
    match = _CLAUSE_RE.match(block.text)
    if match is None:
        return None
    if match["num"]:
        return match["num"]
    if match["head"]:
        return match["head"] if block.kind == "title" else None
    word, *rest = match["named"].replace("№", " ").replace("N", " ", 1).split() if re.search(
        r"\s[N№]\s*\d", match["named"]) else match["named"].split()
    return " ".join([word.capitalize(), *rest])


def tail_at_word(text: str, size: int) -> str:
    """The last ``size`` characters of ``text``, widened to start at a word boundary."""
    if size <= 0 or not text:
        return ""
    if len(text) <= size:
        return text
    cut = text.rfind(" ", 0, len(text) - size)
    return text[cut + 1:] if cut >= 0 else text[-size:]


class _Chunker:
    def __init__(self, size: int, overlap: int, flat: bool = False) -> None:
        self.size, self.overlap = size, min(overlap, size // 2)
        self.flat = flat
        self.chunks: list[ChunkText] = []
        self.parts: list[str] = []
        self.where: list[tuple[int, str | None]] = []  # each part's page and clause in effect
        self.label: str | None = None
        self.role: PageRole | None = None
        self.section: str | None = None
        self.clause: str | None = None
        self.carry = ""
        self.has_body = False
        self.start: tuple[int, str | None, str | None] | None = None  # page, section, clause at the start
        self.page_end = 1
        self.inside: list[str] = []
        self.kind: SectionKind | None = None  # the section kind in effect, and its top-level number
        self.kind_number: str | None = None
        self.start_kind: SectionKind | None = None
        self.has_table = False

    @property
    def length(self) -> int:
        return sum(len(p) + 1 for p in self.parts)

    def flush(self, keep_tail: bool) -> None:
        body = "\n".join(self.parts).strip()
        spans = spans_of(self.parts, self.where)
        if body and body != self.carry.strip() and self.start is not None:
            page, section, clause = self.start
            clauses = tuple(dict.fromkeys([*([clause] if clause else []), *self.inside]))
            kind = self.start_kind or ("table" if self.has_table else None)
            self.chunks.append(ChunkText(len(self.chunks), body, page, self.label, section, self.page_end,
                                         clause or (self.inside[0] if self.inside else None), clauses,
                                         spans, self.role, kind))
        self.carry = tail_at_word(body, self.overlap) if keep_tail else ""
        pieces = carried(self.carry, len(body) - len(self.carry), spans) if self.carry else []
        self.parts = [text for text, _ in pieces]
        self.where = [where for _, where in pieces]
        self.has_body = self.has_table = False
        self.inside = []
        self.start = (pieces[0][1][0], self.section, pieces[0][1][1]) if pieces else None
        self.start_kind = self.kind

    def break_before_table(self, previous: Block | None) -> None:
        """Start a new chunk for a table, taking its caption («Таблица 3 — …», the heading just before it)
        along: a table's number and name belong with its rows."""
        caption = None
        if previous is not None and previous.kind == "title" and len(self.parts) > 1 and \
                self.parts[-1] == previous.text:
            caption = self.parts.pop(), self.where.pop()
            moved = bool(self.inside) and self.inside[-1] == caption[1][1]
            if moved:
                self.inside.pop()
        self.flush(keep_tail=False)
        if caption is not None:
            (text, where), self.start = caption, (caption[1][0], self.section, caption[1][1])
            self.parts.append(text)
            self.where.append(where)
            if moved and where[1]:
                self.inside.append(where[1])

    def add(self, block: Block, previous: Block | None) -> None:
        if block.page_label != self.label or block.role != self.role:
            self.flush(keep_tail=False)
            self.label, self.role = block.page_label, block.role
        # a contents or imprint page names clauses and headings it does not hold: it never sets them
        body = block.role is None
        clause = clause_of(block, self.flat) if body else None
        kind, kind_number = next_kind(self.kind, self.kind_number, block.text, block.kind == "title") if body else \
            (self.kind, self.kind_number)
        if kind != self.kind and self.parts:
            self.flush(keep_tail=False)  # a section of another kind (the scope after the foreword) starts a chunk
        elif (block.kind == "title" or clause) and self.has_body and self.length >= self.size // 2:
            self.flush(keep_tail=False)
        elif block.kind == "table" and self.has_body and self.length + len(block.text) > self.size:
            self.break_before_table(previous)  # a table (piece) that does not fit starts a chunk: rows stay whole
        self.kind, self.kind_number = kind, kind_number
        if block.kind == "title" and body:
            joined = previous is not None and previous.kind == "title" and previous.page == block.page
            self.section = f"{self.section} {block.text}" if joined and self.section else block.text
        self.clause = clause or self.clause
        text, position, first = block.text, 0, True
        while position < len(text):
            piece, position = take(text, position, self.size - self.length)
            if not piece:  # no room left in this chunk: continue in the next, with the overlap
                self.flush(keep_tail=True)
                piece, position = take(text, position, self.size - self.length, hard=True)
            if self.start is None:
                self.start, self.start_kind = (block.page, self.section, self.clause), self.kind
            if first and clause:
                self.inside.append(clause)
            self.parts.append(piece)
            self.where.append((block.page, self.clause))
            self.page_end, first = block.page, False
            self.has_body = self.has_body or block.kind != "title"
            self.has_table = self.has_table or block.kind == "table"


def carried(carry: str, at: int, spans: tuple[tuple[int, int, str | None], ...],
            ) -> list[tuple[str, tuple[int, str | None]]]:
    """The overlap a chunk carries into the next (``carry``: the body's tail from offset ``at``) as pieces with
    their own page and clause: a tail that crosses a page break keeps its first lines on their page
    (labelled by the later page, a passage quoting them cited the wrong one)."""
    in_effect = [(page, clause) for offset, page, clause in spans if offset <= at] or [(spans[0][1], spans[0][2])]
    pieces, start, where = [], 0, in_effect[-1]
    for offset, page, clause in spans:
        if offset <= at:
            continue
        cut = carry.rfind("\n", start, offset - at)  # parts are joined by a newline: the change starts after it
        if cut < start:
            continue
        pieces.append((carry[start:cut], where))
        start, where = cut + 1, (page, clause)
    pieces.append((carry[start:], where))
    return [(text, place) for text, place in pieces if text.strip()]


def spans_of(parts: list[str], where: list[tuple[int, str | None]]) -> tuple[tuple[int, int, str | None], ...]:
    """Where, in ``"\\n".join(parts).strip()`` (the chunk's text), the page or the clause in effect changes."""
    joined = "\n".join(parts)
    lead = len(joined) - len(joined.lstrip())
    spans: list[tuple[int, int, str | None]] = []
    offset = 0
    for part, (page, clause) in zip(parts, where, strict=True):
        start = max(0, offset + len(part) - len(part.lstrip()) - lead)
        if part.strip() and (not spans or spans[-1][1:] != (page, clause)):
            spans.append((start, page, clause))
        offset += len(part) + 1
    return tuple(spans)


def take(text: str, start: int, room: int, hard: bool = False) -> tuple[str, int]:
    """The piece of ``text`` from ``start`` that fits in ``room`` characters, cut at a space, and where
    the rest begins. Without ``hard``, ("", start) when no space falls in the second half of the room
    (the caller starts a new chunk instead); with it, a cut inside a word when there is no space at all.
    Only the piece is copied, so a 50 MB single-line file is linear work."""
    while start < len(text) and text[start] == " ":
        start += 1
    if len(text) - start + 1 <= room:
        return text[start:].rstrip(), len(text)
    room = max(room, 40) if hard else room
    cut = text.rfind(" ", start + room // 2, start + room) if room >= 40 else -1
    if cut < 0:
        return (text[start:start + room], start + room) if hard else ("", start)
    return text[start:cut].rstrip(), cut + 1


#: a table's piece leaves this share of a chunk to the text before it in the same chunk
TABLE_SHARE = 0.8


def table_pieces(block: Block, size: int) -> list[Block]:
    """A table longer than a chunk as pieces of whole rows, each after the first led by the table's header
    row: every chunk of a long table says what its columns are (a cell's number means nothing without its
    column). A table that fits, or whose header alone would fill a piece, is left whole."""
    rows = block.text.split("\n")
    room = int(size * TABLE_SHARE)
    header = rows[0]
    if len(block.text) <= room or len(rows) < 3 or len(header) > room // 3:
        return [block]
    pieces: list[list[str]] = [[header]]
    length = len(header) + 1  # of the piece being filled
    for row in rows[1:]:
        if len(pieces[-1]) > 1 and length + len(row) > room:
            pieces.append([header])
            length = len(header) + 1
        pieces[-1].append(row)
        length += len(row) + 1
    return [Block("\n".join(piece), block.page, "table", block.page_label, block.role) for piece in pieces]


def chunk_blocks(blocks: list[Block], size: int = 1000, overlap: int = 150) -> list[ChunkText]:
    """Chunks of at most about ``size`` characters (plus the carried overlap), in document order; a long
    table's pieces each carry its header row."""
    chunker = _Chunker(size, overlap, flat_numbered(blocks))
    previous = None
    for block in (piece for b in blocks for piece in (table_pieces(b, size) if b.kind == "table" else [b])):
        chunker.add(block, previous)
        previous = block
    chunker.flush(keep_tail=False)
    return chunker.chunks
