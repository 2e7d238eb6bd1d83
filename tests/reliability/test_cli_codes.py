"""Every failure of the command line is a code, never a traceback: bytes that are not UTF-8 in every text option of
``stroidok search`` (a shell passes them through) are INVALID_QUERY, and every kind of invalid setting (a group name
with a newline or a separator, JSON that is not, a number out of range, OAuth half configured) is CONFIG_ERROR;
each with exit code 2, through the installed CLI as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.crash import REPO
from tests.support.engine import new_alias

pytestmark = pytest.mark.integration
BAD = os.fsdecode(b"\xff\xfe-\xc3")  # what a shell passes for bytes that are not UTF-8 (lone surrogates)


def run(args: list[str], opensearch_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("STROIDOK_")}
    environment.update(OPENSEARCH_URL=opensearch_url, STROIDOK_INDEX_ALIAS=new_alias(), DO_NOT_TRACK="1", **env)
    return subprocess.run([sys.executable, "-m", "service.cli", *args], cwd=REPO, env=environment,
                          capture_output=True, text=True, errors="replace", timeout=120)


@pytest.mark.parametrize("args", [
    [BAD], ["бетон", "--queries", BAD], ["бетон", "--path", BAD], ["бетон", "--folder", BAD],
    ["бетон", "--source-filter", BAD], ["бетон", "--cites", BAD], ["бетон", "--document-types", BAD],
    ["бетон", "--date-range", BAD], ["бетон", "--search-mode", BAD], ["бетон", "--operator", BAD],
    ["бетон", "--limit", BAD], ["бетон", "--page", BAD], ["бетон", "--cursor", BAD],
    ["бетон", "--max-chunks", BAD], ["бетон", "--threshold", BAD],
], ids=lambda a: a[1] if len(a) > 1 else "query")
def test_bytes_that_are_not_utf8_in_a_search_option_are_invalid_query(args: list[str], opensearch_url: str) -> None:
    done = run(["search", *args], opensearch_url)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "INVALID_QUERY" in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("variable", [
    {"STROIDOK_SERVER_GROUPS": '["legal\\n"]'}, {"STROIDOK_SERVER_GROUPS": '["a,b"]'},
    {"STROIDOK_SERVER_GROUPS": '["l\u0435gal"]'}, {"STROIDOK_SERVER_TOKENS": "not json"},
    {"STROIDOK_SERVER_TOKENS": '{"t": ["bad name"]}'}, {"STROIDOK_INGEST_DEFAULT_GROUPS": '[""]'},
    {"STROIDOK_SEARCH_CACHE_TTL_S": "-5"}, {"STROIDOK_SERVER_HTTP_PORT": "70000"},
    {"STROIDOK_SERVER_OAUTH_ISSUER": "http://idp.test/realms/firm"},
], ids=lambda v: next(iter(v)))
def test_an_invalid_setting_is_config_error_naming_it(variable: dict[str, str], opensearch_url: str) -> None:
    done = run(["search", "бетон"], opensearch_url, **variable)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "CONFIG_ERROR" in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert next(iter(variable)) in done.stderr.replace("\n", "") or "STROIDOK_SERVER_OAUTH" in done.stderr


def test_bytes_that_are_not_utf8_in_stats_since_are_a_config_error(opensearch_url: str) -> None:
    done = run(["stats", "--since", BAD], opensearch_url)
    assert done.returncode == 2 and "CONFIG_ERROR" in done.stderr and "Traceback" not in done.stderr
