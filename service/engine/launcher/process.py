"""Run, watch and stop one managed OpenSearch node on loopback.

A node is identified by its state directory (``EngineSettings.state_dir``): it holds the node's own
config, data, logs and pid file. ``down`` stops only a process whose command line names that config
directory, so it never kills a node somebody else started.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

from service.engine.launcher.artifacts import ensure_installed
from service.engine.launcher.config import NodePaths, render_jvm_options, render_opensearch_yml
from service.engine.launcher.java import Jdk, find_jdk
from service.engine.launcher.state import append_log, hand_over, private_dir, write_pid
from service.errors import EngineError, EngineStartTimeout, NodeDied, PortInUse
from service.settings import EngineSettings


@dataclass(frozen=True)
class UpResult:
    url: str
    pid: int
    started: bool
    seconds: float
    status: str = "green"


READY = {"green": ("green",), "yellow": ("green", "yellow")}


def ready_status(nodes: int) -> str:
    """The health that means "serving": a single node can never place a replica (an index created with
    ``number_of_replicas`` 1 keeps it yellow for ever), so there every active primary suffices; a cluster waits
    for green, each replica on another node."""
    return "yellow" if nodes == 1 else "green"


class _NotReady(Exception):
    """The node answers no health yet (retried)."""


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def read_pid(paths: NodePaths) -> int | None:
    try:
        return int(paths.pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def is_our_process(pid: int, paths: NodePaths) -> bool:
    """True when ``pid`` is alive and is the OpenSearch started with this node's config directory."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    return f"-Dopensearch.path.conf={paths.config}" in cmdline.replace("\0", " ")


def running_pid(paths: NodePaths) -> int | None:
    """The pid of this state directory's node when it is running, else None."""
    pid = read_pid(paths)
    return pid if pid is not None and is_our_process(pid, paths) else None


def log_tail(paths: NodePaths, lines: int = 40) -> list[str]:
    """The last lines of the node's console log (what it printed before dying)."""
    try:
        return paths.console_log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []


def http_json(url: str, timeout: float = 5.0) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        data: dict[str, Any] = json.loads(response.read())
    return data


def _terminate(process: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    """Stop a node that failed to come up, so no half-started process is left behind."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class EngineProcess:
    """Lifecycle of the managed node described by ``EngineSettings``."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self.paths = NodePaths(settings.state_dir)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.settings.http_port}"

    def install(self) -> tuple[Jdk, Path]:
        """Find Java, then fetch and assemble the engine (cached). Java first: it fails fastest."""
        jdk = find_jdk([self.settings.opensearch_java_home, self.settings.java_home], self.settings.jvm_roots,
                       self.settings.registry_jdk)
        return jdk, ensure_installed(self.settings, jdk)

    def up(self) -> UpResult:
        """Start the node (or find it running) and wait until it serves every shard (see ``_health_once``)."""
        began = time.monotonic()
        pid = running_pid(self.paths)
        if pid is not None:
            health = self._wait_green(pid, lambda: is_our_process(pid, self.paths))
            return UpResult(self.url, pid, started=False, seconds=time.monotonic() - began, status=health["status"])
        jdk, install_dir = self.install()
        self._check_ports()
        self._prepare_state(jdk, install_dir)
        process = self._spawn(jdk, install_dir)
        logger.info("OpenSearch starting (pid {}), waiting for green on {}", process.pid, self.url)
        try:
            health = self._wait_green(process.pid, lambda: process.poll() is None)
        except EngineError:
            _terminate(process)
            raise
        return UpResult(self.url, process.pid, started=True, seconds=time.monotonic() - began,
                        status=health["status"])

    def down(self, timeout_s: float = 60.0) -> int | None:
        """Stop this node if it runs; returns the pid stopped, or None when nothing was running."""
        pid = running_pid(self.paths)
        if pid is None:
            self.paths.pid_file.unlink(missing_ok=True)
            return None
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and is_our_process(pid, self.paths):
            time.sleep(0.2)
        if is_our_process(pid, self.paths):
            logger.warning("node {} ignored SIGTERM for {}s, killing it", pid, timeout_s)
            os.kill(pid, signal.SIGKILL)
        self.paths.pid_file.unlink(missing_ok=True)
        return pid

    def _check_ports(self) -> None:
        for name, port in (("http", self.settings.http_port), ("transport", self.settings.transport_port)):
            if not port_is_free(port):
                env = f"STROIDOK_ENGINE_{name.upper()}_PORT"
                raise PortInUse(
                    f"{name} port {port} on 127.0.0.1 is taken by another process; stop it or set {env}",
                    details={"port": port, "setting": env},
                )

    def _run_user(self) -> pwd.struct_passwd | None:
        """The unprivileged account to run as when we are root (created on first use)."""
        if os.geteuid() != 0:
            return None
        name = self.settings.run_as
        try:
            return pwd.getpwnam(name)
        except KeyError:
            pass
        logger.info("creating system user {} to run OpenSearch (it refuses to run as root)", name)
        done = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise EngineError(f"could not create user {name}: {done.stderr.strip()}")
        return pwd.getpwnam(name)

    def _prepare_state(self, jdk: Jdk, install_dir: Path) -> None:
        """The node's config written anew, its folders private; as root, handed to the run account without
        following anything that account could have planted (``service.engine.launcher.state``)."""
        paths = self.paths
        private_dir(paths.root)
        if paths.config.is_symlink():
            paths.config.unlink()
        shutil.rmtree(paths.config, ignore_errors=True)
        shutil.copytree(install_dir / "config", paths.config)  # fails rather than write into a planted folder
        for directory in (paths.data, paths.logs, paths.tmp):
            private_dir(directory)
        (paths.config / "opensearch.yml").write_text(render_opensearch_yml(self.settings, paths))
        jvm = paths.config / "jvm.options"
        jvm.write_text(render_jvm_options(jvm.read_text(), self.settings, paths, install_dir, jdk.has_vector_module))
        paths.pid_file.unlink(missing_ok=True)
        user = self._run_user()
        if user is not None:
            hand_over(paths.root, user.pw_uid, user.pw_gid)

    def _spawn(self, jdk: Jdk, install_dir: Path) -> subprocess.Popen[bytes]:
        paths = self.paths
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "OPENSEARCH_JAVA_HOME": str(jdk.home),
            "OPENSEARCH_PATH_CONF": str(paths.config),
            "OPENSEARCH_TMPDIR": str(paths.tmp),
            "OPENSEARCH_JAVA_OPTS": f"-Xms{self.settings.heap} -Xmx{self.settings.heap}",
            "HOME": str(paths.root),
            "LANG": "C.UTF-8",
        }
        user = self._run_user()
        with os.fdopen(append_log(paths.console_log), "ab") as console:
            process = subprocess.Popen(
                [str(install_dir / "bin" / "opensearch")],
                cwd=install_dir, env=env, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                start_new_session=True, user=user.pw_uid if user else None, group=user.pw_gid if user else None,
                extra_groups=[] if user else None,
            )
        write_pid(paths.pid_file, process.pid)
        if user is not None:
            os.chown(paths.pid_file, user.pw_uid, user.pw_gid, follow_symlinks=False)
        return process

    def _health_once(self, pid: int, alive: Callable[[], bool]) -> dict[str, Any]:
        if not alive():
            raise NodeDied(
                f"OpenSearch (pid {pid}) exited during startup; see {self.paths.console_log}",
                details={"log_tail": log_tail(self.paths)},
            )
        nodes = len(self.settings.cluster_http_ports) or 1
        wanted = ready_status(nodes)
        try:
            health = http_json(f"{self.url}/_cluster/health?wait_for_status={wanted}&wait_for_nodes={nodes}&timeout=2s",
                               timeout=5)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise _NotReady(str(exc)) from exc
        if health.get("status") not in READY[wanted]:
            raise _NotReady(f"cluster status {health.get('status')}")
        if health["status"] != "green":
            logger.warning("{} replica shard(s) unassigned: one node cannot hold an index's replicas (every primary "
                           "is active, every chunk is served)", health.get("unassigned_shards"))
        return health

    def _wait_green(self, pid: int, alive: Callable[[], bool]) -> dict[str, Any]:
        retrying = Retrying(
            stop=stop_after_delay(self.settings.start_timeout_s),
            wait=wait_fixed(1),
            retry=retry_if_exception_type(_NotReady),
        )
        try:
            return retrying(self._health_once, pid, alive)
        except RetryError as exc:
            raise EngineStartTimeout(
                f"OpenSearch did not turn green within {self.settings.start_timeout_s:.0f}s",
                details={"last_error": str(exc.last_attempt.exception()), "log_tail": log_tail(self.paths)},
            ) from exc


class EngineCluster:
    """A managed cluster of ``settings.nodes`` local nodes on consecutive ports (``engine up --nodes 3``).

    Every member is an ``EngineProcess`` with its own state directory under the cluster's; the members'
    ports are recorded in ``cluster.json`` so ``engine down`` and ``engine status`` find them again."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self.members = [EngineProcess(m) for m in settings.members()]

    @classmethod
    def recorded(cls, settings: EngineSettings) -> EngineCluster | None:
        """The cluster a previous ``up`` started from ``settings.http_port``, if any."""
        nodes = settings.recorded_nodes()
        return cls(settings.model_copy(update={"nodes": nodes})) if nodes > 1 else None

    @property
    def urls(self) -> list[str]:
        return [m.url for m in self.members]

    def up(self) -> list[UpResult]:
        """Start every member that is not running, then wait until all have joined and the cluster is green."""
        began = time.monotonic()
        jdk, install_dir = self.members[0].install()
        started: dict[int, subprocess.Popen[bytes]] = {}
        for i, member in enumerate(self.members):
            if running_pid(member.paths) is None:
                member._check_ports()
                member._prepare_state(jdk, install_dir)
                started[i] = member._spawn(jdk, install_dir)
        self.settings.cluster_dir.mkdir(parents=True, exist_ok=True)
        (self.settings.cluster_dir / "cluster.json").write_text(json.dumps({"nodes": len(self.members)}))
        logger.info("{} OpenSearch nodes starting, waiting for a green cluster on {}", len(started), self.urls[0])
        pids = {i: running_pid(m.paths) or 0 for i, m in enumerate(self.members)}
        pids.update({i: p.pid for i, p in started.items()})
        try:
            self.members[0]._wait_green(pids[0], lambda: all(p.poll() is None for p in started.values()))
        except EngineError:
            for process in started.values():
                _terminate(process)
            raise
        return [UpResult(m.url, pids[i], i in started, time.monotonic() - began) for i, m in enumerate(self.members)]

    def down(self, timeout_s: float = 60.0) -> list[int]:
        """Stop every member (and forget the cluster); the pids stopped."""
        stopped = [pid for m in self.members if (pid := m.down(timeout_s)) is not None]
        (self.settings.cluster_dir / "cluster.json").unlink(missing_ok=True)
        return stopped
