"""``stroidok engine`` driven as a user would, as a subprocess, against real nodes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.settings import EngineSettings
from tests.support.net import free_port

pytestmark = pytest.mark.integration

HOME = EngineSettings().home  # the shared, cached engine install


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie left for a non-reaping init to collect."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stroidok(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def node_env(http_port: int, transport_port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STROIDOK_", "OPENSEARCH_"))}
    env.update({
        "STROIDOK_ENGINE_HOME": str(HOME),
        "STROIDOK_ENGINE_HTTP_PORT": str(http_port),
        "STROIDOK_ENGINE_TRANSPORT_PORT": str(transport_port),
        "STROIDOK_ENGINE_HEAP": "512m",
        "COLUMNS": "200",
    })
    env.update(extra)
    return env


@pytest.fixture
def ports() -> Iterator[tuple[int, int]]:
    http, transport = free_port(), free_port()
    yield http, transport
    stroidok("engine", "down", env=node_env(http, transport))
    shutil.rmtree(HOME / "nodes" / str(http), ignore_errors=True)


def test_engine_up_twice_status_and_down(ports: tuple[int, int]) -> None:
    env = node_env(*ports)

    first = stroidok("engine", "up", env=env)
    assert first.returncode == 0, first.stderr
    assert "started" in first.stdout
    pid = int(Path(HOME / "nodes" / str(ports[0]) / "opensearch.pid").read_text())

    second = stroidok("engine", "up", env=env)
    assert second.returncode == 0, second.stderr
    assert "already running" in second.stdout
    assert f"pid {pid}" in second.stdout

    status = stroidok("engine", "status", "--json", env=env)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["version"] == "3.6.0"
    assert {"opensearch-knn", "opensearch-neural-search"} <= set(report["plugins"])
    assert report["cluster_status"] == "green"
    assert report["heap_max_mb"] <= 512

    down = stroidok("engine", "down", env=env)
    assert down.returncode == 0, down.stderr
    assert f"pid {pid}" in down.stdout
    assert not alive(pid)

    after = stroidok("engine", "status", env=env)
    assert after.returncode == 2
    assert "INDEX_UNAVAILABLE" in after.stderr
    assert "Traceback" not in after.stderr


def test_a_replica_one_node_cannot_place_does_not_stop_up(ports: tuple[int, int]) -> None:
    """An index created with a replica keeps a single node yellow for ever; `up` must still start and serve it
    (it used to wait for green, time out and stop the node it had just started)."""
    env = node_env(*ports, STROIDOK_ENGINE_START_TIMEOUT_S="120")
    assert stroidok("engine", "up", env=env).returncode == 0
    url = f"http://127.0.0.1:{ports[0]}/with-replica"
    body = json.dumps({"settings": {"number_of_shards": 1, "number_of_replicas": 1}}).encode()
    request = urllib.request.Request(url, data=body, method="PUT", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
    assert stroidok("engine", "down", env=env).returncode == 0

    again = stroidok("engine", "up", env=env)
    assert again.returncode == 0, again.stderr
    assert "started" in again.stdout and "yellow after" in again.stdout
    assert "replica shard(s) unassigned" in again.stderr
    with urllib.request.urlopen(f"{url}/_count", timeout=10) as response:
        assert json.load(response)["count"] == 0


def test_down_leaves_a_node_it_did_not_start_alone(ports: tuple[int, int], opensearch_url: str) -> None:
    result = stroidok("engine", "down", env=node_env(*ports))
    assert result.returncode == 0
    assert "no managed OpenSearch node was running" in result.stdout
    with urllib.request.urlopen(opensearch_url, timeout=10) as response:
        assert response.status == 200


def test_missing_java_21_gives_a_clear_error(ports: tuple[int, int], tmp_path: Path) -> None:
    """No JDK >= 21 named, none under the roots, and the registry JDK turned off (with it, the node starts:
    tests/integration/test_registry_jdk.py)."""
    env = node_env(*ports, STROIDOK_ENGINE_JVM_ROOTS=json.dumps([str(tmp_path)]), STROIDOK_ENGINE_REGISTRY_JDK="false",
                   JAVA_HOME="/usr/lib/jvm/java-17-openjdk-amd64", STROIDOK_ENGINE_HOME=str(tmp_path / "home"))

    result = stroidok("engine", "up", env=env, timeout=60)

    assert result.returncode == 2
    assert "JAVA_NOT_FOUND" in result.stderr
    assert "Java 21 or newer" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "home" / "artifacts").exists(), "nothing may be downloaded before Java is found"


def test_taken_port_gives_a_clear_error(ports: tuple[int, int]) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", ports[0]))
        squatter.listen()
        result = stroidok("engine", "up", env=node_env(*ports), timeout=120)

    assert result.returncode == 2
    assert "PORT_IN_USE" in result.stderr
    assert f"port {ports[0]}" in result.stderr
    assert "STROIDOK_ENGINE_HTTP_PORT" in result.stderr


def test_node_that_dies_at_startup_reports_its_log(ports: tuple[int, int]) -> None:
    env = node_env(*ports, STROIDOK_ENGINE_HEAP="1m")

    result = stroidok("engine", "up", env=env, timeout=120)

    assert result.returncode == 2
    assert "NODE_DIED" in result.stderr
    assert "log_tail" in result.stderr
    assert "Traceback" not in result.stderr.split("log_tail")[0]
