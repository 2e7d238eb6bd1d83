"""An indexed file read again by the service (a page rendered for an agent): reached from its root one folder
at a time without following a link at any component (``O_NOFOLLOW`` beneath a directory descriptor), and its
bytes hashed to check it is still the content indexed. The ingest opens files the same way (``ingest/place.py``).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import time
from pathlib import Path

from service.errors import FileMoved

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_beneath(root: Path, relative: Path) -> int:
    """A descriptor of ``root/relative`` opened for reading, no component below ``root`` followed as a link
    (``ELOOP``/``ENOTDIR`` where one is)."""
    parts = relative.parts
    if not parts or any(part in ("", ".", "..") for part in parts):
        raise FileMoved(f"not a path below its folder: {relative}")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], _FILE, dir_fd=folder)
    finally:
        os.close(folder)


def hash_descriptor(fd: int, block: int = 1 << 20, limit: int | None = None, seconds: float | None = None) -> str:
    """SHA-256 of an open file's bytes from its start (the descriptor's offset is left where reading stopped): at
    most ``limit`` bytes of it, and ``TimeoutError`` once reading takes over ``seconds``."""
    os.lseek(fd, 0, os.SEEK_SET)
    digest = hashlib.sha256()
    remaining = limit
    deadline = time.monotonic() + seconds if seconds is not None else None
    while remaining is None or remaining > 0:
        chunk = os.read(fd, block if remaining is None else min(block, remaining))
        if not chunk:
            break
        digest.update(chunk)
        if remaining is not None:
            remaining -= len(chunk)
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"reading the file took over {seconds:.0f} s")
    return digest.hexdigest()


def write_replacing(path: Path, data: bytes) -> None:
    """``data`` as the regular file ``path``: written to a new file beside it, then renamed into place, so a link
    standing at ``path`` is replaced, never written through; a folder, FIFO, socket or device there is refused
    (``IsADirectoryError`` / ``OSError``), as is a folder where no file can be created (``/proc``)."""
    try:
        there = os.lstat(path)
    except FileNotFoundError:
        there = None
    if there is not None and not (stat.S_ISREG(there.st_mode) or stat.S_ISLNK(there.st_mode)):
        raise OSError(f"{path} is not a regular file (a folder, FIFO, socket or device): not written")
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name[:100]}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
