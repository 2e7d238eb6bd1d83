"""Real outputs of the MCP tools for docs/tool-examples.md, taken through the SDK's client over stdio (and
HTTP for UNAUTHORIZED), against the configured index (`make demo` fills it with the demo sample).

    .venv/bin/python scripts/tool_examples.py > docs/tool-examples.md
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

QUERY = "требования к ширине эвакуационных выходов"


def server(**env: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "service.cli", "serve"],
                                 env={**os.environ, "DO_NOT_TRACK": "1", **env})


def shown(result: Any) -> dict[str, Any]:
    if result.is_error:
        return json.loads(result.content[0].text)
    if result.structured_content is None:  # an image tool: its blocks, the image by its type and size
        return {"content": [{"type": "image", "mimeType": b.mime_type, "data": f"<{len(b.data) * 3 // 4} bytes of "
                             "PNG, base64>"} if b.type == "image" else {"type": b.type, "text": json.loads(b.text)}
                            for b in result.content]}
    return result.structured_content


async def calls(params: StdioServerParameters,
                todo: list[tuple[str, str, dict[str, Any]]]) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    out = []
    async with Client(params, read_timeout_seconds=120) as client:
        for title, tool, arguments in todo:
            out.append((title, tool, arguments, shown(await client.call_tool(tool, arguments))))
    return out


def unauthorized() -> dict[str, Any]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "STROIDOK_SERVER_TOKENS": json.dumps({"secret-token": ["public"]})}
    process = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--http", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                response = httpx.post(f"http://127.0.0.1:{port}/mcp", json={"jsonrpc": "2.0", "id": 1,
                                                                           "method": "tools/list"}, timeout=10)
                return {"http_status": response.status_code, "body": response.json()}
            except httpx.TransportError:
                time.sleep(0.3)
        raise RuntimeError("the HTTP server did not start")
    finally:
        process.terminate()
        process.wait(10)


def block(title: str, tool: str, arguments: dict[str, Any], output: dict[str, Any]) -> str:
    call = json.dumps(arguments, ensure_ascii=False)
    return f"### {title}\n\n`{tool}` `{call}`\n\n```json\n{json.dumps(output, ensure_ascii=False, indent=2)}\n```\n"


def main() -> None:
    first = anyio.run(calls, server(), [
        ("A default search (hybrid, AUTO), one document, two chunks", "search_documents",
         {"query": QUERY, "limit": 1, "max_chunks": 2}),
    ])
    chunk_id = first[0][3]["results"][0]["context_chunks"][0]["chunk_id"]
    folder = first[0][3]["results"][0]["file_path"].rsplit("/", 1)[0]
    done = first + anyio.run(calls, server(), [
        ("Minimum similarity inside the engine (`threshold`), fulltext, one folder", "search_documents",
         {"query": QUERY, "limit": 2, "max_chunks": 1, "search_mode": "fulltext", "threshold": 0.3,
          "folder": folder, "include_context": False}),
        ("A misspelled query: correction and related queries", "search_documents",
         {"query": "пожарнай безопастности", "search_mode": "fulltext", "limit": 1}),
        ("A page past the end: an empty success", "search_documents", {"query": QUERY, "limit": 5, "page": 150}),
        ("A chunk by its id, with its neighbours", "get_document", {"id": chunk_id}),
        ("A document's best passages for a question (`query`: every chunk of it ranked)", "get_document",
         {"id": chunk_id.split(":")[0], "query": "ширина эвакуационного выхода в свету не менее"}),
        ("Citations checked: found (with a stated value), a clause the document lacks, an edition the archive "
         "lacks, a document it lacks", "check_citations",
         {"text": "Ширина эвакуационного выхода — по СП 1.13130.2020, п. 5.1.4: не менее 1,2 м (п. 4.2.5: не менее "
                  "1,5 м); см. также п. 4.2.99 СП 1.13130.2020, табл. 1 ГОСТ 27772-2021, СП 1.13130.2009 п. 4.2.5 и "
                  "ГОСТ 99999-2020."}),
        ("A clause opened by its citation (`designation`, `clause`)", "get_document",
         {"designation": "СП 1.13130", "clause": "п. 5.1.4"}),
        ("A page of a PDF as an image (for a scan's table)", "get_page_image",
         {"id": chunk_id.split(":")[0], "page": 2}),
        ("What is indexed", "list_sources", {}),
        ("INVALID_QUERY: schema-level errors, every field named", "search_documents",
         {"query": "", "limit": "abc", "search_mode": "bogus"}),
        ("INVALID_QUERY: an unknown argument", "search_documents", {"query": "бетон", "no_such_field": 1}),
        ("INVALID_QUERY: a cursor of another query", "search_documents",
         {"query": "бетон", "cursor": "eyJvIjogMTAsICJmIjogIjAwMDAwMDAwMDAwMCJ9"}),
        ("NOT_FOUND: an unknown (or unreadable) id", "get_document", {"id": "0" * 20}),
        ("NOT_FOUND: a clause the document lacks, opened by citation", "get_document",
         {"designation": "СП 1.13130.2020", "clause": "4.2.99"}),
    ])
    done += anyio.run(calls, server(STROIDOK_SEARCH_RATE_LIMIT="1/minute"), [
        ("(first call, allowed)", "list_sources", {}),
        ("RATE_LIMIT: the second call within the window", "list_sources", {}),
    ])[1:]
    done += anyio.run(calls, server(OPENSEARCH_URL="http://127.0.0.1:9"), [
        ("INDEX_UNAVAILABLE: the engine is down", "search_documents", {"query": "бетон"}),
    ])
    print("# MCP tools: real outputs\n\n"
          "Generated by `.venv/bin/python scripts/tool_examples.py > docs/tool-examples.md` "
          "on the demo index (`make demo`), through the MCP SDK's client over stdio; UNAUTHORIZED over HTTP.\n")
    for title, tool, arguments, output in done:
        print(block(title, tool, arguments, output))
    print(block("UNAUTHORIZED: HTTP without a valid bearer token", "POST /mcp", {"method": "tools/list"},
                unauthorized()))


if __name__ == "__main__":
    main()
