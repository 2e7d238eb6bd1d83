"""Shared plumbing of the crash tests and benchmarks/chaos.py: a corpus, an ingest run as a real CLI
process, and the index state compared after the dust settles."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from opensearchpy import NotFoundError, OpenSearch, TransportError, helpers

from service.errors import StroidokError
from tests.support.documents import REPO
from tests.support.net import wait_until

__all__ = ["REPO", "wait_until"]

SENTENCE = ("Пункт {d}.{p}. Монолитные железобетонные конструкции марки В{p} бетонируют захватками, "
            "контроль прочности бетона выполняют по ГОСТ 18105 в возрасте {d} суток; ")


def write_corpus(root: Path, documents: int, paragraphs: int = 40) -> Path:
    """TXT documents of a few chunks each; the text is deterministic (same corpus, same chunks)."""
    root.mkdir(parents=True, exist_ok=True)
    for d in range(documents):
        text = "\n\n".join(SENTENCE.format(d=d, p=p) * 3 for p in range(paragraphs))
        (root / f"документ-{d:03d}.txt").write_text(text, encoding="utf-8")
    return root


def ingest_env(url: str, alias: str, marker: str = "", **settings: str) -> dict[str, str]:
    env = {**os.environ, "OPENSEARCH_URL": url, "STROIDOK_INDEX_ALIAS": alias, "DO_NOT_TRACK": "1",
           "STROIDOK_INGEST_BATCH_SIZE": "40", "STROIDOK_EMBEDDER_FIT_SAMPLE": "100",
           "STROIDOK_INGEST_WORKERS": "2", **settings}
    if marker:
        env["STROIDOK_TEST_MARKER"] = marker
    return env


def start_ingest(root: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "service.cli", "ingest", str(root)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_ingest_cli(root: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.cli", "ingest", str(root)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def registry_count(client: OpenSearch, alias: str, done_only: bool = True) -> int:
    query = {"query": {"exists": {"field": "content_hash"}}} if done_only else {"query": {"match_all": {}}}
    try:
        return int(client.count(index=f"{alias}-files", body=query)["count"])
    except (NotFoundError, TransportError, StroidokError):  # not created yet, or its shard not yet started
        return 0


def kill_hard(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def marked_processes(marker: str) -> list[int]:
    """Live processes carrying the marker in their environment (the ingest and its workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            status = (entry / "status").read_text()
        except OSError:
            continue
        if f"STROIDOK_TEST_MARKER={marker}".encode() in environ and "State:\tZ" not in status:
            found.append(int(entry.name))
    return found


def chunk_state(client: OpenSearch, alias: str) -> dict[str, str]:
    """chunk id → hash of its text, over everything the index holds (refreshed first)."""
    client.indices.refresh(index=alias)
    return {h["_id"]: h["_source"]["content_hash"]
            for h in helpers.scan(client, index=alias, query={"query": {"match_all": {}}},
                                  _source=["content_hash"])}


def new_marker() -> str:
    return uuid.uuid4().hex


def no_process_marked(marker: str) -> bool:
    """Whether every process carrying ``marker`` has ended."""
    return not marked_processes(marker)


def chunks_per_document(client: OpenSearch, alias: str) -> dict[str, int]:
    """doc id → how many chunks of it the index holds (refreshed first)."""
    client.indices.refresh(index=alias)
    counts: dict[str, int] = {}
    for hit in helpers.scan(client, index=alias, query={"query": {"match_all": {}}}, _source=["doc_id"]):
        counts[hit["_source"]["doc_id"]] = counts.get(hit["_source"]["doc_id"], 0) + 1
    return counts


def registry_chunks(client: OpenSearch, files_index: str) -> dict[str, int]:
    """doc id → chunk count, of every document the registry records as fully written."""
    client.indices.refresh(index=files_index)
    return {h["_source"]["doc_id"]: int(h["_source"]["chunk_count"])
            for h in helpers.scan(client, index=files_index, query={"query": {"exists": {"field": "content_hash"}}})}
