"""The MCP server: stdio's groups, HTTP tokens, OAuth, TLS and bounds (``STROIDOK_SERVER_*``)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.settings.groups import GroupNames, TokenGroups


def machine_memory_mb() -> int:
    """The machine's physical memory in MB (where the system does not say, taken as plenty)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError):
        return 1 << 30


class ServerSettings(BaseSettings):
    """Who the caller is: a fixed principal over stdio, bearer tokens (static or an identity provider's JWTs) over
    HTTP."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_SERVER_", extra="ignore")

    principal: str = Field(default="local", description="The name stdio calls are logged under.")
    groups: GroupNames = Field(default_factory=lambda: ["public"], description="The access groups of stdio "
                               "callers, and of HTTP callers when no tokens are set.")
    tokens: TokenGroups = Field(
        default_factory=dict, description='HTTP bearer token -> groups, e.g. {"s3cret": ["public", "legal"]}.')
    host: str = Field(default="127.0.0.1", description="HTTP bind address; loopback unless you mean otherwise.")
    http_port: int = Field(default=8765, ge=1, le=65535, description="`serve --http` port.")
    allowed_hosts: list[str] = Field(default_factory=list, description="Extra Host header values accepted over "
                                     "HTTP (DNS-rebinding protection), e.g. [\"search.example:8765\"]; loopback "
                                     "names and the bind address are always accepted.")
    allowed_origins: list[str] = Field(default_factory=list, description="Extra Origin values accepted over HTTP.")
    max_body_bytes: int = Field(default=768 * 1024, ge=1024, le=16 * 1024 * 1024,
                                description="Larger HTTP request bodies are refused (413). At least the largest "
                                "valid tool call with every character JSON-escaped (662,191 bytes: 50 paths of "
                                "1,000 characters); `serve --http` refuses less.")
    max_connections: int = Field(default=1000, ge=1, description="Concurrent HTTP connections and requests; "
                                 "more get 503 (100 agents hold about 300).")
    max_inflight: int = Field(default=8, ge=1, le=256, description="Tool calls a server process runs at once "
                              "(threads); more wait in arrival order, holding no thread. At 100 agents on 2 cores "
                              "8 gave a lower p95 than 40 at the same throughput side by side (docs/scale.md); "
                              "raise it when the engine is a cluster with many more search threads.")
    render_slots: int = Field(default=2, ge=1, le=64, description="Page renders (get_page_image) a server process "
                              "runs at once, in slots of their own: a render never holds a tool call's slot "
                              "(max_inflight). Memory: render_slots × render_memory_mb at most.")
    render_memory_mb: int = Field(default=512, ge=128, le=4096, description="A page render's memory cap (its child "
                                  "process's data segment): a 1600-pixel page of any PDF fits; a page whose images "
                                  "need more renders without them.")
    render_wait_s: float = Field(default=10.0, gt=0, le=300, description="How long a page render waits for a slot "
                                 "before RENDER_BUSY (ask again).")
    json_response: bool = Field(default=True, description="Over HTTP, answer each call as one JSON body instead "
                                "of an SSE stream: the tools send no notifications mid-call, and it costs the server "
                                "~1 ms and the client ~0.5 ms less CPU per call (docs/scale.md).")
    keep_alive_s: float = Field(default=30.0, gt=0, le=600, description="Idle keep-alive connections are closed "
                                "after this long (longer than clients keep them).")
    allow_open: bool = Field(default=False, description="Serve HTTP on a non-loopback address without tokens "
                             "(every caller gets STROIDOK_SERVER_GROUPS): refused unless set (`serve --allow-open`).")
    tls_certfile: Path | None = Field(default=None, description="PEM certificate (chain) to serve HTTPS with; "
                                      "with tls_keyfile. Or terminate TLS in a proxy (docs/security.md).")
    tls_keyfile: Path | None = Field(default=None, description="PEM private key of tls_certfile.")
    header_timeout_s: float = Field(default=10.0, gt=0, le=300, description="A request's line and headers must "
                                    "arrive within this long of its first byte (or of the connection); a client "
                                    "sending them slowly is cut off instead of holding a connection.")
    body_timeout_s: float = Field(default=30.0, gt=0, le=600, description="A request's body must arrive within "
                                  "this long of its headers; a client sending it slowly (or not at all) is cut off, "
                                  "and near the connection limit one silent for a second makes room for others.")
    oauth_issuer: str | None = Field(default=None, description="OAuth 2.1 resource server: the issuer (`iss`) of "
                                     "the JWT access tokens accepted over HTTP, e.g. a Keycloak realm's URL; with "
                                     "oauth_jwks_url and oauth_audience. Static tokens keep working beside it.")
    oauth_jwks_url: str | None = Field(default=None, description="Where the issuer publishes its signing keys "
                                       "(JWKS); fetched, cached for oauth_jwks_ttl_s, fetched again for a key id "
                                       "it does not hold (at most once every oauth_jwks_refetch_s).")
    oauth_audience: str | None = Field(default=None, description="This server's resource URI, which a token's "
                                       "`aud` must name, e.g. http://search.example:8765/mcp; published at "
                                       "/.well-known/oauth-protected-resource (RFC 9728).")
    oauth_groups_claim: str = Field(default="groups", min_length=1, max_length=200, description="The token claim "
                                    "holding the caller's access groups (a dotted path for a nested claim, e.g. "
                                    "realm_access.roles); names that are not group names are left out.")
    oauth_jwks_ttl_s: float = Field(default=300.0, ge=10, le=86400, description="How long fetched signing keys "
                                    "are used before they are fetched again.")
    oauth_jwks_refetch_s: float = Field(default=30.0, ge=0, le=3600, description="A token signed by a key id the "
                                        "cached keys lack fetches them again at most this often (a rotated key is "
                                        "followed; invented key ids cost the issuer nothing).")
    oauth_jwks_max_stale_s: float = Field(default=900.0, ge=10, le=86400, description="While the issuer's JWKS "
                                          "cannot be read, the keys of its last good fetch stay trusted at most "
                                          "this long after that fetch (at least oauth_jwks_ttl_s); then every "
                                          "access token is refused until the issuer answers again.")

    @model_validator(mode="after")
    def _oauth_whole(self) -> ServerSettings:
        given = {"oauth_issuer": self.oauth_issuer, "oauth_jwks_url": self.oauth_jwks_url,
                 "oauth_audience": self.oauth_audience}
        if any(given.values()) and not all(given.values()):
            missing = ", ".join(f"STROIDOK_SERVER_{k.upper()}" for k, v in given.items() if not v)
            raise ValueError(f"OAuth needs the issuer, the JWKS URL and the audience together: set {missing}")
        return self

    @model_validator(mode="after")
    def _renders_fit(self) -> ServerSettings:
        """Every render slot at its memory cap fits in half the machine's memory."""
        budget = self.render_slots * self.render_memory_mb
        if budget > (half := machine_memory_mb() // 2):
            raise ValueError(f"render_slots × render_memory_mb is {budget} MB, over half this machine's memory "
                             f"({half} MB): lower one of them")
        return self

    @property
    def oauth(self) -> bool:
        """Whether JWT access tokens from an identity provider are accepted."""
        return bool(self.oauth_issuer)

    @property
    def authenticated(self) -> bool:
        """Whether an HTTP caller must present a token (static or from the identity provider)."""
        return bool(self.tokens) or self.oauth
