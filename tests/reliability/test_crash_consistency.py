"""kill -9 of the ingest or of the engine at a random moment, then a rerun, ends in exactly the state
of an uninterrupted run: no lost chunk, no duplicate or stale chunk, no pending registry entry, no
orphan worker, index settings as before, a clear message and a non-zero exit when interrupted."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from service.engine.launcher.process import EngineProcess, running_pid
from service.settings import IndexSettings
from tests.support.crash import (
    chunk_state,
    ingest_env,
    kill_hard,
    marked_processes,
    new_marker,
    registry_count,
    run_ingest_cli,
    start_ingest,
    wait_until,
    write_corpus,
)
from tests.support.engine import drop_index_resources, engine_client, new_alias

pytestmark = pytest.mark.integration
DOCUMENTS = 30


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("crash") / "docs", DOCUMENTS)


@pytest.fixture(scope="module")
def reference(corpus: Path, opensearch_url: str, client: OpenSearch) -> dict[str, str]:
    """The state an uninterrupted run leaves."""
    alias = new_alias()
    done = run_ingest_cli(corpus, ingest_env(opensearch_url, alias))
    assert done.returncode == 0, done.stderr[-2000:]
    state = chunk_state(client, alias)
    drop_index_resources(client, IndexSettings(alias=alias, embedding_dim=300))
    return state


def refresh_interval(client: OpenSearch, alias: str) -> str | None:
    settings = client.indices.get_settings(index=alias)
    value = next(iter(settings.values()))["settings"]["index"].get("refresh_interval")
    return None if value is None else str(value)


@pytest.mark.parametrize("after_files", [1, DOCUMENTS // 2])
def test_ingest_killed_mid_run_then_rerun_equals_an_uninterrupted_run(
        after_files: int, corpus: Path, reference: dict[str, str], opensearch_url: str, client: OpenSearch,
    alias: str) -> None:
    marker = new_marker()
    running = start_ingest(corpus, ingest_env(opensearch_url, alias, marker))
    assert wait_until(lambda: registry_count(client, alias) >= after_files, timeout=300), running.stderr
    kill_hard(running)

    assert wait_until(lambda: not marked_processes(marker), timeout=10), "parse workers outlived the ingest"
    assert refresh_interval(client, alias) == "-1"  # as the template sets it: nothing left to restore
    rerun = run_ingest_cli(corpus, ingest_env(opensearch_url, alias))
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert chunk_state(client, alias) == reference
    assert registry_count(client, alias, done_only=False) == registry_count(client, alias) == DOCUMENTS


def test_sigterm_stops_the_run_with_a_message_and_exit_143(corpus: Path, reference: dict[str, str],
                                                           opensearch_url: str, client: OpenSearch, alias: str) -> None:
    marker = new_marker()
    running = start_ingest(corpus, ingest_env(opensearch_url, alias, marker))
    assert wait_until(lambda: registry_count(client, alias) >= 1, timeout=300)
    running.send_signal(signal.SIGTERM)
    _, stderr = running.communicate(timeout=60)

    assert running.returncode == 128 + signal.SIGTERM
    assert "INTERRUPTED" in stderr and "run the same command again" in stderr
    assert "Traceback" not in stderr
    assert wait_until(lambda: not marked_processes(marker), timeout=10)
    assert run_ingest_cli(corpus, ingest_env(opensearch_url, alias)).returncode == 0
    assert chunk_state(client, alias) == reference


def test_engine_killed_mid_ingest_then_rerun_equals_an_uninterrupted_run(corpus: Path, reference: dict[str, str],
                                                                         own_engine: EngineProcess) -> None:
    url = own_engine.url
    client = engine_client(url, 60)
    alias = "crash-engine"
    running = start_ingest(corpus, ingest_env(url, alias))
    assert wait_until(lambda: registry_count(client, alias) >= 3, timeout=300)
    os.kill(running_pid(own_engine.paths) or 0, signal.SIGKILL)

    _, stderr = running.communicate(timeout=300)  # the run ends (no hang), reporting what failed
    assert running.returncode != 0
    assert "Traceback" not in stderr
    own_engine.up()
    rerun = run_ingest_cli(corpus, ingest_env(url, alias))
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert chunk_state(client, alias) == reference
    assert registry_count(client, alias, done_only=False) == registry_count(client, alias) == DOCUMENTS
