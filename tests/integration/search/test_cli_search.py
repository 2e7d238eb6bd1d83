"""``stroidok search``: the MCP tool's parameters on the command line, the same errors, quiet stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from service.settings import Settings
from tests.support.servers import server_env

pytestmark = pytest.mark.integration


def cli(opensearch_url: str, settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.cli", "search", *args], capture_output=True, text=True,
                          env=server_env(settings.index.alias, opensearch_url), timeout=120)


def test_short_flags_and_contract_names_search_like_the_tool(opensearch_url: str, corpus_settings: Settings,
                                                             search_corpus: tuple[Path, Settings]) -> None:
    root, _ = search_corpus
    done = cli(opensearch_url, corpus_settings, "бетон пожарная сварка", "-l", "2", "-m", "fulltext", "-o", "OR",
               "-t", "pdf,txt", "--folder", str(root / "нормы"), "--date-range", "2024-01-01..", "-c", "1",
               "-f", "json")
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)
    assert response["meta"]["route_used"] == "bm25" and response["meta"]["operator_used"] == "OR"
    assert {r["file_type"] for r in response["results"]} <= {"pdf", "txt"}
    assert all(r["file_path"].startswith(str(root / "нормы") + "/") for r in response["results"])
    assert all(len(r["context_chunks"]) == 1 and r["context_chunks"][0]["similarity"] is not None
               for r in response["results"])
    assert done.stderr.strip() == "", "search is quiet by default: results only"
    cursor = response["meta"]["pagination"].get("next_cursor")  # absent when null
    if cursor:
        following = cli(opensearch_url, corpus_settings, "бетон пожарная сварка", "-l", "2", "-m", "fulltext",
                        "-o", "OR", "-t", "pdf,txt", "--folder", str(root / "нормы"), "--date-range", "2024-01-01..",
                        "-c", "1", "-f", "json", "--cursor", cursor)
        assert following.returncode == 0, following.stderr


@pytest.mark.parametrize(("args", "field"), [(["--limit", "abc"], "limit"), (["-m", "bogus"], "search_mode"),
                                             (["-t", "exe"], "document_types.0"), (["--threshold", "2"], "threshold"),
                                             (["--date-range", "2024-13-01.."], "date_range.from")])
def test_bad_options_are_the_same_invalid_query_as_over_mcp(opensearch_url: str, corpus_settings: Settings,
                                                            args: list[str], field: str) -> None:
    done = cli(opensearch_url, corpus_settings, "бетон", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert "INVALID_QUERY" in done.stderr and field in done.stderr, done.stderr
