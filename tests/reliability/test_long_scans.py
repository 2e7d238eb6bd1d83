"""Long scans through the shipped ingest: a scan longer than the stall limit advances page by page and is indexed;
a file past its deadline is given up and reported while the run goes on, its tesseract and temp files gone."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.support.crash import REPO, ingest_env
from tests.support.documents import make_scanned_pdf


def ingest(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.cli", "ingest", str(root), "--json"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_scan_that_takes_longer_than_the_stall_limit_is_read_page_by_page_and_indexed(
        tmp_path: Path, opensearch_url: str, alias: str) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    make_scanned_pdf(root / "long-scan.pdf", pages=8, distinct=True)
    env = ingest_env(opensearch_url, alias, STROIDOK_INGEST_WORKERS="1")
    subprocess.run([sys.executable, "-m", "service.cli", "index", "init"], cwd=REPO, env=env, check=True,
                   capture_output=True, timeout=300)  # the index made beforehand: the limit is for the scan
    began = time.monotonic()
    done = ingest(root, {**env, "STROIDOK_INGEST_STALL_TIMEOUT_S": "4"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert time.monotonic() - began > 4  # the run took longer than the stall limit
    [outcome] = json.loads(done.stdout)["files"]
    assert (outcome["status"], outcome["pages"]) == ("indexed", 8)
    assert "parsing, page " in done.stderr and "of 8" in done.stderr  # progress shown inside the file


def test_a_file_past_its_deadline_is_reported_and_the_run_goes_on_leaving_no_tesseract_or_temp_files(
        tmp_path: Path, opensearch_url: str, alias: str) -> None:
    root, temp = tmp_path / "docs", tmp_path / "tmp"
    root.mkdir()
    temp.mkdir()
    make_scanned_pdf(root / "long-scan.pdf", pages=24)
    (root / "note.txt").write_text("Контроль прочности бетона на сжатие в возрасте 28 суток.", encoding="utf-8")
    env = ingest_env(opensearch_url, alias, STROIDOK_INGEST_FILE_TIMEOUT_S="4", STROIDOK_INGEST_PAGE_TIMEOUT_S="0",
                     TMPDIR=str(temp))
    done = ingest(root, env)
    assert done.returncode == 1, done.stderr[-2000:]
    outcomes = {Path(o["path"]).name: o for o in json.loads(done.stdout)["files"]}
    assert outcomes["note.txt"]["status"] == "indexed"
    assert outcomes["long-scan.pdf"]["status"] == "failed"
    assert "longer than 4s" in outcomes["long-scan.pdf"]["reason"]
    time.sleep(1)
    survivors = subprocess.run(["pgrep", "-f", str(temp)], capture_output=True, text=True).stdout.split()
    assert survivors == []  # no tesseract still reading into the run's temp folder
    assert [p.name for p in temp.iterdir() if p.name.startswith(("tess_", "stroidok-parse-"))] == []
