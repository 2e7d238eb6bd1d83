"""The managed node's state directory, written by root without following what its account could plant.

As root, ``engine up`` runs the node as an unprivileged account that owns the state directory, so that account
can put links (or hard links) in it. Everything root does there goes through these functions: ownership is
handed over without following a link or descending into a linked folder, and the console log and pid file are
opened relative to a folder opened without following links, never through a link, and refused when they are
not plain files of their own. The directories are private (0700): no other local account reads the data.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from loguru import logger

from service.errors import EngineError

PRIVATE = 0o700


def private_dir(path: Path) -> None:
    """``path`` as a private folder (created 0700, tightened to 0700), refused when it is a link."""
    path.mkdir(mode=PRIVATE, parents=True, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise EngineError(f"{path} is not a folder (a link?); remove it and run again")
    os.chmod(path, PRIVATE)


def hand_over(root: Path, uid: int, gid: int) -> int:
    """Give ``root`` and everything below it to ``uid``/``gid``: links are never followed nor their folders
    entered, and a file with other links to it (it may be anyone's file) is left as it is. How many changed."""
    changed = 0
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [".", *dirnames, *filenames]:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or (st.st_uid, st.st_gid) == (uid, gid):
                continue
            if not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1:
                logger.warning("{} has other hard links: its owner is left as it is", path)
                continue
            os.chown(path, uid, gid, follow_symlinks=False)
            changed += 1
    return changed


def _open_dir(path: Path) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise EngineError(f"{path} cannot be opened as a folder ({exc.strerror}); is it a link?") from None


def open_in(folder: Path, name: str, flags: int, mode: int = 0o600) -> int:
    """A file descriptor for ``folder/name`` opened without following a link at either level; a file that is not
    a plain file with a single link is refused."""
    directory = _open_dir(folder)
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=directory)
    except OSError as exc:
        raise EngineError(f"{folder / name} cannot be opened safely ({exc.strerror}); is it a link?") from None
    finally:
        os.close(directory)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        raise EngineError(f"{folder / name} is not a plain file of its own (a hard link?); remove it and run again")
    return fd


def append_log(path: Path) -> int:
    """The console log, opened for appending."""
    return open_in(path.parent, path.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)


def write_pid(path: Path, pid: int) -> None:
    """The pid file written anew (whatever stood at its name is removed first, a link included, not followed)."""
    directory = _open_dir(path.parent)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.name, dir_fd=directory)
    finally:
        os.close(directory)
    fd = open_in(path.parent, path.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w") as handle:
        handle.write(str(pid))
