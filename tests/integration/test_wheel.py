"""The package is whole: a wheel of the repo, installed into a fresh environment outside the repo (what
`uv tool install` or `pipx install` gives a user), creates the index, ingests sample files and searches them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from evaluation.sample import render_pdf
from service.settings import IndexSettings
from tests.support.documents import REPO, TOPICS
from tests.support.engine import drop_index_resources, new_alias

pytestmark = pytest.mark.integration


def uv() -> str:
    """The uv the repo's environment was built with (installs from its cache: seconds, not minutes)."""
    found = Path(sys.executable).with_name("uv")
    return str(found) if found.exists() else shutil.which("uv") or pytest.fail("uv is not installed")


def tracked_copy(target: Path) -> Path:
    """The repo's tracked files, copied: a build in the checkout would reuse its ``build/`` directory, where
    setuptools keeps modules since deleted from the source and puts them in the wheel."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    return target


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{command}: {done.stderr[-3000:]}"
    return done.stdout


def test_an_installed_wheel_initialises_ingests_and_searches_outside_the_repo(
        tmp_path: Path, opensearch_url: str, client: OpenSearch) -> None:
    away = tmp_path / "elsewhere"
    docs = away / "документы"
    docs.mkdir(parents=True)
    for name, text in TOPICS.items():
        (docs / f"{name}.txt").write_text(f"{text}\n\n{text}\n", encoding="utf-8")
    render_pdf(["Сварка стальных конструкций. Контроль сварных швов ультразвуком."], docs / "сварка.pdf", "Сварка")
    bare = {k: v for k, v in os.environ.items() if not k.startswith(("STROIDOK_", "VIRTUAL_ENV", "PYTHON"))}
    source = tracked_copy(tmp_path / "source")
    run([uv(), "build", "--wheel", "-q", "-o", str(tmp_path / "dist"), str(source)], source, bare)
    wheel = next((tmp_path / "dist").glob("stroidok-*.whl"))
    venv = tmp_path / "venv"
    run([uv(), "venv", "-q", "-p", sys.executable, str(venv)], away, bare)
    run([uv(), "pip", "install", "-q", str(wheel)], away, {**bare, "VIRTUAL_ENV": str(venv)})
    stroidok = str(venv / "bin" / "stroidok")
    alias = new_alias()
    env = {**bare, "OPENSEARCH_URL": opensearch_url, "STROIDOK_INDEX_ALIAS": alias, "DO_NOT_TRACK": "1"}
    try:
        where = run([str(venv / "bin" / "python"), "-c", "import service, index_templates as t; "
                     "print(service.__file__); print(t.__file__)"], away, env)
        assert all(Path(line).is_relative_to(venv) for line in where.split()), where  # not the checkout
        run([stroidok, "index", "init"], away, env)
        run([stroidok, "ingest", str(docs)], away, env)
        answer = json.loads(run([stroidok, "search", "монтажный стык ручной дуговой сваркой", "--format", "json"],
                                away, env))
        assert answer["results"][0]["file_path"].endswith("сварка.txt")
        status = run([stroidok, "index", "status"], away, env)
        assert alias in status
    finally:
        drop_index_resources(client, IndexSettings(alias=alias, embedding_dim=300))
