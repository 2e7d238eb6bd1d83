"""The streamable-HTTP transport: DNS-rebinding protection, the bearer-token guard, and uvicorn with the
product's limits (connections, body size, keep-alive, header-read timeout); stdio for Claude Code."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
import h11
from loguru import logger
from mcp.server.transport_security import TransportSecuritySettings
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.caller.principal import known_token
from service.errors import ConfigError, RateLimited, StroidokError, Unauthorized
from service.server.errors import error_text
from service.server.tools import ProductServer, build_server, run_stdio
from service.settings import ServerSettings, Settings


def transport_security(settings: ServerSettings) -> TransportSecuritySettings:
    """DNS-rebinding protection on every bind address (the SDK enables it only for loopback names):
    Host and Origin must be loopback, the bind address, or listed in settings."""
    hosts = ["127.0.0.1", "localhost", "[::1]"] + ([settings.host] if settings.host not in ("0.0.0.0", "::") else [])
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + [h for h in hosts] + settings.allowed_hosts,
        allowed_origins=[f"http://{h}:*" for h in hosts] + [f"https://{h}:*" for h in hosts] + settings.allowed_origins,
    )


class RequireToken:
    """ASGI guard: with tokens configured, a request without a valid bearer token gets 401 and our
    ``UNAUTHORIZED`` object, before the MCP layer sees it (no session, no tool list)."""

    def __init__(self, app: Any, settings: ServerSettings, server: ProductServer | None = None) -> None:
        self.app, self.settings, self.server = app, settings, server

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.settings.tokens:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if known_token(self.settings, headers.get("authorization")) is None:
                await self._refuse(scope, send)
                return
        await self.app(scope, receive, send)

    async def _refuse(self, scope: dict[str, Any], send: Any) -> None:
        """401 with ``UNAUTHORIZED``, logged compactly; past the refused-call limit of the address, 429 with
        ``RATE_LIMIT`` and nothing logged."""
        error: StroidokError = Unauthorized("a valid bearer token is required (Authorization: Bearer <token>)")
        status, headers = 401, [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
        if (on_refused := getattr(self.server, "on_refused", None)) is not None:  # set by the lifespan
            client = scope.get("client") or ("?", 0)
            try:
                on_refused("http", {}, error, f"addr:{client[0]}")
            except RateLimited as limited:
                error, status, headers = limited, 429, [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": error_text(error).encode()})


def http_app(server: ProductServer, settings: ServerSettings) -> Any:
    """The streamable-HTTP ASGI app with the product's guards around the SDK's."""
    app = server.streamable_http_app(stateless_http=True, json_response=settings.json_response,
                                     host=settings.host,
                                     transport_security=transport_security(settings),
                                     max_request_body_size=settings.max_body_bytes)
    return RequireToken(app, settings, server)


def http_app_from_environment() -> Any:
    """The HTTP app of one worker process (``serve --http --workers N``): settings from the environment,
    as the CLI reads them."""
    settings = Settings()
    return http_app(build_server(settings), settings.server)


def run(settings: Settings, http_port: int | None = None, workers: int = 1) -> None:
    """Serve over stdio (Claude Code), or streamable HTTP on ``http_port`` with ``workers`` processes
    (they share the query cache and rate limits only through Redis: set ``STROIDOK_REDIS_URL``)."""
    if http_port is None:
        anyio.run(run_stdio, build_server(settings))
        return
    import uvicorn

    check_door(settings.server)
    if workers > 1 and not settings.search.redis_url:
        logger.warning("{} workers without STROIDOK_REDIS_URL: each keeps its own cache and rate limits", workers)
    options = uvicorn_options(settings.server, http_port)
    if workers > 1:
        uvicorn.run("service.server.http:http_app_from_environment", factory=True, workers=workers, **options)
        return
    config = uvicorn.Config(http_app(build_server(settings), settings.server), **options)
    setattr(config, HEADER_TIMEOUT, settings.server.header_timeout_s)
    uvicorn.Server(config).run()


LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def check_door(settings: ServerSettings) -> None:
    """Refuse to serve a non-loopback address without tokens (every caller there would get the configured groups)
    unless ``allow_open`` says it is meant; warn whenever no token is required; TLS needs both its files."""
    if (settings.tls_certfile is None) != (settings.tls_keyfile is None):
        raise ConfigError("HTTPS needs both STROIDOK_SERVER_TLS_CERTFILE and STROIDOK_SERVER_TLS_KEYFILE")
    if settings.tokens:
        return
    if settings.host not in LOOPBACK and not settings.allow_open:
        raise ConfigError(f"serving {settings.host} without tokens would give every caller who reaches it the groups "
                          f"{', '.join(settings.groups)}: set STROIDOK_SERVER_TOKENS, bind 127.0.0.1, or pass "
                          "--allow-open if that is meant", details={"host": settings.host})
    logger.warning("serving HTTP on {} without tokens: every caller gets the groups {} (set STROIDOK_SERVER_TOKENS)",
                   settings.host, ", ".join(settings.groups))


#: where uvicorn's config carries the header deadline (set by ``run``; a worker process reads its settings)
HEADER_TIMEOUT = "stroidok_header_timeout_s"


#: the share of max_connections past which idle connections are closed to make room
ROOM = 0.9


class HeaderDeadline(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for each request's line and headers: from the connection (or
    a request's first byte on a kept-alive one) they must be complete within ``header_timeout_s``, else the
    connection is closed. uvicorn alone cancels its idle timer on every byte, so a client sending a header byte
    at a time holds a connection (and a slot of ``max_connections``) for ever."""

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        if getattr(config, HEADER_TIMEOUT, None) is None:  # `serve --workers N`: each worker reads its settings
            setattr(config, HEADER_TIMEOUT, ServerSettings().header_timeout_s)
        self.header_timeout_s: float = getattr(config, HEADER_TIMEOUT)
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.last_active = time.monotonic()
        self._make_room()
        self._arm()

    def _make_room(self) -> None:
        """Near the connection limit, close the connections idle longest (no request under way) so a new caller
        always gets in: idle keep-alive or silent connections cannot hold every slot and starve callers into 503."""
        limit = self.config.limit_concurrency
        connections = self.server_state.connections
        excess = len(connections) - int(limit * ROOM) if limit else 0
        if excess <= 0:
            return
        idle = sorted((c for c in connections if c is not self and isinstance(c, HeaderDeadline) and c.idle()),
                      key=lambda c: c.last_active)
        for connection in idle[:excess]:
            connection.transport.close()

    def idle(self) -> bool:
        return (self.conn.their_state is h11.IDLE and not self.transport.is_closing()
                and (self.cycle is None or self.cycle.response_complete))

    def data_received(self, data: bytes) -> None:
        self.last_active = time.monotonic()
        if self.deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the request line and headers are in

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self.deadline = self.loop.call_later(self.header_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _too_slow(self) -> None:
        self.deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            logger.info("closing a connection whose request headers took over {}s", self.header_timeout_s)
            self.transport.close()


def uvicorn_options(settings: ServerSettings, port: int) -> dict[str, Any]:
    """How uvicorn serves the HTTP app on ``port``."""
    tls = ({"ssl_certfile": str(settings.tls_certfile), "ssl_keyfile": str(settings.tls_keyfile)}
           if settings.tls_certfile is not None else {})
    return {
        **tls,
        "host": settings.host, "port": port, "log_level": "warning", "http": HeaderDeadline,
        "limit_concurrency": settings.max_connections,
        # longer than clients keep idle connections (httpx: 5 s), so a client never sends on a connection
        # the server is closing (that race reset 1 of 50 concurrent sessions at 5 s)
        "timeout_keep_alive": settings.keep_alive_s,
        "h11_max_incomplete_event_size": 16 * 1024, "backlog": 2048}
