"""The MCP surface through the SDK's real client: over stdio (as Claude Code runs it) and streamable HTTP."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Tool
from opensearchpy import OpenSearch

from service.search.request.contract import PHRASING_ADVICE
from service.settings import Settings
from tests.support.documents import REPO
from tests.support.net import free_port
from tests.support.servers import error_of, http_server, server_env

pytestmark = pytest.mark.integration

TOOLS = {"search_documents", "get_document", "list_sources", "check_citations", "get_page_image"}
CITED = "По ГОСТ 10180-2012, п. 4.1: 28 суток; табл. 2 СП 999.13330.2020"
NODE_CLIENT = REPO / "clients/node"


async def exercise(client: Client) -> dict[str, Any]:
    tools = await client.list_tools()
    found = {t.name: t for t in tools.tools}
    search = await client.call_tool("search_documents", {"query": "монтажный стык", "limit": 2})
    bad = await client.call_tool("search_documents", {"query": "", "limit": 500})
    doc_id = search.structured_content["results"][0]["id"]
    document = await client.call_tool("get_document", {"id": doc_id})
    missing = await client.call_tool("get_document", {"id": "0" * 20})
    sources = await client.call_tool("list_sources", {})
    citations = await client.call_tool("check_citations", {"text": CITED})
    by_designation = await client.call_tool("get_document", {"designation": "ГОСТ 10180-2012", "clause": "п. 4.1"})
    page = await client.call_tool("get_page_image", {"id": doc_id, "page": 1})
    return {"tools": found, "search": search, "bad": bad, "document": document, "missing": missing,
            "sources": sources, "citations": citations, "byDesignation": by_designation, "page": page}


def check(outcome: dict[str, Any]) -> None:
    tools = outcome["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations.read_only_hint is True
        assert (tool.output_schema is None) is (tool.name == "get_page_image")
    schema = tools["search_documents"].input_schema["properties"]
    assert schema["limit"]["maximum"] == 50 and schema["search_mode"]["enum"] == ["hybrid", "semantic", "fulltext"]
    # the agent is told, in the schema it sees, to ask in the norms' words and add its own alternatives
    assert PHRASING_ADVICE in schema["query"]["description"]
    assert "queries" in tools["search_documents"].description and "terminology" in tools["search_documents"].description
    assert "one request" in schema["queries"]["description"] and schema["queries"]["maxItems"] == 5
    search = outcome["search"]
    assert not search.is_error
    assert search.structured_content["status"] == "ok"
    assert search.structured_content["results"][0]["file_path"].endswith("сварка.pdf")
    assert error_of(outcome["bad"])["code"] == "INVALID_QUERY"
    assert outcome["document"].structured_content["document"]["file_type"] == "pdf"
    assert error_of(outcome["missing"])["code"] == "NOT_FOUND"
    assert outcome["sources"].structured_content["total_documents"] == 28
    # the corpus holds no such norms: each citation is checked and said missing, the text and the structure agree
    citations = outcome["citations"]
    assert [(c["cited"], c["verdict"]) for c in citations.structured_content["citations"]] == [
        ("ГОСТ 10180-2012, п. 4.1: 28 суток", "document_not_found"),
        ("табл. 2 СП 999.13330.2020", "document_not_found")]
    assert json.loads(citations.content[0].text) == citations.structured_content
    # a page as MCP image content, and no structured content a client would read instead of it
    page = outcome["page"]
    assert not page.is_error and page.structured_content is None
    assert page.content[0].type == "image" and page.content[0].mime_type == "image/png"
    assert json.loads(page.content[1].text)["page"] == 1
    missing_norm = error_of(outcome["byDesignation"])
    assert missing_norm["code"] == "NOT_FOUND" and "ГОСТ 10180-2012" in missing_norm["message"]


def test_mcp_over_stdio(opensearch_url: str, corpus_settings: Settings) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "service.cli", "serve"],
                                   env=server_env(corpus_settings.index.alias, opensearch_url))

    async def run() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            return await exercise(client)

    check(anyio.run(run))


def node_client() -> Path:
    """The TypeScript SDK client's package (`make node-client`). Without Node.js or the package the test is
    skipped, except where ``STROIDOK_REQUIRE_NODE_CLIENT`` says this machine has them (CI): there it fails."""
    missing = ("node is not on PATH" if shutil.which("node") is None else
               None if (NODE_CLIENT / "node_modules/@modelcontextprotocol/sdk").is_dir() else
               "clients/node is not installed (make node-client)")
    if missing and os.environ.get("STROIDOK_REQUIRE_NODE_CLIENT"):
        pytest.fail(f"{missing}, and STROIDOK_REQUIRE_NODE_CLIENT is set")
    if missing:
        pytest.skip(missing)
    return NODE_CLIENT


def test_mcp_over_stdio_through_claude_codes_client(opensearch_url: str, corpus_settings: Settings) -> None:
    """The client Claude Code is built on (the MCP TypeScript SDK) checks every structured result against
    the tool's output schema with Ajv and refuses one that does not match."""
    package = node_client()
    done = subprocess.run(["node", str(package / "exercise.mjs"), sys.executable, "-m", "service.cli", "serve"],
                          env=server_env(corpus_settings.index.alias, opensearch_url), capture_output=True, text=True,
                          encoding="utf-8", timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    raw = json.loads(done.stdout.splitlines()[-1])
    # what Claude Code reads of tools/list: the two tools an answer needs kept in view, a search hint on every
    # tool, and a larger result size where an answer can pass its default
    meta = {t["name"]: t.get("_meta") or {} for t in raw["tools"]}
    assert {name for name, m in meta.items() if m.get("anthropic/alwaysLoad") is True} == {"search_documents",
                                                                                          "check_citations"}
    assert all(len(m.get("anthropic/searchHint", "")) > 20 for m in meta.values())
    assert {name for name, m in meta.items() if m.get("anthropic/maxResultSizeChars", 0) > 50_000} == {
        "get_document", "check_citations"}
    check({"tools": {t["name"]: Tool.model_validate(t) for t in raw.pop("tools")},
           **{name: CallToolResult.model_validate(result) for name, result in raw.items()}})


def test_mcp_over_streamable_http(opensearch_url: str, corpus_settings: Settings) -> None:
    port = free_port()
    with http_server(server_env(corpus_settings.index.alias, opensearch_url), port) as (url, _):
        async def run() -> dict[str, Any]:
            async with Client(url, read_timeout_seconds=120) as client:
                return await exercise(client)

        check(anyio.run(run))


def test_http_bearer_tokens_map_to_groups(opensearch_url: str, corpus_settings: Settings, client: OpenSearch) -> None:
    since = datetime.now(UTC).isoformat()
    tokens = json.dumps({"public-token": ["public"], "legal-token": ["legal"]})
    port = free_port()
    query = {"query": "гидрофобизатор кремнийорганический", "search_mode": "fulltext"}
    with http_server(server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_TOKENS=tokens),
                     port) as (url, _):
        async def run(token: str | None) -> Any:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=120))
            async with Client(transport, read_timeout_seconds=120) as client:
                return await client.call_tool("search_documents", query)

        legal = anyio.run(run, "legal-token")
        public = anyio.run(run, "public-token")
        nobody = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
    assert legal.structured_content["meta"]["total_results"] == 1
    assert public.structured_content["meta"]["total_results"] == 0
    assert nobody.status_code == 401 and nobody.json()["code"] == "UNAUTHORIZED"
    assert logged_since(client, corpus_settings, since, error_code="UNAUTHORIZED")


SCHEMA_ERRORS: list[tuple[dict[str, Any], str]] = [({"query": "бетон", "limit": "abc"}, "limit"),
                 ({"query": "бетон", "search_mode": "bogus"}, "search_mode"),
                 ({}, "query"), ({"query": "бетон", "no_such_field": 1}, "no_such_field"),
                 ({"query": "бетон", "document_types": ["exe"]}, "document_types.0"),
                 ({"query": "бетон", "operator": "XOR"}, "operator")]


def logged_since(client: OpenSearch, settings: Settings, since: str, expected: int = 1,
                 **term: str) -> list[dict[str, Any]]:
    """Entries a server logged (its writer sends them in the background within about a second)."""
    index = settings.index.queries_index
    query = {"bool": {"filter": [{"range": {"timestamp": {"gte": since}}},
                                 *({"term": {k: v}} for k, v in term.items())]}}
    deadline = time.monotonic() + 15
    while True:
        client.indices.refresh(index=index)
        hits = client.search(index=index, body={"query": query, "size": 100, "sort": [{"timestamp": "asc"}]})
        if len(hits["hits"]["hits"]) >= expected or time.monotonic() > deadline:
            return [h["_source"] for h in hits["hits"]["hits"]]
        time.sleep(0.3)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_schema_level_bad_input_is_our_invalid_query_with_the_field(opensearch_url: str, corpus_settings: Settings,
                                                                    client: OpenSearch,
                                                                    transport: str) -> None:
    since = datetime.now(UTC).isoformat()
    env = server_env(corpus_settings.index.alias, opensearch_url)

    async def calls(mcp: Client) -> list[Any]:
        return [await mcp.call_tool("search_documents", arguments) for arguments, _ in SCHEMA_ERRORS]

    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=["-m", "service.cli", "serve"], env=env)

        async def run() -> list[Any]:
            async with Client(params, read_timeout_seconds=120) as mcp:
                return await calls(mcp)

        results = anyio.run(run)
    else:
        with http_server(env, free_port()) as (url, _):
            async def run_http() -> list[Any]:
                async with Client(url, read_timeout_seconds=120) as mcp:
                    return await calls(mcp)

            results = anyio.run(run_http)
    for result, (_, field) in zip(results, SCHEMA_ERRORS, strict=True):
        error = json.loads(result.content[0].text)  # the whole text is our JSON object: no SDK prefix
        assert result.is_error and error["code"] == "INVALID_QUERY", error
        assert field in [p["field"] for p in error["details"]["problems"]], error
    refused = logged_since(client, corpus_settings, since, len(SCHEMA_ERRORS), error_code="INVALID_QUERY")
    assert len(refused) == len(SCHEMA_ERRORS), "every refused call is in the query log"
    assert {"no_such_field", "query"} <= {k for e in refused for k in e["arguments"]}
