"""The committed .mcp.json (and `stroidok mcp-config`) start the server from any working directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from service.settings import Settings
from tests.support.documents import REPO
from tests.support.servers import server_env

pytestmark = pytest.mark.integration


def list_tools(command: str, args: list[str], env: dict[str, str], cwd: Path) -> set[str]:
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))

    async def run() -> set[str]:
        async with Client(params, read_timeout_seconds=120) as client:
            found = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("search_documents", {"query": "бетон", "limit": 1})
            assert not result.is_error, result.content
            return found

    return anyio.run(run)


@pytest.mark.skipif(not (REPO / ".venv" / "bin" / "stroidok").exists(), reason="needs the repo's .venv (make install)")
@pytest.mark.parametrize("where", ["subdirectory", "outside with STROIDOK_HOME"])
def test_committed_mcp_json_starts_the_server(opensearch_url: str, corpus_settings: Settings, tmp_path: Path,
                                              where: str) -> None:
    entry = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["stroidok"]
    env = {**server_env(corpus_settings.index.alias, opensearch_url), **entry["env"]}
    cwd = REPO / "docs"
    if where != "subdirectory":
        env["STROIDOK_HOME"], cwd = str(REPO), tmp_path
    assert "search_documents" in list_tools(entry["command"], entry["args"], env, cwd)


def test_mcp_config_prints_an_absolute_entry_that_works_anywhere(opensearch_url: str, corpus_settings: Settings,
                                                                 tmp_path: Path) -> None:
    printed = subprocess.run([sys.executable, "-m", "service.cli", "mcp-config"], capture_output=True, text=True,
                             check=True, timeout=60).stdout
    entry = json.loads(printed)["mcpServers"]["stroidok"]
    assert Path(entry["command"]).is_absolute()
    env = {**server_env(corpus_settings.index.alias, opensearch_url), **entry["env"]}
    assert "search_documents" in list_tools(entry["command"], entry["args"], env, tmp_path)
