"""What every parser returns: blocks of text with page numbers, independent of the format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

BlockKind = Literal["title", "text", "table"]
#: a page that is not the document's content: its contents listing, or a cover or imprint page
PageRole = Literal["contents", "imprint"]
#: how much raw text of the first pages a parser keeps for the title (``ParsedDocument.head``)
HEAD_CHARS = 12_000
#: pages the head holds: a cover and a publisher's page can come before the title page
HEAD_PAGES = 2


@dataclass(frozen=True)
class Block:
    """A paragraph, heading or table (as readable text) on one page."""

    text: str
    page: int
    kind: BlockKind = "text"
    page_label: str | None = None
    #: set on every block of a contents, cover or imprint page (kept, never shown as a search passage)
    role: PageRole | None = None


@dataclass
class ParsedDocument:
    blocks: list[Block]
    page_count: int
    parser: str
    title: str | None = None
    ocr_pages: int = 0
    warnings: list[str] = field(default_factory=list)
    #: raw text of the first pages, for the title (running headers still in place)
    head: str = ""
    #: «ГОСТ 10180-2012», «СП 63.13330.2018» when the document has one
    designation: str | None = None
    #: the designations it cites, as cited («СП 63.13330», «ГОСТ 10180-2012»), its own family left out
    cites: list[str] = field(default_factory=list)
    #: the names its «Нормативные ссылки» section gives the documents it cites (designation → name)
    cited_names: dict[str, str] = field(default_factory=dict)
    #: the editions it replaces («Взамен …», the СНиП a СП is the актуализированная редакция of)
    replaces: list[str] = field(default_factory=list)
    #: its status as its first pages state it: «Дата введения» (ISO), «Изменение № N», «Утратил силу …»
    introduced: str | None = None
    amendments: list[str] = field(default_factory=list)
    withdrawn: str | None = None
    #: pages (1-based) neither the text layer, a repair nor OCR could read as language: left out, reported
    unread_pages: list[int] = field(default_factory=list)
    #: pages whose broken text layer was repaired (cp1251 read as Latin-1, a shifted alphabet)
    repaired_pages: int = 0
