"""A stuck engine (it accepts connections and never answers) turns into INGEST_STALLED with the stage
and exit code 3 after the stall limit, not a silent wait."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support.crash import REPO, write_corpus


def silent_server() -> tuple[socket.socket, int]:
    """A loopback listener that accepts and holds connections without ever replying."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return listener, listener.getsockname()[1]


def test_a_stuck_engine_call_ends_the_run_with_ingest_stalled(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs", 2)
    listener, port = silent_server()
    env = {**os.environ, "OPENSEARCH_URL": f"http://127.0.0.1:{port}", "STROIDOK_INDEX_ALIAS": "stuck",
           "STROIDOK_INGEST_STALL_TIMEOUT_S": "3", "STROIDOK_OPENSEARCH_TIMEOUT_S": "600", "DO_NOT_TRACK": "1"}
    began = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "service.cli", "ingest", str(root)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)
    finally:
        listener.close()
    assert done.returncode == 3, done.stderr[-2000:]
    assert "INGEST_STALLED: no progress for" in done.stderr and "preparing the index" in done.stderr
    assert time.monotonic() - began < 60
