"""Walk the given roots and describe each candidate file (no parsing here).

The walk is defensive, because archives are hostile: it descends through directory descriptors (``os.fwalk``), so a
folder swapped for a link while it runs is never entered; each file is described by what ``lstat`` says of it there
(its device and inode are checked again when it is read, ``ingest.place``); a symbolic link to a file is taken only
where its target would be taken by itself (inside an ingested root, not hidden, not excluded; same access groups,
checked by the plan) and then only as another name of that target, never read through; a file with several
names (hard links) is refused by the plan unless the run finds every name under the same groups; FIFOs,
sockets and devices are never opened, an unreadable directory or file becomes a reported ``Rejected`` entry instead of
stopping the run, and a name that is not valid UTF-8 (cp1251 names from Windows zips) gets a printable display form
while its id comes from the raw bytes.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ingest.parse import SUPPORTED_TYPES, file_type
from ingest.place import identity_of, open_regular
from service.files import hash_descriptor

_UNPRINTABLE = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}


@dataclass(frozen=True)
class SourceFile:
    path: Path
    root: Path
    size: int
    modified: datetime
    created: datetime
    #: (device, inode, link count) of the file the walk found at ``path``: what reading it checks (None: not
    #: from a walk)
    identity: tuple[int, int, int] | None = None
    #: ``path`` is a symbolic link (taken only as another name of its target, never read through)
    link: bool = False

    @property
    def names(self) -> int:
        """How many names (hard links) the file has on its file system, as the walk found it."""
        return self.identity[2] if self.identity is not None else 1

    @property
    def relative(self) -> str:
        return self.path.relative_to(self.root).as_posix() if self.path != self.root else self.path.name

    @property
    def file_type(self) -> str:
        return file_type(self.path)

    @property
    def doc_id(self) -> str:
        """The id of the place the walk found (a link: its target's, so it is known as another name of it)."""
        return document_id(self.path) if self.link else place_id(self.path)

    @property
    def display(self) -> str:
        """The path as text that can be stored, logged and printed."""
        return display_path(self.path)


@dataclass(frozen=True)
class Rejected:
    """A path the walk found but will not ingest, with the reason (reported as a failed file)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Shard:
    """The K-th of N stable partitions of an archive (``--shard K/N``): N machines, one cluster.

    A file belongs to the partition its document id falls in, so every machine that sees the archive at
    the same absolute path agrees on the split without talking to the others, and each deletes only the
    vanished files of its own partition."""

    number: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"K/N"`` with 1 ≤ K ≤ N ≤ 4096."""
        number, slash, count = text.strip().partition("/")
        if not (slash and number.isdigit() and count.isdigit() and 1 <= int(number) <= int(count) <= 4096):
            raise ValueError(f"shard must be K/N with 1 ≤ K ≤ N ≤ 4096, got {text!r}")
        return cls(int(number), int(count))

    def holds(self, key: str) -> bool:
        """``key``: a document id, or a path text for a file that has none (a rejected one)."""
        digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.number - 1

    def holds_file(self, item: SourceFile | Rejected) -> bool:
        return self.holds(item.doc_id if isinstance(item, SourceFile) else item.path)


def document_id(path: Path) -> str:
    """Stable id of a document: derived from its absolute path (raw bytes), never exposing it."""
    return place_id(Path(path).resolve())


def place_id(path: Path) -> str:
    """The id of a document at ``path`` as given (absolute, no link resolved): the walk's own place for a file."""
    return hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()[:20]


def display_path(path: Path | str) -> str:
    """A printable, UTF-8-safe form of a path: undecodable names are read as cp1251 when that gives
    letters (Windows archives), else escaped; control characters are escaped so a name cannot drive
    the terminal."""
    raw = os.fsencode(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        cp = raw.decode("cp1251", errors="replace")
        text = cp if "\ufffd" not in cp else raw.decode("utf-8", errors="backslashreplace")
    return unicodedata.normalize("NFC", text).translate(_UNPRINTABLE)


def content_hash(path: Path) -> str:
    """SHA-256 of a regular file's bytes (a FIFO or device there is refused, ``ingest.place.open_regular``)."""
    fd = open_regular(path)
    try:
        return hash_descriptor(fd)
    finally:
        os.close(fd)


def matches(relative: str, include: list[str], exclude: list[str]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    hit = lambda pattern: fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern)  # noqa: E731
    return (not include or any(map(hit, include))) and not any(map(hit, exclude))


def _stat(path: Path, root: Path, st: os.stat_result, link: bool = False) -> SourceFile:
    created = getattr(st, "st_birthtime", None) or min(st.st_ctime, st.st_mtime)
    return SourceFile(path, root, st.st_size, datetime.fromtimestamp(st.st_mtime, UTC),
                      datetime.fromtimestamp(created, UTC), identity_of(st), link)


def os_reason(exc: OSError) -> str:
    return f"unreadable: {(exc.strerror or type(exc).__name__).lower()}"


def is_hidden(relative: str) -> bool:
    """A path below a root that the walk never enters or takes: a hidden folder or file, an Office lock file."""
    parts = relative.split("/")
    return any(part.startswith(".") for part in parts) or parts[-1].startswith("~$")


def link_refusal(target: Path, roots: tuple[Path, ...], include: list[str], exclude: list[str]) -> str | None:
    """Why a symbolic link to ``target`` is not followed, or None: a link is taken only where its target would
    be taken by itself — inside an ingested folder, not hidden, matching ``--include``/``--exclude`` (the
    access groups are compared by the plan, which has the rules)."""
    within = [r for r in roots if target == r or target.is_relative_to(r)]
    if not within:
        return "symbolic link pointing outside the ingested folders (not followed)"
    relative = target.relative_to(within[0]).as_posix() if target != within[0] else target.name
    if is_hidden(relative):
        return "symbolic link to a hidden file or folder (not followed)"
    if not matches(relative, include, exclude):
        return "symbolic link to a file that --include/--exclude leave out (not followed)"
    if file_type(target) not in SUPPORTED_TYPES:
        return "symbolic link to a file of another type (not followed)"
    return None


def check_candidate(path: Path, root: Path, roots: tuple[Path, ...], include: list[str] | None = None,
                    exclude: list[str] | None = None, dir_fd: int | None = None) -> SourceFile | Rejected:
    """Describe one candidate file (``dir_fd``: its folder as the walk opened it), or say why it is not ingested."""
    shown = display_path(path)
    here: Path | str = path.name if dir_fd is not None else path
    try:
        st = os.stat(here, dir_fd=dir_fd, follow_symlinks=False)
        link = stat.S_ISLNK(st.st_mode)
        if link:
            st = path.stat()  # a dangling link or a loop: OSError, reported
            refusal = link_refusal(path.resolve(), roots, include or [], exclude or [])
            if refusal is not None:
                return Rejected(shown, refusal)
        if not stat.S_ISREG(st.st_mode):
            return Rejected(shown, "not a regular file (FIFO, socket or device): not opened")
        if not (os.access(path, os.R_OK) if link else os.access(here, os.R_OK, dir_fd=dir_fd)):
            return Rejected(shown, "unreadable: permission denied")
    except OSError as exc:
        return Rejected(shown, os_reason(exc))
    return _stat(path, root, st, link)


def discover(roots: list[Path], include: list[str], exclude: list[str]) -> Iterator[SourceFile | Rejected]:
    """Supported files under each root (or the root itself when it is a file), sorted, hidden ones
    skipped; what cannot be ingested comes back as ``Rejected`` with the reason."""
    resolved = tuple(r.resolve() for r in roots)
    for root in resolved:
        if not root.is_dir():
            yield check_candidate(root, root.parent, resolved)
            continue
        problems: list[OSError] = []
        for directory, dirnames, filenames, folder in os.fwalk(root, onerror=problems.append):
            while problems:
                failed = problems.pop()
                yield Rejected(display_path(failed.filename or directory), f"folder {os_reason(failed)}")
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                path = Path(directory, name)
                relative = path.relative_to(root).as_posix()
                if name.startswith((".", "~$")) or file_type(path) not in SUPPORTED_TYPES:
                    continue
                if matches(relative, include, exclude):
                    yield check_candidate(path, root, resolved, include, exclude, folder)
        for failed in problems:
            yield Rejected(display_path(failed.filename or root), f"folder {os_reason(failed)}")
