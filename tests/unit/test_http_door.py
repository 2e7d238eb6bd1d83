"""The HTTP door's decisions on ASGI scopes (a stand-in app behind it): one caller read once and handed to the app,
two Authorization headers refused, websockets closed, the well-known metadata left open; log lines of slow
connections bounded."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from loguru import logger

from service.caller.identity import SCOPE_KEY
from service.server.http import Door, Sparse
from service.settings import ServerSettings


class App:
    def __init__(self) -> None:
        self.scopes: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scopes.append(scope)


def through(door: Door, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(door(scope, None, send))
    return sent


def http(path: str = "/mcp", *headers: tuple[bytes, bytes]) -> dict[str, Any]:
    return {"type": "http", "path": path, "headers": list(headers), "client": ("10.0.0.7", 5000)}


def test_the_door_hands_the_caller_it_read_to_the_app() -> None:
    app = App()
    through(Door(app, ServerSettings(tokens={"t1": ["legal"]})), http("/mcp", (b"authorization", b"Bearer t1")))
    principal, name = app.scopes[0]["state"][SCOPE_KEY]
    assert principal.groups == ("legal", "public") and name.startswith("token:")


@pytest.mark.parametrize("values", [(b"Bearer t1", b"Bearer guess"), (b"Bearer guess", b"Bearer t1"),
                                    (b"Bearer t1", b"Bearer t1")])
def test_two_authorization_headers_are_400_whatever_they_hold(values: tuple[bytes, bytes]) -> None:
    app = App()
    sent = through(Door(app, ServerSettings(tokens={"t1": ["legal"]})),
                   http("/mcp", *((b"authorization", v) for v in values)))
    assert sent[0]["status"] == 400 and app.scopes == []


def test_an_open_server_still_allows_one_header_only() -> None:
    app = App()
    sent = through(Door(app, ServerSettings()), http("/mcp", (b"authorization", b"a"), (b"Authorization", b"b")))
    assert sent[0]["status"] == 400 and app.scopes == []


def test_a_websocket_is_closed_before_the_app() -> None:
    app = App()
    sent = through(Door(app, ServerSettings()), {"type": "websocket", "path": "/mcp", "headers": []})
    assert sent == [{"type": "websocket.close", "code": 1008}] and app.scopes == []


def test_the_metadata_is_served_without_a_token_and_a_refusal_points_to_it() -> None:
    settings = ServerSettings(tokens={"t1": ["legal"]}, oauth_issuer="http://idp.test/r",
                              oauth_jwks_url="http://idp.test/r/certs", oauth_audience="http://s.test:8765/mcp")
    app = App()
    door = Door(app, settings)
    assert through(door, http("/.well-known/oauth-protected-resource/mcp")) == [] and len(app.scopes) == 1
    refused = through(door, http("/mcp"))
    challenge = dict(refused[0]["headers"])[b"www-authenticate"].decode()
    assert refused[0]["status"] == 401
    assert challenge == 'Bearer resource_metadata="http://s.test:8765/.well-known/oauth-protected-resource/mcp"'


def test_a_flood_of_slow_connections_logs_one_line_a_minute() -> None:
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(str(message)), level="INFO")
    try:
        sparse = Sparse(every_s=60)
        logged = [sparse.info("closing a slow connection") for _ in range(500)]
    finally:
        logger.remove(sink)
    assert logged.count(True) == 1 and len(lines) == 1


@pytest.mark.parametrize("path", ["/.well-known/../mcp", "/.well-known/anything",
                                  "/.well-known/oauth-protected-resourcex"])
def test_only_the_metadata_paths_are_open(path: str) -> None:
    settings = ServerSettings(oauth_issuer="http://idp.test/r", oauth_jwks_url="http://idp.test/r/certs",
                              oauth_audience="http://s.test:8765/mcp")
    app = App()
    assert through(Door(app, settings), http(path))[0]["status"] == 401 and app.scopes == []


def test_the_default_body_limit_holds_the_largest_valid_call_however_escaped() -> None:
    from service.search.request.schema import largest_call_bytes

    assert ServerSettings().max_body_bytes >= largest_call_bytes()


def test_serving_http_refuses_a_body_limit_under_the_largest_valid_call() -> None:
    from service.errors import ConfigError
    from service.server.http import check_door

    with pytest.raises(ConfigError, match="largest valid tool call"):
        check_door(ServerSettings(max_body_bytes=64 * 1024, tokens={"t" * 20: ["public"]}))
    check_door(ServerSettings(tokens={"t" * 20: ["public"]}))
