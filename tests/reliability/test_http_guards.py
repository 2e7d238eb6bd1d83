"""The HTTP transport per the MCP security guidance, on a non-loopback bind address: Host and Origin
validated (DNS rebinding), no request without a valid token gets anything but UNAUTHORIZED, bodies
bounded (413), every tool rate-limited per token, no stack trace in any error. All traffic goes to
127.0.0.1."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from service.settings import ServerSettings, Settings
from tests.support.net import free_port
from tests.support.servers import http_server, server_env

pytestmark = pytest.mark.integration

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
HEADER_TIMEOUT_S = 2.0


def call(name: str, arguments: dict[str, Any], id_: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def payload(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a JSON or single-event SSE response."""
    text = response.text
    if "data:" in text:
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    parsed: dict[str, Any] = json.loads(text)
    return parsed


@pytest.fixture(scope="module")
def guarded(opensearch_url: str, corpus_settings: Settings) -> Iterator[str]:
    port = free_port()
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_HOST="0.0.0.0",
                     STROIDOK_SERVER_TOKENS=json.dumps({"good-token-1": ["public"], "good-token-2": ["public"],
                                                           "good-token-3": ["public"], "good-token-4": ["public"]}),
                     STROIDOK_SEARCH_RATE_LIMIT="3/minute",
                     STROIDOK_SEARCH_REFUSED_RATE_LIMIT="100000/minute",
                     STROIDOK_SERVER_HEADER_TIMEOUT_S=str(HEADER_TIMEOUT_S))
    with http_server(env, port) as (url, _):
        yield url


def post(url: str, body: dict[str, Any] | bytes, token: str | None = "good-token-1", **headers: str) -> httpx2.Response:
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(url, content=content, headers={**ACCEPT, **auth, **headers}, timeout=60)


def test_a_valid_token_with_loopback_host_is_served(guarded: str) -> None:
    response = post(guarded, INIT)
    assert response.status_code == 200, response.text
    assert payload(response)["result"]["serverInfo"]["name"] == "stroidok-search"


def test_a_tool_call_is_answered_as_one_json_body(guarded: str) -> None:
    """``json_response`` (the default): no SSE stream wrapping a single message."""
    response = post(guarded, call("list_sources", {}, id_=7), token="good-token-3")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["id"] == 7 and "result" in response.json()


@pytest.mark.parametrize("token", [None, "good-token", "good-token-1x", "GOOD-TOKEN-1", ""])
def test_without_a_valid_token_nothing_but_unauthorized(guarded: str, token: str | None) -> None:
    for body in (INIT, call("list_sources", {}), call("search_documents", {"query": "бетон"})):
        response = post(guarded, body, token=token)
        assert response.status_code == 401
        assert response.json() == {"status": "error", "code": "UNAUTHORIZED", "details": {},
                                   "message": "a valid bearer token is required (Authorization: Bearer <token>)"}


def test_a_foreign_host_header_is_refused_on_a_wildcard_bind(guarded: str) -> None:
    response = post(guarded, INIT, Host="evil.example:80")
    assert response.status_code in (400, 403, 421)
    assert "Traceback" not in response.text


def test_a_foreign_origin_is_refused(guarded: str) -> None:
    response = post(guarded, INIT, Origin="http://evil.example")
    assert response.status_code in (400, 403)


def test_a_large_body_is_refused_with_413(guarded: str) -> None:
    big = dict(call("search_documents", {"query": "б" * (ServerSettings().max_body_bytes // 6 + 1)}))
    assert post(guarded, json.dumps(big).encode()).status_code == 413


def test_the_longest_text_the_contract_takes_is_not_413_however_escaped(guarded: str) -> None:
    """20,000 Cyrillic characters, each sent as a ``\\uXXXX`` escape: 120 KB, over the old 64 KB limit."""
    cited = "СП 54.13330.2016, п. 5.8: не менее 2,7 м. "
    text = cited + "ж" * (20_000 - len(cited))
    body = json.dumps(call("check_citations", {"text": text}, id_=30), ensure_ascii=True).encode()
    assert len(body) > 64 * 1024
    response = post(guarded, body, token="good-token-4")
    assert response.status_code == 200, response.text[:300]
    assert not payload(response)["result"].get("isError"), payload(response)


def test_every_tool_is_rate_limited_per_token(guarded: str) -> None:
    codes = []
    for i in range(4):
        response = post(guarded, call("list_sources", {}, id_=10 + i), token="good-token-2")
        result = payload(response)["result"]
        codes.append(json.loads(result["content"][0]["text"][result["content"][0]["text"].index("{"):])["code"]
                     if result.get("isError") else "ok")
    assert codes == ["ok", "ok", "ok", "RATE_LIMIT"]
    # another token has its own window
    response = post(guarded, call("list_sources", {}, id_=20), token="good-token-1")
    assert not payload(response)["result"].get("isError")


def closed_by_peer(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` (reading gives end of file or a reset)."""
    try:
        return sock.recv(1024) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_a_client_sending_its_headers_slowly_is_cut_off_while_others_are_served(guarded: str) -> None:
    port = int(guarded.split(":")[2].split("/")[0])
    began = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=0.5) as slow:
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        cut = False
        for byte in b"X-Slow: " + b"a" * 40:  # one header byte every 0.25 s: never a complete header block
            try:
                slow.sendall(bytes([byte]))
            except (ConnectionResetError, BrokenPipeError):
                cut = True
                break
            if closed_by_peer(slow):
                cut = True
                break
            if time.monotonic() - began < HEADER_TIMEOUT_S:  # meanwhile a whole request is answered
                assert post(guarded, INIT, token="good-token-2").status_code == 200
        assert cut, "the slow client still held its connection"
        assert HEADER_TIMEOUT_S - 0.5 <= time.monotonic() - began <= HEADER_TIMEOUT_S + 3


def raw_request(port: int, body: bytes, token: str) -> bytes:
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def read_response(sock: socket.socket) -> bytes:
    """One whole HTTP/1.1 response with a Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":",
                                 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return head


def test_a_kept_alive_connection_waits_for_its_next_request_beyond_the_header_deadline(guarded: str) -> None:
    """The deadline runs from a request's first byte: an idle kept-alive connection is the keep-alive's business."""
    port = int(guarded.split(":")[2].split("/")[0])
    request = raw_request(port, json.dumps(INIT).encode(), "good-token-2")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        for _ in range(2):
            sock.sendall(request)
            assert read_response(sock).startswith(b"HTTP/1.1 200")
            sock.settimeout(0.5)
            time.sleep(HEADER_TIMEOUT_S + 1)
            assert not closed_by_peer(sock), "an idle kept-alive connection was closed by the header deadline"
            sock.settimeout(30)
