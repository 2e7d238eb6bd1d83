"""Hostile archives against the access groups: a link in a public folder to an excluded, hidden or other group's
file publishes nothing, and a run with other access rules (or none) refuses instead of re-deciding every
document's groups, through the shipped CLI as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.crash import REPO, ingest_env

pytestmark = pytest.mark.integration
RULES = {"rules": [{"pattern": "secret/", "groups": ["legal"]}, {"pattern": ".hr/", "groups": ["hr"]}]}


def archive(tmp_path: Path) -> tuple[Path, Path]:
    """The issue's reproduction: a public folder with links to an excluded folder and a hidden one."""
    root = tmp_path / "archive"
    for folder in ("public", "secret", ".hr"):
        (root / folder).mkdir(parents=True)
    (root / "public" / "ok.txt").write_text("Обычный документ про бетон", encoding="utf-8")
    (root / "secret" / "contract.txt").write_text("Секретный договор поставки бетона марки Б25", encoding="utf-8")
    (root / ".hr" / "salaries.txt").write_text("Зарплата директора составляет 1000000 руб", encoding="utf-8")
    (root / "public" / "c.txt").symlink_to("../secret/contract.txt")
    (root / "public" / "s.txt").symlink_to("../.hr/salaries.txt")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    return root, rules


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)


def found(env: dict[str, str], query: str) -> list[str]:
    done = cli({**env, "STROIDOK_SERVER_GROUPS": '["public"]', "STROIDOK_SEARCH_CACHE_TTL_S": "0"}, "search", query,
               "-m", "fulltext", "-f", "json")
    assert done.returncode == 0, done.stderr[-1500:]
    return [r["title"] for r in json.loads(done.stdout)["results"]]


def test_links_in_a_public_folder_publish_no_excluded_or_hidden_file(tmp_path: Path, opensearch_url: str,
                                                                      alias: str) -> None:
    root, rules = archive(tmp_path)
    env = ingest_env(opensearch_url, alias, STROIDOK_INGEST_ACCESS_RULES=str(rules))
    done = cli(env, "ingest", str(root), "--exclude", "secret/*", "--json")
    outcomes = {Path(o["path"]).name: o for o in json.loads(done.stdout)["files"]}
    assert outcomes["ok.txt"]["status"] == "indexed"
    assert outcomes["c.txt"]["status"] == "failed" and "--exclude" in outcomes["c.txt"]["reason"]
    assert outcomes["s.txt"]["status"] == "failed" and "hidden" in outcomes["s.txt"]["reason"]
    assert not any("Секретный" in t for t in found(env, "договор поставки бетона"))
    assert not any("Зарплата" in t for t in found(env, "зарплата директора"))


def test_a_run_without_the_index_rules_refuses_and_changes_nothing(tmp_path: Path, opensearch_url: str,
                                                                   alias: str) -> None:
    root, rules = archive(tmp_path)
    ruled = ingest_env(opensearch_url, alias, STROIDOK_INGEST_ACCESS_RULES=str(rules))
    assert cli(ruled, "ingest", str(root)).returncode in (0, 1)
    unruled = {k: v for k, v in ruled.items() if k != "STROIDOK_INGEST_ACCESS_RULES"}

    refused = cli(unruled, "ingest", str(root))

    assert refused.returncode == 2 and "ACCESS_RULES_CHANGED" in refused.stderr
    assert not any("Секретный" in t for t in found(ruled, "договор поставки бетона"))  # still legal's only
    allowed = cli(unruled, "ingest", str(root), "--access-rules-changed")
    assert allowed.returncode in (0, 1), allowed.stderr[-1500:]
    assert any("Секретный" in t for t in found(ruled, "договор поставки бетона"))  # told: every file public now
    assert cli(unruled, "ingest", str(root)).returncode in (0, 1)  # the new rules are the index's now


def test_a_rules_change_over_part_of_the_index_refuses_and_records_nothing(tmp_path: Path, opensearch_url: str,
                                                                           alias: str) -> None:
    root, rules = archive(tmp_path)
    (root / "public" / "c.txt").unlink()
    (root / "public" / "s.txt").unlink()
    loose = ingest_env(opensearch_url, alias, STROIDOK_INGEST_ACCESS_RULES=str(rules))
    assert cli(loose, "ingest", str(root)).returncode == 0
    stricter = tmp_path / "stricter.json"
    stricter.write_text(json.dumps({"rules": [*RULES["rules"], {"pattern": "public/", "groups": ["staff"]}]}),
                        encoding="utf-8")
    strict = {**loose, "STROIDOK_INGEST_ACCESS_RULES": str(stricter)}

    partial = cli(strict, "ingest", str(root / "secret"), "--access-rules-changed")

    assert partial.returncode == 2 and "ACCESS_RULES_CHANGED" in partial.stderr and "outside" in partial.stderr
    assert any("Обычный" in t for t in found(loose, "документ про бетон"))  # still public: nothing re-decided
    assert cli(strict, "ingest", str(root)).returncode == 2  # and the index's rules are still the loose ones
    whole = cli(strict, "ingest", str(root), "--access-rules-changed")
    assert whole.returncode == 0, whole.stderr[-1500:]
    assert not any("Обычный" in t for t in found(loose, "документ про бетон"))  # every document re-decided


def test_a_misspelt_rule_file_stops_the_run_before_anything_is_public(tmp_path: Path, opensearch_url: str,
                                                                      alias: str) -> None:
    root, _ = archive(tmp_path)
    misspelt = tmp_path / "misspelt.json"
    misspelt.write_text(json.dumps({"rule": RULES["rules"]}), encoding="utf-8")
    env = ingest_env(opensearch_url, alias, STROIDOK_INGEST_ACCESS_RULES=str(misspelt))

    done = cli(env, "ingest", str(root))

    assert done.returncode == 2 and "CONFIG_ERROR" in done.stderr and "Traceback" not in done.stderr
    assert "rule" in done.stderr and "indexed" not in done.stdout  # the run stopped before any file
