"""What runs in a parse worker process: limits, then parse and chunk one file.

Workers are separate processes so a hostile file (zip bomb, endless sheet, parser hang) is stopped
by the per-file time cap (the pool kills the worker) and the memory cap (RLIMIT_AS: allocation
fails with MemoryError) without taking the run down. They are started by a fork server, never forked
from the ingest process itself: the ingest process runs threaded BLAS (the embedder's fit) and a
fork taken while another thread holds a lock inherits that lock forever. A worker dies with its
parent (``PR_SET_PDEATHSIG``), so a killed ingest leaves no orphan parser behind.
"""

from __future__ import annotations

import ctypes
import logging
import os
import resource
import shutil
import signal
import stat
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from ingest import heartbeat
from ingest.chunk import ChunkText, chunk_blocks
from ingest.parse import ParseOptions, parse_file
from ingest.parse.model import ParsedDocument
from ingest.place import open_planned, readable_path
from service.errors import ParseError
from service.files import hash_descriptor

_PR_SET_PDEATHSIG = 1
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OMP_THREAD_LIMIT": "1", "OPENBLAS_NUM_THREADS": "1",
                   "MKL_NUM_THREADS": "1", "DO_NOT_TRACK": "1", "UNSTRUCTURED_DISABLE_NOTICE": "1",
                   "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@dataclass(frozen=True)
class ParseJob:
    path: str
    options: ParseOptions
    chunk_chars: int
    chunk_overlap: int
    content_hash: str = ""
    #: the folder the walk started from and (device, inode, link count) of the file it found: read only that
    #: file, reached from ``root`` through no link (None: a file given without a walk, read by its path)
    root: str | None = None
    identity: tuple[int, int, int] | None = None


@dataclass
class ParseResult:
    parsed: ParsedDocument
    chunks: list[ChunkText]
    seconds: float


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies; elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


#: each worker's private temporary folder (tesseract's images and outputs), named after its pid
TEMP_PREFIX = "stroidok-parse-"


def init_worker(memory_mb: int, beats: Any = None) -> None:
    """Die with the parent, cap the worker's memory, keep its libraries single-threaded and quiet; lead a
    process group of its own with a private temporary folder, so stopping the worker (a file past its
    deadline) also ends the tesseract it runs and removes its files; send progress beats to ``beats``."""
    die_with_parent()
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    os.environ.update(SINGLE_THREADED)
    heartbeat.install(beats)
    if sys.platform.startswith("linux"):
        os.setpgid(0, 0)
        tempfile.tempdir = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-")
        signal.signal(signal.SIGTERM, _stop_group)
    if not os.environ.get("STROIDOK_VERBOSE"):  # library warnings per file only with --verbose
        warnings.filterwarnings("ignore")
        logging.getLogger("unstructured").setLevel(logging.ERROR)


def _stop_group(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (the pool stops a worker): remove the private temporary folder, then end the whole group
    (this worker and any tesseract it started)."""
    if tempfile.tempdir and Path(tempfile.tempdir).name.startswith(TEMP_PREFIX):
        shutil.rmtree(tempfile.tempdir, ignore_errors=True)
    os.killpg(os.getpgrp(), signal.SIGKILL)


def sweep_worker_temp(root: Path | None = None) -> int:
    """Remove the private temporary folders of workers that no longer run (killed before they could); how many.
    Only real folders this user owns are removed: a link named like one is neither followed nor counted."""
    removed = 0
    for folder in Path(root or tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*"):
        pid = folder.name[len(TEMP_PREFIX):].split("-", 1)[0]
        try:
            info = folder.lstat()
        except OSError:
            continue
        ours = stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and ours:
            shutil.rmtree(folder, ignore_errors=True)
            removed += not folder.exists()
    return removed


def run_job(job: ParseJob) -> ParseResult:
    """Parse and chunk one file: the very file the walk found (``ingest.place``: another file there, or a link on
    its way, fails it); a file whose bytes changed while it was read is refused (its old or new version is
    indexed by the next run, never a mix)."""
    began = time.perf_counter()
    path = Path(job.path)
    heartbeat.start(job.path)
    fd = open_planned(path, Path(job.root or path.parent), job.identity)
    try:
        with readable_path(fd, path) as readable:
            parsed = parse_file(readable, job.options)
        read_hash = hash_descriptor(fd) if job.content_hash else ""
    finally:
        os.close(fd)
    chunks = chunk_blocks(parsed.blocks, job.chunk_chars, job.chunk_overlap)
    if job.content_hash and read_hash != job.content_hash.split("+", 1)[0]:
        raise ParseError("the file changed while it was being read; the next run indexes its new version")
    return ParseResult(parsed, chunks, time.perf_counter() - began)
