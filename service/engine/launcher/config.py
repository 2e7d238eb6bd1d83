"""A managed node's own files: where they live (``NodePaths``) and what its ``opensearch.yml`` and
``jvm.options`` say. Pure functions of the settings."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.engine.gateway import PRUNING_SETTING
from service.engine.launcher.java import VECTOR_MODULE
from service.errors import ConfigError
from service.settings import EngineSettings


@dataclass(frozen=True)
class NodePaths:
    """Where one node keeps its state."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def pid_file(self) -> Path:
        return self.root / "opensearch.pid"

    @property
    def console_log(self) -> Path:
        return self.logs / "console.log"


def disk_watermarks(settings: EngineSettings) -> dict[str, str]:
    """The engine's disk guard: absolute free space (``500mb``) or used shares (``95%``), as configured."""
    prefix = "cluster.routing.allocation.disk.watermark"
    marks = {"low": settings.disk_low, "high": settings.disk_high, "flood_stage": settings.disk_flood}
    if len({mark.endswith("%") for mark in marks.values()}) > 1:
        raise ConfigError("the disk watermarks must all be free space (e.g. 500mb) or all percentages (e.g. 95%)",
                          details=marks)
    return {f"{prefix}.{name}": value for name, value in marks.items()}


def search_guards(settings: EngineSettings) -> dict[str, Any]:
    """No search outlives its bound: the engine cancels one running past ``search_cancel_after_s``; and none
    can loop without end in a cardinality aggregation's dynamic pruning under a ``hybrid`` query (OpenSearch
    issue 22582: it ignores cancellation; the product's own requests avoid the construct, this covers others)."""
    return {"search.cancel_after_time_interval": f"{settings.search_cancel_after_s:g}s", PRUNING_SETTING: 0}


def render_opensearch_yml(settings: EngineSettings, paths: NodePaths) -> str:
    """The node's ``opensearch.yml``: loopback only, our ports and paths; a single node, or a member of
    a managed cluster that discovers the others on their transport ports."""
    membership: dict[str, Any] = {"discovery.type": "single-node"}
    if settings.cluster_transport_ports:
        membership = {
            "discovery.seed_hosts": [f"127.0.0.1:{port}" for port in settings.cluster_transport_ports],
            "cluster.initial_cluster_manager_nodes": [f"stroidok-{port}" for port in settings.cluster_http_ports],
        }
    config = {
        "cluster.name": f"stroidok-cluster-{settings.cluster_http_ports[0]}" if settings.cluster_http_ports
        else "stroidok",
        "node.name": f"stroidok-{settings.http_port}",
        **membership,
        "network.host": "127.0.0.1",
        "http.port": settings.http_port,
        "transport.port": settings.transport_port,
        "path.data": str(paths.data),
        "path.logs": str(paths.logs),
        "cluster.routing.allocation.disk.threshold_enabled": True,
        **disk_watermarks(settings),
        "cluster.default_number_of_replicas": 0,
        **search_guards(settings),
    }
    return "".join(f"{key}: {json.dumps(value)}\n" for key, value in config.items())


def render_jvm_options(template: str, settings: EngineSettings, paths: NodePaths, install_dir: Path,
                       vector_module: bool = True) -> str:
    """The distribution's ``jvm.options`` with our heap and every relative path made absolute; without the
    JDK's vector module, the option adding it is left out (the JVM would refuse to start)."""
    if not vector_module:
        template = re.sub(rf"^.*--add-modules={re.escape(VECTOR_MODULE)}\s*$\n?", "", template, flags=re.M)
    text = re.sub(r"^-Xms\S+$", f"-Xms{settings.heap}", template, flags=re.M)
    text = re.sub(r"^-Xmx\S+$", f"-Xmx{settings.heap}", text, flags=re.M)
    text = text.replace("HeapDumpPath=data", f"HeapDumpPath={paths.data}")
    text = text.replace("file=logs/", f"file={paths.logs}/").replace("ErrorFile=logs/", f"ErrorFile={paths.logs}/")
    return text.replace("-javaagent:agent/", f"-javaagent:{install_dir}/agent/")
