"""How the MCP server runs tool calls: the in-flight gate, and what an answer carries (a stand-in service)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import anyio
from mcp import Client

from service.search.answer.models import Facets, Pagination, SearchMeta, SearchResponse, Suggestions, Timings
from service.server.tools import build_server
from service.settings import ServerSettings, Settings


class SlowService:
    """A stand-in for the search layer that records how many calls run inside it at once."""

    def __init__(self) -> None:
        self.running = self.most = 0
        self.lock = threading.Lock()
        self.log = self  # the server flushes ``service.log`` at shutdown

    def flush(self, _timeout: float) -> None:
        return None

    def search(self, arguments: dict[str, Any], _principal: Any, _client: Any) -> SearchResponse:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)
        with self.lock:
            self.running -= 1
        meta = SearchMeta(query=arguments["query"], total_results=0, route_used="bm25", timings=Timings(),
                          facets=Facets(), suggestions=Suggestions(),
                          pagination=Pagination(page=1, limit=10, total_pages=0, has_more=False))
        return SearchResponse(results=[], meta=meta)


def test_calls_beyond_max_inflight_wait_and_all_are_answered() -> None:
    service = SlowService()
    server = build_server(Settings(server=ServerSettings(max_inflight=3)), service=service)  # type: ignore[arg-type]
    answered: list[str] = []

    async def run() -> None:
        async with Client(server) as client:
            async def one(i: int) -> None:
                result = await client.call_tool("search_documents", {"query": f"вопрос {i}"})
                assert not result.is_error
                answered.append(result.structured_content["meta"]["query"])

            async with anyio.create_task_group() as group:
                for i in range(12):
                    group.start_soon(one, i)

    anyio.run(run)
    assert sorted(answered) == sorted(f"вопрос {i}" for i in range(12))
    assert service.most == 3


def test_an_answer_is_structured_content_and_the_same_json_compact_as_text() -> None:
    server = build_server(Settings(), service=SlowService())  # type: ignore[arg-type]

    async def run() -> Any:
        async with Client(server) as client:
            return await client.call_tool("search_documents", {"query": "ширина «эвакуационного» выхода"})

    result = anyio.run(run)
    text = result.content[0].text
    assert json.loads(text) == result.structured_content
    assert result.structured_content["meta"]["query"] == "ширина «эвакуационного» выхода"
    assert "\n" not in text and ": " not in text and "эвакуационного" in text  # compact, UTF-8


def test_an_answer_leaves_out_empty_passages_and_neighbours_but_keeps_empty_results() -> None:
    from service.search.answer.models import DocumentResponse, DocumentResult
    from service.server.tools import answer

    document = DocumentResult(id="0" * 20, title="СП 1.13130.2020", file_path="/a.pdf", file_type="pdf",
                              relevance_score=1.0)
    reply = answer(DocumentResponse(id="0" * 20, document=document, passages=[]), DocumentResponse)
    assert "neighbours" not in reply.structured_content
    assert "context_chunks" not in reply.structured_content["document"]
    assert reply.structured_content["passages"] == []  # asked for, and none matched: said so
    meta = SearchMeta(query="x", total_results=0, route_used="bm25", timings=Timings(), facets=Facets(),
                      suggestions=Suggestions(), pagination=Pagination(page=1, limit=10, total_pages=0,
                                                                        has_more=False))
    assert answer(SearchResponse(results=[], meta=meta), SearchResponse).structured_content["results"] == []


class RenderingService(SlowService):
    """A stand-in whose page renders hold until ``release`` is set (a hook, not a sleep)."""

    def __init__(self) -> None:
        super().__init__()
        self.rendering = threading.Event()
        self.release = threading.Event()

    def get_page_image(self, arguments: dict[str, Any], _principal: Any, _client: Any) -> Any:
        from service.search.answer.models import PageReply

        self.rendering.set()
        assert self.release.wait(30)
        return PageReply(id="d1", title="t", page=1, width=1, height=1, png=b"\x89PNG")

    def list_sources(self, _principal: Any, _client: Any, _arguments: Any) -> Any:
        from service.search.answer.models import SourcesResponse

        return SourcesResponse(total_documents=1, total_chunks=1, document_types={}, folders={})


def test_a_render_holds_no_tool_call_slot_and_a_render_past_the_slots_is_busy() -> None:
    """One tool-call slot and one render slot: while a render holds its slot, list_sources is answered at once;
    a second render waits render_wait_s, then RENDER_BUSY."""
    service = RenderingService()
    server = build_server(Settings(server=ServerSettings(max_inflight=1, render_slots=1, render_wait_s=0.5)),
                          service=service)  # type: ignore[arg-type]
    seen: dict[str, Any] = {}

    async def run() -> None:
        async with Client(server) as client:
            async def render() -> None:
                seen["first"] = await client.call_tool("get_page_image", {"id": "d1", "page": 1})

            async with anyio.create_task_group() as group:
                group.start_soon(render)
                await anyio.to_thread.run_sync(service.rendering.wait, 10)
                with anyio.fail_after(10):
                    seen["sources"] = await client.call_tool("list_sources", {})
                    seen["busy"] = await client.call_tool("get_page_image", {"id": "d1", "page": 1})
                service.release.set()

    anyio.run(run)
    assert not seen["sources"].is_error and seen["sources"].structured_content["total_documents"] == 1
    assert seen["busy"].is_error and "RENDER_BUSY" in seen["busy"].content[0].text
    assert not seen["first"].is_error and seen["first"].content[0].type == "image"
