"""The sweep of parse workers' private temporary folders: dead workers' folders go, nothing else does."""

from __future__ import annotations

import os
from pathlib import Path

from ingest.worker import TEMP_PREFIX, sweep_worker_temp

DEAD_PID = 2**22 + 17  # above the kernel's pid_max: no process has it


def test_a_dead_workers_folder_is_removed_and_a_live_ones_is_kept(tmp_path: Path) -> None:
    dead = tmp_path / f"{TEMP_PREFIX}{DEAD_PID}-abc"
    live = tmp_path / f"{TEMP_PREFIX}{os.getpid()}-def"
    for folder in (dead, live):
        (folder / "page").mkdir(parents=True)
    assert sweep_worker_temp(tmp_path) == 1
    assert not dead.exists() and live.is_dir()


def test_a_link_named_like_a_workers_folder_is_neither_followed_nor_counted(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    (target / "keep").mkdir(parents=True)
    link = tmp_path / f"{TEMP_PREFIX}{DEAD_PID}-link"
    link.symlink_to(target, target_is_directory=True)
    assert sweep_worker_temp(tmp_path) == 0
    assert link.is_symlink() and (target / "keep").is_dir()
