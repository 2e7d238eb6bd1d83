"""The streamable-HTTP transport: DNS-rebinding protection, the door that reads the caller (static tokens or an
identity provider's JWTs, RFC 9728 metadata), and uvicorn with the product's limits (connections, body size and
deadline, keep-alive, header-read timeout, no websockets); stdio for Claude Code."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
import h11
from loguru import logger
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.caller.identity import SCOPE_KEY, Identity
from service.caller.principal import Principal, stdio_principal
from service.errors import ConfigError, InvalidQuery, RateLimited, StroidokError, Unauthorized
from service.search.request.schema import largest_call_bytes
from service.server.errors import error_text
from service.server.tools import ProductServer, build_server, run_stdio
from service.settings import ServerSettings, Settings, load_settings


def transport_security(settings: ServerSettings) -> TransportSecuritySettings:
    """DNS-rebinding protection on every bind address (the SDK enables it only for loopback names):
    Host and Origin must be loopback, the bind address, or listed in settings."""
    hosts = ["127.0.0.1", "localhost", "[::1]"] + ([settings.host] if settings.host not in ("0.0.0.0", "::") else [])
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + [h for h in hosts] + settings.allowed_hosts,
        allowed_origins=[f"http://{h}:*" for h in hosts] + [f"https://{h}:*" for h in hosts] + settings.allowed_origins,
    )


class Door:
    """ASGI guard in front of the SDK's app, the one place that reads the caller. A websocket upgrade is refused; a
    request with more than one ``Authorization`` header gets 400; with tokens or an identity provider configured, one
    without a valid bearer token gets 401 and our ``UNAUTHORIZED`` object (with the RFC 9728 pointer to this
    server's protected-resource metadata under OAuth) before the MCP layer sees it. Refusals go to the refused-call
    limit of the address (past it: 429, nothing logged). An admitted request carries its caller in its scope's
    ``state`` (``SCOPE_KEY``), where the tools read it: guard and tool agree by construction."""

    def __init__(self, app: Any, settings: ServerSettings, server: ProductServer | None = None) -> None:
        self.app, self.settings, self.server = app, settings, server
        self.identity = Identity(settings)
        self.metadata_url = (str(build_resource_metadata_url(AnyHttpUrl(settings.oauth_audience)))
                             if settings.oauth_audience else None)
        #: the only paths served without a caller: the protected-resource metadata, where OAuth is configured
        self.open_paths = {route.path for route in metadata_routes(settings)}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http" or scope.get("path") in self.open_paths:
            await self.app(scope, receive, send)
            return
        given = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
        if len(given) > 1:
            await self._refuse(scope, send, InvalidQuery("exactly one Authorization header is accepted"), 400)
            return
        try:
            caller = await self._caller(scope, given[0] if given else None)
        except Unauthorized as exc:
            await self._refuse(scope, send, exc, 401, token_given=bool(given))
            return
        scope["state"] = {**scope.get("state", {}), SCOPE_KEY: caller}
        await self.app(scope, receive, send)

    async def _caller(self, scope: dict[str, Any], authorization: str | None) -> tuple[Principal, str]:
        """The caller and the name its calls are limited and logged under."""
        if not self.settings.authenticated:
            principal = stdio_principal(self.settings)
            client = scope.get("client") or ("http", 0)
            return principal, f"{principal.name}@{client[0]}"
        if self.settings.oauth:  # a JWT may need the issuer's keys fetched: never on the event loop
            principal = await anyio.to_thread.run_sync(self.identity.principal, authorization)
        else:
            principal = self.identity.principal(authorization)
        return principal, principal.name

    async def _refuse(self, scope: dict[str, Any], send: Any, error: StroidokError, status: int,
                      token_given: bool = False) -> None:
        """The refusal, logged compactly; past the refused-call limit of the address, 429 with ``RATE_LIMIT``."""
        headers = [(b"content-type", b"application/json")]
        if status == 401:
            headers.append((b"www-authenticate", self.challenge(token_given).encode("latin-1")))
        if (on_refused := getattr(self.server, "on_refused", None)) is not None:  # set by the lifespan
            client = scope.get("client") or ("?", 0)
            try:
                on_refused("http", {}, error, f"addr:{client[0]}")
            except RateLimited as limited:
                error, status, headers = limited, 429, [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": error_text(error).encode()})

    def challenge(self, token_given: bool) -> str:
        """The ``WWW-Authenticate`` value of a 401: Bearer, and under OAuth where the metadata is (RFC 9728 §5.1)."""
        parts = ['error="invalid_token"'] if token_given else []
        if self.metadata_url:
            parts.append(f'resource_metadata="{self.metadata_url}"')
        return "Bearer" + (" " + ", ".join(parts) if parts else "")


def metadata_routes(settings: ServerSettings) -> list[Route]:
    """RFC 9728 protected-resource metadata (the SDK's handler) naming the issuer: at the resource's own well-known
    path (``/.well-known/oauth-protected-resource/mcp``) and at the bare one."""
    if not (settings.oauth_issuer and settings.oauth_audience):
        return []
    routes = create_protected_resource_routes(resource_url=AnyHttpUrl(settings.oauth_audience),
                                              authorization_servers=[AnyHttpUrl(settings.oauth_issuer)],
                                              resource_name="StroiDok search")
    bare = "/.well-known/oauth-protected-resource"
    return routes + [Route(bare, endpoint=r.endpoint, methods=r.methods) for r in routes if r.path != bare][:1]


def http_app(server: ProductServer, settings: ServerSettings) -> Any:
    """The streamable-HTTP ASGI app with the product's guards around the SDK's."""
    app = server.streamable_http_app(stateless_http=True, json_response=settings.json_response,
                                     host=settings.host,
                                     transport_security=transport_security(settings),
                                     max_request_body_size=settings.max_body_bytes,
                                     custom_starlette_routes=metadata_routes(settings))
    return Door(app, settings, server)


def http_app_from_environment() -> Any:
    """The HTTP app of one worker process (``serve --http --workers N``): settings from the environment,
    as the CLI reads them."""
    settings = load_settings()
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
    setattr(config, BODY_TIMEOUT, settings.server.body_timeout_s)
    uvicorn.Server(config).run()


LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def check_door(settings: ServerSettings) -> None:
    """Refuse to serve a non-loopback address without tokens (every caller there would get the configured groups)
    unless ``allow_open`` says it is meant; warn whenever no token is required; TLS needs both its files; the body
    limit holds every valid call, however its JSON escapes its text."""
    if (settings.tls_certfile is None) != (settings.tls_keyfile is None):
        raise ConfigError("HTTPS needs both STROIDOK_SERVER_TLS_CERTFILE and STROIDOK_SERVER_TLS_KEYFILE")
    if settings.max_body_bytes < (needed := largest_call_bytes()):
        raise ConfigError(f"STROIDOK_SERVER_MAX_BODY_BYTES {settings.max_body_bytes} is under the largest valid tool "
                          f"call JSON-escaped ({needed} bytes): such a call would get 413", details={"needed": needed})
    if settings.authenticated:
        return
    if settings.host not in LOOPBACK and not settings.allow_open:
        raise ConfigError(f"serving {settings.host} without tokens would give every caller who reaches it the groups "
                          f"{', '.join(settings.groups)}: set STROIDOK_SERVER_TOKENS, bind 127.0.0.1, or pass "
                          "--allow-open if that is meant", details={"host": settings.host})
    logger.warning("serving HTTP on {} without tokens: every caller gets the groups {} (set STROIDOK_SERVER_TOKENS)",
                   settings.host, ", ".join(settings.groups))


#: where uvicorn's config carries the header and body deadlines (set by ``run``; a worker process reads its settings)
HEADER_TIMEOUT = "stroidok_header_timeout_s"
BODY_TIMEOUT = "stroidok_body_timeout_s"


#: the share of max_connections past which idle connections are closed to make room
ROOM = 0.9
#: a connection whose body has not advanced for this long counts as idle when room is made
SILENT_BODY_S = 1.0


class Sparse:
    """At most one log line per ``every_s`` for one kind of event, the ones between counted into the next: a flood
    of slow or refused connections cannot flood the log."""

    def __init__(self, every_s: float = 60.0) -> None:
        self.every_s, self.last, self.skipped = every_s, -float("inf"), 0

    def info(self, message: str) -> bool:
        """Log ``message`` unless a line was logged within ``every_s``; whether it was logged."""
        now = time.monotonic()
        if now - self.last < self.every_s:
            self.skipped += 1
            return False
        logger.info("{}{}", message, f" ({self.skipped} more like it since the last line)" if self.skipped else "")
        self.last, self.skipped = now, 0
        return True


SLOW_HEADERS = Sparse()
SLOW_BODIES = Sparse()


class HeaderDeadline(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with deadlines: from the connection (or a request's first byte on a kept-alive
    one) its line and headers must be complete within ``header_timeout_s``, and from the headers its body within
    ``body_timeout_s``, else the connection is closed. uvicorn alone cancels its idle timer on every byte, and never
    times a body, so a client sending a byte at a time (or a ``Content-Length`` and silence) holds a connection and
    a slot of ``max_connections`` for ever."""

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        if getattr(config, HEADER_TIMEOUT, None) is None:  # `serve --workers N`: each worker reads its settings
            own = ServerSettings()
            setattr(config, HEADER_TIMEOUT, own.header_timeout_s)
            setattr(config, BODY_TIMEOUT, own.body_timeout_s)
        self.header_timeout_s: float = getattr(config, HEADER_TIMEOUT)
        self.body_timeout_s: float = getattr(config, BODY_TIMEOUT, None) or ServerSettings().body_timeout_s
        self.deadline: asyncio.TimerHandle | None = None
        self.waiting_for: type[h11.IDLE] | type[h11.SEND_BODY] = h11.IDLE

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.last_active = time.monotonic()
        self._make_room()
        self._arm(h11.IDLE)

    def _make_room(self) -> None:
        """Near the connection limit, close the connections idle longest (no request under way, or a body silent
        for ``SILENT_BODY_S``) so a new caller always gets in: idle keep-alive, silent or slow-body connections
        cannot hold every slot and starve callers into 503."""
        limit = self.config.limit_concurrency
        connections = self.server_state.connections
        excess = len(connections) - int(limit * ROOM) if limit else 0
        if excess <= 0:
            return
        now = time.monotonic()
        idle = sorted((c for c in connections if c is not self and isinstance(c, HeaderDeadline) and c.evictable(now)),
                      key=lambda c: c.last_active)
        for connection in idle[:excess]:
            connection.transport.close()

    def idle(self) -> bool:
        return (self.conn.their_state is h11.IDLE and not self.transport.is_closing()
                and (self.cycle is None or self.cycle.response_complete))

    def evictable(self, now: float) -> bool:
        """Idle, or sending a body that has not advanced for ``SILENT_BODY_S``."""
        silent_body = (self.conn.their_state is h11.SEND_BODY and now - self.last_active > SILENT_BODY_S
                       and not self.transport.is_closing())
        return self.idle() or silent_body

    def data_received(self, data: bytes) -> None:
        self.last_active = time.monotonic()
        if self.deadline is None and self.conn.their_state is h11.IDLE:
            self._arm(h11.IDLE)  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.SEND_BODY and self.waiting_for is not h11.SEND_BODY:
            self._arm(h11.SEND_BODY)  # the headers are in: the body's deadline starts
        elif state is not h11.IDLE and state is not h11.SEND_BODY:
            self._disarm()  # the whole request is in

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, waiting_for: type[h11.IDLE] | type[h11.SEND_BODY]) -> None:
        self._disarm()
        self.waiting_for = waiting_for
        timeout = self.header_timeout_s if waiting_for is h11.IDLE else self.body_timeout_s
        self.deadline = self.loop.call_later(timeout, self._too_slow)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _too_slow(self) -> None:
        self.deadline = None
        if self.conn.their_state is not self.waiting_for or self.transport.is_closing():
            return
        if self.waiting_for is h11.IDLE:
            SLOW_HEADERS.info(f"closing a connection whose request headers took over {self.header_timeout_s}s")
        else:
            SLOW_BODIES.info(f"closing a connection whose request body took over {self.body_timeout_s}s")
        self.transport.close()


def uvicorn_options(settings: ServerSettings, port: int) -> dict[str, Any]:
    """How uvicorn serves the HTTP app on ``port``."""
    tls = ({"ssl_certfile": str(settings.tls_certfile), "ssl_keyfile": str(settings.tls_keyfile)}
           if settings.tls_certfile is not None else {})
    return {
        **tls,
        "host": settings.host, "port": port, "log_level": "warning", "http": HeaderDeadline, "ws": "none",
        "limit_concurrency": settings.max_connections,
        # longer than clients keep idle connections (httpx: 5 s), so a client never sends on a connection
        # the server is closing (that race reset 1 of 50 concurrent sessions at 5 s)
        "timeout_keep_alive": settings.keep_alive_s,
        "h11_max_incomplete_event_size": 16 * 1024, "backlog": 2048}
