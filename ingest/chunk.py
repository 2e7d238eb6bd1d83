"""Blocks → chunks that stay within one page and one section, sized for the embedder, with overlap.

A heading starts a new chunk and becomes the section title of the chunks after it; a page change
starts a new chunk; a chunk that fills up continues into the next one with ``overlap`` characters of
its tail (cut at a word boundary), so a sentence split across chunks is still found whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.parse.model import Block


@dataclass(frozen=True)
class ChunkText:
    index: int
    text: str
    page: int
    page_label: str | None
    section_title: str | None


def tail_at_word(text: str, size: int) -> str:
    """The last ``size`` characters of ``text``, widened to start at a word boundary."""
    if size <= 0 or not text:
        return ""
    if len(text) <= size:
        return text
    cut = text.rfind(" ", 0, len(text) - size)
    return text[cut + 1:] if cut >= 0 else text[-size:]


def split_long(text: str, size: int) -> list[str]:
    """Pieces of at most ``size`` characters, cut at spaces where possible; linear in the text's
    length (a 50 MB single-line file is one pass, not one copy of the rest per piece)."""
    pieces: list[str] = []
    start, end = 0, len(text)
    while end - start > size:
        cut = text.rfind(" ", start + size // 2, start + size)
        cut = cut if cut > start else start + size
        if piece := text[start:cut].strip():
            pieces.append(piece)
        start = cut
        while start < end and text[start] == " ":
            start += 1
    rest = text[start:].strip()
    return pieces + ([rest] if rest else [])


class _Chunker:
    def __init__(self, size: int, overlap: int) -> None:
        self.size, self.overlap = size, min(overlap, size // 2)
        self.chunks: list[ChunkText] = []
        self.parts: list[str] = []
        self.page: int = 1
        self.label: str | None = None
        self.section: str | None = None
        self.carry = ""
        self.has_body = False

    @property
    def length(self) -> int:
        return sum(len(p) + 1 for p in self.parts)

    def flush(self, keep_tail: bool) -> None:
        body = "\n".join(self.parts).strip()
        if body and body != self.carry.strip():
            self.chunks.append(ChunkText(len(self.chunks), body, self.page, self.label, self.section))
        self.carry = tail_at_word(body, self.overlap) if keep_tail else ""
        self.parts = [self.carry] if self.carry else []
        self.has_body = False

    def add(self, block: Block, previous: Block | None) -> None:
        if block.page != self.page or block.page_label != self.label:
            self.flush(keep_tail=False)
            self.page, self.label = block.page, block.page_label
        if block.kind == "title":
            joined = previous is not None and previous.kind == "title" and previous.page == block.page
            if self.has_body:
                self.flush(keep_tail=False)
            self.section = f"{self.section} {block.text}" if joined and self.section else block.text
        for piece in split_long(block.text, self.size):
            if self.length + len(piece) > self.size:
                self.flush(keep_tail=True)
            self.parts.append(piece)
            self.has_body = self.has_body or block.kind != "title"


def chunk_blocks(blocks: list[Block], size: int = 1000, overlap: int = 150) -> list[ChunkText]:
    """Chunks of at most about ``size`` characters (plus the carried overlap), in document order."""
    chunker = _Chunker(size, overlap)
    previous = None
    for block in blocks:
        chunker.add(block, previous)
        previous = block
    chunker.flush(keep_tail=False)
    return chunker.chunks
