"""Third-party MCP clients against ``stroidok serve``, as users' tools meet it: the official conformance suite's
server scenarios that apply to a tools-only server (over streamable HTTP), and an MCP Inspector CLI session
(tools/list, a search, a bad argument, get_document, list_sources) over stdio and HTTP. Both run on Node.js 22
installed from the npm registry into ``clients/third_party`` (``make third-party-clients``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.settings import Settings
from tests.support.documents import REPO
from tests.support.servers import http_server, server_env

pytestmark = pytest.mark.integration

CLIENTS = REPO / "clients" / "third_party"
BIN = CLIENTS / "node_modules" / ".bin"
#: the suite's server scenarios a server of tools alone answers (the others call the suite's own test tools,
#: prompts, resources, logging or completions, which this server does not offer and does not advertise)
SCENARIOS = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")


def installed() -> Path:
    """The clients' bin folder; skipped without npm's install of them, except on a machine that has npm and
    says so (``STROIDOK_REQUIRE_NODE_CLIENT``, set by CI): there their absence fails."""
    missing = None if (BIN / "conformance").exists() and (BIN / "mcp-inspector").exists() else \
        "clients/third_party is not installed (make third-party-clients; needs npm)"
    if missing and os.environ.get("STROIDOK_REQUIRE_NODE_CLIENT"):
        pytest.fail(f"{missing}, and STROIDOK_REQUIRE_NODE_CLIENT is set")
    if missing:
        pytest.skip(missing)
    return BIN


def node_env(tmp_path: Path) -> dict[str, str]:
    """Node.js 22 of the package first on PATH (the machine's may be older); the Inspector's catalog in a
    throwaway home."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}


@pytest.fixture(scope="module")
def http_url(opensearch_url: str, corpus_settings: Settings) -> Iterator[str]:
    with http_server(server_env(corpus_settings.index.alias, opensearch_url)) as (url, _):
        yield url


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_official_conformance_suite_passes(http_url: str, scenario: str, tmp_path: Path) -> None:
    run = subprocess.run([str(installed() / "conformance"), "server", "--url", http_url, "--scenario", scenario],
                         env=node_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " 0 failed" in run.stdout and "Passed: 0/" not in run.stdout


def inspector(target: list[str], method: str, tmp_path: Path, *arguments: str) -> tuple[int, Any]:
    """One Inspector CLI call: its exit code and the JSON it printed."""
    run = subprocess.run([str(installed() / "mcp-inspector"), "--cli", *target, "--method", method, *arguments],
                         env=node_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert "{" in run.stdout, f"the Inspector printed no JSON (exit {run.returncode}): {run.stderr[-800:]}"
    return run.returncode, json.loads(run.stdout[run.stdout.index("{"):])


def tool(result: dict[str, Any]) -> dict[str, Any]:
    """A tool call's reply: the product's JSON in its text block."""
    parsed: dict[str, Any] = json.loads(result["content"][0]["text"])
    return parsed


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_inspector_session(transport: str, http_url: str, opensearch_url: str, corpus_settings: Settings,
                              tmp_path: Path) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url)
    stdio = [*(f"-e{k}={v}" for k, v in env.items() if k.startswith(("STROIDOK_", "OPENSEARCH_"))),
             str(shutil.which("stroidok", path=str(REPO / ".venv" / "bin")) or REPO / ".venv/bin/stroidok"), "serve"]
    target = stdio if transport == "stdio" else [http_url]
    code, listed = inspector(target, "tools/list", tmp_path)
    assert code == 0 and {t["name"] for t in listed["tools"]} == {"search_documents", "get_document", "list_sources",
                                                                      "check_citations", "get_page_image"}
    code, found = inspector(target, "tools/call", tmp_path, "--tool-name", "search_documents",
                            "--tool-arg", "query=монтажный стык", "--tool-arg", "limit=2")
    assert code == 0 and not found.get("isError") and tool(found)["results"][0]["file_path"].endswith("сварка.pdf")
    _, bad = inspector(target, "tools/call", tmp_path, "--tool-name", "search_documents",
                       "--tool-arg", "query=бетон", "--tool-arg", "limit=500")
    assert bad["isError"] and tool(bad)["code"] == "INVALID_QUERY"
    code, document = inspector(target, "tools/call", tmp_path, "--tool-name", "get_document",
                               "--tool-arg", f"id={tool(found)['results'][0]['id']}")
    assert code == 0 and tool(document)["document"]["file_type"] == "pdf"
    code, sources = inspector(target, "tools/call", tmp_path, "--tool-name", "list_sources")
    assert code == 0 and tool(sources)["total_documents"] == 28
