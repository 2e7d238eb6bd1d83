"""Parse workers are never forked from the threaded ingest process (a fork taken while
OpenBLAS threads held a lock hung the ingest for ever)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ingest.pool import worker_context
from tests.support.documents import REPO


def test_workers_come_from_a_fork_server_not_from_this_process() -> None:
    assert worker_context(False).get_start_method() == "forkserver"


def test_fresh_workers_start_while_the_main_thread_runs_threaded_svd() -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    try:
        done = subprocess.run([sys.executable, "-m", "tests.support.forkstress", "forkserver", "60"],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail("worker starts beside threaded SVD hung (the fork race is back)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "60 worker starts" in done.stdout
