"""What third-party MCP clients found at the edges of the server, each through the SDK's client on a real node:
``list_sources`` where nothing dated is visible, strict argument types as published, no advertised feature the
server does not have, its version, and descriptions as an agent reads them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.embedders.navec import NavecEmbedder
from service.engine.index_admin.apply import apply_all
from service.search.service import SearchService
from service.server.tools import build_server
from service.settings import Settings
from tests.support.engine import drop_index_resources, product_settings
from tests.support.servers import error_of

pytestmark = pytest.mark.integration


def served(settings: Settings, client: OpenSearch, embedder: NavecEmbedder) -> Any:
    settings.search.rate_limit, settings.search.cache_ttl_s = "100000/minute", 0
    return build_server(settings, service=SearchService(settings, client, embedder))


def call(server: Any, tool: str, arguments: dict[str, Any]) -> Any:
    async def run() -> Any:
        async with Client(server) as mcp:
            return await mcp.call_tool(tool, arguments)

    return anyio.run(run)


@pytest.fixture
def empty_index(opensearch_url: str, client: OpenSearch) -> Iterator[Settings]:
    settings = product_settings(opensearch_url)
    apply_all(client, settings.index)
    yield settings
    drop_index_resources(client, settings.index)


@pytest.fixture
def nothing_visible(opensearch_url: str, client: OpenSearch, navec_embedder: NavecEmbedder,
                    tmp_path: Path) -> Iterator[Settings]:
    """An archive whose every file is readable by the legal group only; the caller is not in it."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "договор.txt").write_text("Договор подряда на устройство фундаментов.", encoding="utf-8")
    rules = tmp_path / "access.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "*", "groups": ["legal"]}]}), encoding="utf-8")
    settings = product_settings(opensearch_url, access_rules=rules)
    assert not run_ingest(IngestOptions([tmp_path / "docs"]), settings, client, navec_embedder, quiet=True).failed
    yield settings
    drop_index_resources(client, settings.index)


def test_list_sources_on_a_fresh_empty_index_answers_with_no_dates(
        empty_index: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    result = call(served(empty_index, client, navec_embedder), "list_sources", {})
    assert not result.is_error, result.content[0].text
    assert result.structured_content["total_documents"] == 0 and "earliest" not in result.structured_content


def test_list_sources_for_a_caller_who_sees_nothing_answers_zero(
        nothing_visible: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    result = call(served(nothing_visible, client, navec_embedder), "list_sources", {})
    assert not result.is_error, result.content[0].text
    assert result.structured_content["total_documents"] == 0 and result.structured_content["folders"] == {}


def test_list_sources_scoped_to_a_folder(nothing_visible: Settings, client: OpenSearch,
                                         navec_embedder: NavecEmbedder) -> None:
    nothing_visible.server.groups = ["legal"]
    server = served(nothing_visible, client, navec_embedder)
    assert call(server, "list_sources", {}).structured_content["total_documents"] == 1
    assert call(server, "list_sources", {"folder": "docs"}).structured_content["total_documents"] == 1
    assert call(server, "list_sources", {"folder": "другое"}).structured_content["total_documents"] == 0


@pytest.mark.parametrize("arguments", [{"limit": "3"}, {"limit": 3.0}, {"limit": True}, {"limit": None},
                                       {"search_mode": None}, {"include_context": "yes"}, {"max_chunks": "2"},
                                       {"page": None}], ids=repr)
def test_a_value_the_published_schema_forbids_is_refused_not_coerced(
        empty_index: Settings, client: OpenSearch, navec_embedder: NavecEmbedder, arguments: dict[str, Any]) -> None:
    result = call(served(empty_index, client, navec_embedder), "search_documents", {"query": "бетон", **arguments})
    error = error_of(result)
    assert error["code"] == "INVALID_QUERY" and [p["field"] for p in error["details"]["problems"]] == list(arguments)


@pytest.mark.parametrize("arguments", [{"threshold": None}, {"threshold": 1}, {"cursor": None}, {"limit": 3}],
                         ids=repr)
def test_values_the_published_schema_admits_are_taken(
        empty_index: Settings, client: OpenSearch, navec_embedder: NavecEmbedder, arguments: dict[str, Any]) -> None:
    result = call(served(empty_index, client, navec_embedder), "search_documents", {"query": "бетон", **arguments})
    assert not result.is_error, result.content[0].text


def test_the_server_advertises_only_tools_names_its_version_and_refuses_prompts_as_unknown(
        empty_index: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    async def run() -> tuple[Any, Any, Any, MCPError]:
        async with Client(served(empty_index, client, navec_embedder)) as mcp:
            tools = await mcp.list_tools()
            with pytest.raises(MCPError) as refused:
                await mcp.get_prompt("anything", {})
            return mcp.server_capabilities, mcp.server_info, tools, refused.value

    capabilities, info, tools, refused = anyio.run(run)
    assert capabilities.tools is not None
    assert capabilities.prompts is None and capabilities.resources is None
    assert info.version == version("stroidok") and info.version
    assert refused.error.code == -32601  # method not found, not code 0 with a traceback
    for tool in tools.tools:
        assert tool.description and "\n    " not in tool.description and not tool.description.startswith(" ")
