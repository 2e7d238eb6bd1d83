"""Root never writes, opens or hands over through a link the node's account could plant in the state directory
(that account would take any file of the machine). Runs as root with the real run account (skipped otherwise)."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
from pathlib import Path

import pytest

from service.engine.launcher.config import NodePaths
from service.engine.launcher.process import EngineProcess
from service.engine.launcher.state import append_log, hand_over, write_pid
from service.errors import EngineError
from service.settings import EngineSettings

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the planted-link attack needs root to be tried")


def run_account() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam("stroidok")
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "stroidok"],
                       check=True, capture_output=True)
        return pwd.getpwnam("stroidok")


def victim(tmp_path: Path, name: str) -> Path:
    """A root-owned file outside the state directory, as /etc/shadow would be."""
    path = tmp_path / "elsewhere" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("root's\n")
    os.chmod(path, 0o600)
    return path


def untouched(path: Path) -> bool:
    st = os.lstat(path)
    return (st.st_uid, st.st_gid) == (0, 0) and path.read_text() == "root's\n"


def test_handing_over_the_state_follows_no_link(tmp_path: Path) -> None:
    user = run_account()
    root = tmp_path / "node"
    (root / "data").mkdir(parents=True)
    file_target, dir_target = victim(tmp_path, "shadow"), tmp_path / "elsewhere" / "dir"
    dir_target.mkdir()
    (root / "data" / "evil").symlink_to(file_target)
    (root / "data" / "evil-dir").symlink_to(dir_target)
    os.link(victim(tmp_path, "hard"), root / "data" / "hard")  # a hard link to a root file
    (root / "data" / "segment").write_text("own data")

    hand_over(root, user.pw_uid, user.pw_gid)

    assert untouched(file_target) and untouched(tmp_path / "elsewhere" / "hard")
    assert os.lstat(dir_target).st_uid == 0
    assert os.lstat(root / "data" / "segment").st_uid == user.pw_uid


def test_the_console_log_and_pid_file_are_never_opened_through_a_link(tmp_path: Path) -> None:
    logs = tmp_path / "node" / "logs"
    logs.mkdir(parents=True)
    target = victim(tmp_path, "passwd")
    (logs / "console.log").symlink_to(target)
    with pytest.raises(EngineError):
        append_log(logs / "console.log")
    assert untouched(target)
    pid_target = victim(tmp_path, "crontab")
    (tmp_path / "node" / "opensearch.pid").symlink_to(pid_target)
    write_pid(tmp_path / "node" / "opensearch.pid", 4242)
    assert untouched(pid_target) and (tmp_path / "node" / "opensearch.pid").read_text() == "4242"
    (tmp_path / "node" / "logs2").symlink_to(tmp_path / "elsewhere")  # the folder itself a link
    with pytest.raises(EngineError):
        append_log(tmp_path / "node" / "logs2" / "passwd")
    assert untouched(target)


def test_engine_up_as_root_prepares_a_private_state_through_planted_links(tmp_path: Path) -> None:
    """The real preparation of ``engine up`` (config rendered, folders made, handed over) on a state directory
    with links planted where root writes and hands over."""
    user = run_account()
    settings = EngineSettings(home=tmp_path / "state")
    engine = EngineProcess(settings)
    paths: NodePaths = engine.paths
    for folder in (paths.data, paths.logs):
        folder.mkdir(parents=True, exist_ok=True)
    shadow = victim(tmp_path, "shadow")
    (paths.data / "x").symlink_to(shadow)
    install = tmp_path / "install"
    (install / "config").mkdir(parents=True)
    (install / "config" / "jvm.options").write_text("-Xms1g\n-Xmx1g\n")

    class Jdk:
        has_vector_module = False

    engine._prepare_state(Jdk(), install)  # type: ignore[arg-type]

    assert untouched(shadow)
    for folder in (paths.root, paths.data, paths.logs, paths.tmp):
        st = os.lstat(folder)
        assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == user.pw_uid
