from __future__ import annotations

import socket
from pathlib import Path

from service.engine.launcher.config import NodePaths, render_jvm_options, render_opensearch_yml
from service.engine.launcher.process import port_is_free
from service.settings import EngineSettings

JVM_TEMPLATE = """-Xms1g
-Xmx1g
-XX:HeapDumpPath=data
-XX:ErrorFile=logs/hs_err_pid%p.log
9-:-Xlog:gc*,gc+age=trace,safepoint:file=logs/gc.log:utctime,pid,tags:filecount=32,filesize=64m
21-:-javaagent:agent/opensearch-agent.jar
20-:--add-modules=jdk.incubator.vector
"""


def test_opensearch_yml_binds_loopback_single_node_with_our_ports(tmp_path: Path) -> None:
    settings = EngineSettings(http_port=19200, transport_port=19300, home=tmp_path)
    text = render_opensearch_yml(settings, NodePaths(tmp_path / "n"))
    lines = dict(line.split(": ", 1) for line in text.splitlines())
    assert lines["discovery.type"] == '"single-node"'
    assert lines["network.host"] == '"127.0.0.1"'
    assert lines["http.port"] == "19200"
    assert lines["transport.port"] == "19300"
    assert lines["path.data"] == f'"{tmp_path}/n/data"'
    assert lines["cluster.routing.allocation.disk.threshold_enabled"] == "true"
    assert lines["cluster.routing.allocation.disk.watermark.flood_stage"] == "\"500mb\""
    assert lines["cluster.default_number_of_replicas"] == "0", "a single node stays green"


def test_jvm_options_get_our_heap_and_absolute_paths(tmp_path: Path) -> None:
    paths = NodePaths(tmp_path / "n")
    settings = EngineSettings(heap="2g", home=tmp_path)
    text = render_jvm_options(JVM_TEMPLATE, settings, paths, Path("/opt/os"))
    assert text.splitlines()[:2] == ["-Xms2g", "-Xmx2g"]
    assert f"HeapDumpPath={paths.data}" in text
    assert f"ErrorFile={paths.logs}/hs_err" in text
    assert f"file={paths.logs}/gc.log" in text
    assert "-javaagent:/opt/os/agent/opensearch-agent.jar" in text
    assert "=logs/" not in text and "=data\n" not in text


def test_the_vector_module_option_is_left_out_only_for_a_jdk_without_it(tmp_path: Path) -> None:
    paths, settings = NodePaths(tmp_path / "n"), EngineSettings(home=tmp_path)
    full = render_jvm_options(JVM_TEMPLATE, settings, paths, Path("/opt/os"))
    slim = render_jvm_options(JVM_TEMPLATE, settings, paths, Path("/opt/os"), vector_module=False)
    assert "20-:--add-modules=jdk.incubator.vector" in full.splitlines()
    assert "jdk.incubator.vector" not in slim
    assert slim.splitlines() == [line for line in full.splitlines() if "incubator" not in line]


def test_port_is_free_sees_a_listening_socket() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not port_is_free(port)
    assert port_is_free(port)


def test_cluster_members_get_consecutive_ports_and_discover_each_other(tmp_path: Path) -> None:
    members = EngineSettings(home=tmp_path, http_port=9400, transport_port=9500, nodes=3).members()
    assert [(m.http_port, m.transport_port) for m in members] == [(9400, 9500), (9401, 9501), (9402, 9502)]
    assert len({m.state_dir for m in members}) == 3
    assert all(m.state_dir.parent == tmp_path / "clusters" / "9400" for m in members)
    yml = render_opensearch_yml(members[1], NodePaths(members[1].state_dir))
    assert "discovery.type" not in yml
    assert 'discovery.seed_hosts: ["127.0.0.1:9500", "127.0.0.1:9501", "127.0.0.1:9502"]' in yml
    assert 'cluster.initial_cluster_manager_nodes: ["stroidok-9400", "stroidok-9401", "stroidok-9402"]' in yml
    assert 'node.name: "stroidok-9401"' in yml and "http.port: 9401" in yml


def test_a_single_node_keeps_its_own_state_and_single_node_discovery(tmp_path: Path) -> None:
    single = EngineSettings(home=tmp_path, http_port=9400)
    assert single.state_dir == tmp_path / "nodes" / "9400" and single.recorded_nodes() == 1
    assert 'discovery.type: "single-node"' in render_opensearch_yml(single, NodePaths(single.state_dir))


def test_a_managed_node_cancels_long_searches_and_never_prunes_cardinality(tmp_path: Path) -> None:
    settings = EngineSettings(home=tmp_path, search_cancel_after_s=45)
    lines = dict(line.split(": ", 1) for line in render_opensearch_yml(settings,
                                                                       NodePaths(tmp_path / "n")).splitlines())
    assert lines["search.cancel_after_time_interval"] == '"45s"'
    assert lines["search.dynamic_pruning.cardinality_aggregation.max_allowed_cardinality"] == "0"
