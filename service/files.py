"""An indexed file read again by the service (a page rendered for an agent): reached from its root one folder
at a time without following a link at any component (``O_NOFOLLOW`` beneath a directory descriptor), and its
bytes hashed to check it is still the content indexed. The ingest opens files the same way (``ingest/place.py``).
"""

from __future__ import annotations

import hashlib
import os
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


def hash_descriptor(fd: int, block: int = 1 << 20) -> str:
    """SHA-256 of an open file's bytes from its start (the descriptor's offset is left at its end)."""
    os.lseek(fd, 0, os.SEEK_SET)
    digest = hashlib.sha256()
    while chunk := os.read(fd, block):
        digest.update(chunk)
    return digest.hexdigest()
