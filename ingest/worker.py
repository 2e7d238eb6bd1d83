"""What runs in a parse worker process: limits, then parse and chunk one file.

Workers are separate processes so a hostile file (zip bomb, endless sheet, parser hang) is stopped
by the per-file time cap (the pool kills the worker) and the memory cap (RLIMIT_DATA: allocation
fails with MemoryError) without taking the run down.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

from ingest.chunk import ChunkText, chunk_blocks
from ingest.parse import ParseOptions, parse_file
from ingest.parse.model import ParsedDocument


@dataclass(frozen=True)
class ParseJob:
    path: str
    options: ParseOptions
    chunk_chars: int
    chunk_overlap: int


@dataclass
class ParseResult:
    parsed: ParsedDocument
    chunks: list[ChunkText]
    seconds: float


def init_worker(memory_mb: int) -> None:
    """Cap the worker's data segment and keep its libraries single-threaded and quiet."""
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    os.environ.update({"OMP_NUM_THREADS": "1", "OMP_THREAD_LIMIT": "1", "DO_NOT_TRACK": "1",
                       "UNSTRUCTURED_DISABLE_NOTICE": "1", "HF_HUB_OFFLINE": "1"})


def run_job(job: ParseJob) -> ParseResult:
    began = time.perf_counter()
    parsed = parse_file(Path(job.path), job.options)
    chunks = chunk_blocks(parsed.blocks, job.chunk_chars, job.chunk_overlap)
    return ParseResult(parsed, chunks, time.perf_counter() - began)
