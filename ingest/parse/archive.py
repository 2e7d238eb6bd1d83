"""Checks on zip-based office files (DOCX, XLSX, PPTX, ODT, EPUB) before any parser expands them.

A 1 MB DOCX can hold gigabytes of XML (a zip bomb), and XML can declare entities that expand
exponentially (billion laughs) or read local files (XXE). Office formats never need a DTD, so a file
whose XML declares one is refused, as is an archive whose declared sizes or compression ratio are out
of bounds. Only the central directory and the first bytes of each XML member are read here.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from service.errors import ParseError

ZIP_TYPES = {"docx", "xlsx", "pptx", "odt", "ods", "odp", "epub"}
_DTD_RE = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_ROOT_RE = re.compile(rb"<[A-Za-z_]")
_XML_SUFFIXES = (".xml", ".rels", ".opf", ".ncx", ".xhtml", ".html", ".htm")


@dataclass(frozen=True)
class ArchiveLimits:
    max_total_mb: int = 512
    max_member_mb: int = 256
    max_ratio: int = 200
    max_members: int = 10000
    prolog_bytes: int = 1024 * 1024


def check_archive(path: Path, limits: ArchiveLimits = ArchiveLimits()) -> None:
    """Raise ``ParseError`` when the archive is corrupt, too large expanded, too compressed, or its
    XML declares a DTD or entities."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            _check_sizes(members, limits)
            for member in members:
                if member.filename.lower().endswith(_XML_SUFFIXES):
                    _check_prolog(archive, member, limits.prolog_bytes)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
        raise ParseError(f"not a valid {path.suffix.lstrip('.').upper()} file (not a ZIP archive: {exc})") from exc


def _check_sizes(members: list[zipfile.ZipInfo], limits: ArchiveLimits) -> None:
    if len(members) > limits.max_members:
        raise ParseError(f"archive holds {len(members)} parts, over {limits.max_members}")
    total = sum(m.file_size for m in members)
    if total > limits.max_total_mb * 1024 * 1024:
        raise ParseError(f"archive expands to {total // 2**20} MB, over {limits.max_total_mb} MB (zip bomb?)")
    for m in members:
        if m.file_size > limits.max_member_mb * 1024 * 1024:
            raise ParseError(f"part {m.filename} expands to {m.file_size // 2**20} MB, over "
                             f"{limits.max_member_mb} MB (zip bomb?)")
        if m.file_size > 1024 * 1024 and m.file_size > limits.max_ratio * max(m.compress_size, 1):
            raise ParseError(f"part {m.filename} is compressed {m.file_size // max(m.compress_size, 1)}:1, over "
                             f"{limits.max_ratio}:1 (zip bomb?)")


def _check_prolog(archive: zipfile.ZipFile, member: zipfile.ZipInfo, limit: int) -> None:
    """Read the XML prolog (everything before the root element, at most ``limit`` bytes) and refuse
    any DTD or entity declaration in it."""
    head = b""
    with archive.open(member) as handle:
        while len(head) < limit and (block := handle.read(4096)):
            head += block
            if (root := _ROOT_RE.search(head)) is not None:
                head = head[:root.start()]
                break
    if _DTD_RE.search(head):
        raise ParseError(f"part {member.filename} declares a DTD or XML entities; office files never need "
                         "them (entity expansion or external entity attack?)")
