"""Walk the given roots and describe each candidate file (no parsing here)."""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ingest.parse import SUPPORTED_TYPES, file_type


@dataclass(frozen=True)
class SourceFile:
    path: Path
    root: Path
    size: int
    modified: datetime
    created: datetime

    @property
    def relative(self) -> str:
        return self.path.relative_to(self.root).as_posix() if self.path != self.root else self.path.name

    @property
    def file_type(self) -> str:
        return file_type(self.path)

    @property
    def doc_id(self) -> str:
        return document_id(self.path)


def document_id(path: Path) -> str:
    """Stable id of a document: derived from its absolute path, never exposing it."""
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:20]


def content_hash(path: Path, block: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(block):
            digest.update(chunk)
    return digest.hexdigest()


def matches(relative: str, include: list[str], exclude: list[str]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    hit = lambda pattern: fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern)  # noqa: E731
    return (not include or any(map(hit, include))) and not any(map(hit, exclude))


def _stat(path: Path, root: Path) -> SourceFile:
    st = path.stat()
    created = getattr(st, "st_birthtime", None) or min(st.st_ctime, st.st_mtime)
    return SourceFile(path, root, st.st_size, datetime.fromtimestamp(st.st_mtime, UTC),
                      datetime.fromtimestamp(created, UTC))


def discover(roots: list[Path], include: list[str], exclude: list[str]) -> Iterator[SourceFile]:
    """Supported files under each root (or the root itself when it is a file), sorted, hidden ones skipped."""
    for root in roots:
        root = root.resolve()
        if root.is_file():
            yield _stat(root, root.parent)
            continue
        for directory, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                path = Path(directory, name)
                relative = path.relative_to(root).as_posix()
                if name.startswith((".", "~$")) or file_type(path) not in SUPPORTED_TYPES:
                    continue
                if matches(relative, include, exclude) and path.is_file():
                    yield _stat(path, root)
