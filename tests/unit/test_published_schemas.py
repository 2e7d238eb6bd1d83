"""The server as third-party clients convert it: every published tool schema through google-genai's MCP
conversion and openai-agents' strict conversion; a reply of the server's own that fails its output schema
reported as the server's error, never as the caller's arguments (a stand-in service, no engine)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from google.genai._mcp_utils import mcp_to_gemini_tool
from mcp import Client
from mcp_types import Tool

from service.search.answer.models import SourcesResponse
from service.server.errors import published_schema
from service.server.tools import build_server
from service.settings import Settings
from tests.support.servers import error_of


class Log:
    def flush(self, _timeout: float) -> None:
        return None

    def record(self, _entry: Any) -> None:
        return None


class BrokenReplies:
    """A stand-in service whose ``list_sources`` reply breaks its own published schema."""

    log = Log()

    def list_sources(self, _principal: Any, _client: Any, _arguments: Any = None) -> SourcesResponse:
        return SourcesResponse.model_construct(total_documents="many", total_chunks=0, document_types={},
                                               folders={}, most_cited={})


def published_tools() -> list[Tool]:
    async def run() -> list[Tool]:
        async with Client(build_server(Settings(), service=BrokenReplies())) as client:  # type: ignore[arg-type]
            return (await client.list_tools()).tools

    return anyio.run(run)


def test_google_genai_converts_every_published_tool() -> None:
    for tool in published_tools():
        declaration = mcp_to_gemini_tool(tool).function_declarations
        assert declaration and declaration[0].name == tool.name


def test_openai_agents_converts_every_published_tool_in_strict_mode() -> None:
    from agents.mcp import MCPServerStdio
    from agents.mcp.util import MCPUtil

    server = MCPServerStdio(params={"command": "true"}, name="stroidok")  # never started: only its conversion
    for tool in published_tools():
        converted = MCPUtil.to_function_tool(tool, server, convert_schemas_to_strict=True)
        assert converted.strict_json_schema, tool.name
        assert converted.params_json_schema["additionalProperties"] is False


def test_published_schemas_carry_no_boolean_additional_properties_at_any_depth() -> None:
    schema = {"type": "object", "additionalProperties": False, "properties": {
        "range": {"anyOf": [{"type": "object", "additionalProperties": False, "properties": {}}, {"type": "null"}]},
        "map": {"type": "object", "additionalProperties": {"type": "integer"}}}}
    assert published_schema(schema) == {"type": "object", "properties": {
        "range": {"anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]},
        "map": {"type": "object", "additionalProperties": {"type": "integer"}}}}


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # the broken reply is the point
def test_a_reply_failing_its_output_schema_is_the_servers_internal_error() -> None:
    async def run() -> Any:
        async with Client(build_server(Settings(), service=BrokenReplies())) as client:  # type: ignore[arg-type]
            return await client.call_tool("list_sources", {})

    error = error_of(anyio.run(run))
    assert error["code"] == "INTERNAL_ERROR" and "arguments" not in error["message"]
