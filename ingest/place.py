"""Where a file really is: reached from its root one folder at a time without following a link at any
component (``O_NOFOLLOW`` beneath a directory descriptor), and checked to be the very file the walk found
(device, inode and link count). A folder swapped for a link between the walk and the read, a file replaced by
another, or a file given another name (a hard link) since the walk fails that file (``FileMoved``) instead of
publishing what the link points to under the walked path's groups.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from service.errors import FileMoved
from service.files import open_beneath

#: a file's identity on its file system as the walk found it: (device, inode, link count)
Identity = tuple[int, int, int]


def identity_of(st: os.stat_result) -> Identity:
    return st.st_dev, st.st_ino, st.st_nlink


def open_in_place(path: Path, root: Path, identity: Identity) -> int:
    """A descriptor of the regular file the walk found at ``path`` below ``root``; ``FileMoved`` when a link
    stands on the way or another file (or no regular file) is there now."""
    try:
        fd = open_beneath(root, path.relative_to(root))
    except OSError as exc:
        raise FileMoved("the file or a folder on its way was replaced (by a link, or removed) after the walk: "
                        f"not read ({(exc.strerror or type(exc).__name__).lower()})") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or identity_of(st)[:2] != identity[:2]:
        os.close(fd)
        raise FileMoved("another file stands at this place than the one the walk found: not read")
    if st.st_nlink != identity[2]:
        os.close(fd)
        raise FileMoved(f"the file has {st.st_nlink} names now, {identity[2]} when the walk found it (a hard link "
                        "made or removed since): not read")
    return fd


def open_regular(path: Path) -> int:
    """A descriptor of the regular file at ``path`` (links followed), opened non-blocking and checked, so a FIFO
    or device there is refused (``OSError``) instead of blocking the run."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return fd


def open_planned(path: Path, root: Path, identity: Identity | None) -> int:
    """The file a plan names: where the walk found it (``open_in_place``), or, described without a walk (no
    identity), the regular file at its path."""
    return open_regular(path) if identity is None else open_in_place(path, root, identity)


def in_place(path: Path, root: Path) -> bool:
    """A regular file is at ``path``, reached from ``root`` (a folder, or the file itself) through no symbolic
    link: an indexed file whose place is now a link (or behind one) is gone, whatever the link points to."""
    folder = root if path != root else root.parent
    try:
        fd = open_beneath(folder, path.relative_to(folder))
    except (OSError, ValueError, FileMoved):
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


@contextmanager
def readable_path(fd: int, path: Path) -> Iterator[Path]:
    """A path that opens the file behind ``fd`` (and only it), under ``path``'s own name when that is valid UTF-8
    (some parsers read the name or its suffix): a link in a private temporary folder to this process's descriptor
    (``/proc/PID/fd/N``, which a converter the parser starts can open too; ``/dev/fd/N`` elsewhere)."""

    try:
        path.name.encode("utf-8")
        name = path.name
    except UnicodeEncodeError:
        name = f"document{path.suffix.encode('ascii', 'ignore').decode() or '.bin'}"
    with tempfile.TemporaryDirectory(prefix="stroidok-") as folder:
        link = Path(folder) / name
        link.symlink_to(f"/proc/{os.getpid()}/fd/{fd}" if sys.platform.startswith("linux") else f"/dev/fd/{fd}")
        yield link
