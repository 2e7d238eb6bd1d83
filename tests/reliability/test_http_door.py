"""The HTTP door shut where it matters: no open non-loopback server unless asked, HTTPS with the configured
certificate, refused calls limited per address and logged compactly (and counted by stats), idle connections
unable to starve an authenticated caller. Everything through ``stroidok serve --http`` as a user starts it."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from opensearchpy import OpenSearch

from service.settings import Settings
from tests.support.crash import REPO
from tests.support.net import free_port
from tests.support.servers import http_server, server_env
from tests.support.tls import make_ca_and_server_cert

pytestmark = pytest.mark.integration
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def post(url: str, token: str | None, **client: object) -> httpx2.Response:
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.post(url, content=json.dumps(INIT).encode(), headers={**ACCEPT, **auth}, timeout=30,
                       **client)  # type: ignore[arg-type]


def test_a_non_loopback_address_without_tokens_is_refused_unless_allowed(tmp_path: Path, corpus_settings: Settings,
                                                                          opensearch_url: str) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_HOST="0.0.0.0")
    port = free_port()
    refused = subprocess.run([sys.executable, "-m", "service.cli", "serve", "--http", str(port)], env=env, cwd=REPO,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "CONFIG_ERROR" in refused.stderr and "--allow-open" in refused.stderr
    log = tmp_path / "server.log"
    with http_server({**env, "STROIDOK_SERVER_ALLOW_OPEN": "true"}, port, log_path=log) as (url, _):
        assert post(url, None).status_code == 200
    assert "without tokens" in log.read_text()


def test_https_serves_with_the_configured_certificate_and_a_client_checks_it(
        tmp_path: Path, corpus_settings: Settings, opensearch_url: str) -> None:
    ca, cert, key = make_ca_and_server_cert(tmp_path / "tls")
    port = free_port()
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_TOKENS='{"t-1": ["public"]}',
                     STROIDOK_SERVER_TLS_CERTFILE=str(cert), STROIDOK_SERVER_TLS_KEYFILE=str(key))
    with http_server(env, port):
        url = f"https://127.0.0.1:{port}/mcp"
        assert post(url, "t-1", verify=ssl.create_default_context(cafile=str(ca))).status_code == 200
        with pytest.raises(httpx2.ConnectError):  # an unknown CA is refused by a verifying client
            post(url, "t-1")
        with pytest.raises(httpx2.HTTPError):  # no plain HTTP on the TLS port
            post(f"http://127.0.0.1:{port}/mcp", "t-1")


def test_refused_calls_are_limited_per_address_logged_compactly_and_counted_by_stats(
        corpus_settings: Settings, opensearch_url: str, client: OpenSearch) -> None:
    alias = corpus_settings.index.alias
    env = server_env(alias, opensearch_url, STROIDOK_SERVER_TOKENS='{"t-1": ["public"]}',
                     STROIDOK_SEARCH_REFUSED_RATE_LIMIT="5/minute")
    began = time.time()
    with http_server(env) as (url, _):
        statuses = [post(url, f"wrong-{i}" * 2000 if i % 2 else None).status_code for i in range(12)]
        assert statuses == [401] * 5 + [429] * 7
        assert post(url, "t-1").status_code == 200  # a caller with a token is not the flood's victim
    queries = corpus_settings.index.queries_index
    deadline = time.monotonic() + 20
    while True:
        client.indices.refresh(index=queries)
        hits = client.search(index=queries, body={"size": 50, "query": {"bool": {"filter": [
            {"term": {"error_code": "UNAUTHORIZED"}}, {"range": {"timestamp": {"gte": int(began * 1000)}}}]}}})
        entries = [h["_source"] for h in hits["hits"]["hits"]]
        if len(entries) >= 5 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(entries) == 5  # the 7 past the limit were not logged
    assert all(len(json.dumps(e)) < 1024 and e["groups"] == ["public"] for e in entries)
    stats_env = {**server_env(alias, opensearch_url), "STROIDOK_SERVER_GROUPS": '["public"]'}
    done = subprocess.run([sys.executable, "-m", "service.cli", "stats", "--since", "1h", "--json"], env=stats_env,
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    assert json.loads(done.stdout)["errors"].get("UNAUTHORIZED", 0) >= 5


def test_idle_connections_cannot_starve_an_authenticated_caller(corpus_settings: Settings,
                                                                opensearch_url: str) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_TOKENS='{"t-1": ["public"]}',
                     STROIDOK_SERVER_MAX_CONNECTIONS="20", STROIDOK_SERVER_HEADER_TIMEOUT_S="60")
    with http_server(env) as (url, _):
        port = int(url.split(":")[2].split("/")[0])
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]  # silent: no byte sent
        try:
            time.sleep(0.5)
            for _ in range(3):
                assert post(url, "t-1").status_code == 200
        finally:
            for connection in held:
                connection.close()


def raw(port: int, head: bytes, body: bytes = b"") -> bytes:
    """One request written as given on a fresh connection; the response's head (status line and headers)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(head + body)
        data = b""
        while b"\r\n\r\n" not in data and (chunk := connection.recv(65536)):
            data += chunk
    return data


def test_two_authorization_headers_are_refused_and_counted_whichever_comes_first(
        corpus_settings: Settings, opensearch_url: str) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_TOKENS='{"t-1": ["public"]}',
                     STROIDOK_SEARCH_REFUSED_RATE_LIMIT="3/minute")
    with http_server(env) as (url, _):
        port = int(url.split(":")[2].split("/")[0])
        body = json.dumps(INIT).encode()
        for first, second in (("t-1", "guess-1"), ("guess-2", "t-1"), ("t-1", "t-1")):
            head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {first}\r\n"
                    f"Authorization: Bearer {second}\r\nAccept: application/json, text/event-stream\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")
            answer = raw(port, head.encode(), body)
            assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
        # counted as refused: the address's refused-call limit (3) is spent, so a fourth guess is 429
        assert post(url, "guess-3").status_code == 429
        assert post(url, "t-1").status_code == 200


def closed_by_server(connection: socket.socket, wait_s: float = 0.2) -> bool:
    """Whether the server has closed ``connection``: its end of stream arrives within ``wait_s``, after whatever it
    sent first (a connection uvicorn answered with its own 503 while over its limit holds that answer, then ends)."""
    connection.settimeout(wait_s)
    try:
        while connection.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        pass
    return True


def test_a_connection_answered_then_closed_counts_as_closed_and_a_silent_one_as_open() -> None:
    answered, server_end = socket.socketpair()
    silent, other_end = socket.socketpair()
    try:
        server_end.sendall(b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\r\n")
        server_end.close()
        assert closed_by_server(answered)
        assert not closed_by_server(silent)
    finally:
        for end in (answered, silent, other_end):
            end.close()


def test_silent_request_bodies_cannot_hold_the_connections(corpus_settings: Settings, opensearch_url: str) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_TOKENS='{"t-1": ["public"]}',
                     STROIDOK_SERVER_MAX_CONNECTIONS="100", STROIDOK_SERVER_BODY_TIMEOUT_S="4")
    with http_server(env) as (url, _):
        port = int(url.split(":")[2].split("/")[0])
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer t-1\r\n"
                "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
                "Content-Length: 60000\r\n\r\n{").encode()
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(110)]
        try:
            for connection in held:
                connection.sendall(head)  # complete headers, one byte of a 60,000-byte body, then silence
            time.sleep(1.5)  # silent for longer than a body may be when room is made
            statuses = [post(url, "t-1").status_code for _ in range(5)]
            assert statuses == [200] * 5  # every other caller is served, none gets 503
            time.sleep(4)  # past the body deadline every silent connection is closed
            assert sum(not closed_by_server(connection) for connection in held) == 0
        finally:
            for connection in held:
                connection.close()


def test_a_websocket_upgrade_gets_no_socket(corpus_settings: Settings, opensearch_url: str) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SERVER_TOKENS='{"t-1": ["public"]}')
    with http_server(env) as (url, _):
        port = int(url.split(":")[2].split("/")[0])
        head = (f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
        answer = raw(port, head)
        assert not answer.startswith(b"HTTP/1.1 101")  # never switched to a websocket
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]  # and, without a token, refused at the guard
