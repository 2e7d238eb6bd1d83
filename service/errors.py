"""The one exception tree of the product; each member carries a public, machine-readable code.

    StroidokError                      (INTERNAL_ERROR)
    ├── ConfigError                    (CONFIG_ERROR)
    ├── EngineError                    (ENGINE_ERROR)    managed node lifecycle
    │   ├── JavaNotFound               (JAVA_NOT_FOUND)
    │   ├── PortInUse                  (PORT_IN_USE)
    │   ├── ArtifactDownloadFailed     (DOWNLOAD_FAILED)
    │   ├── EngineAssemblyFailed       (ASSEMBLY_FAILED)
    │   ├── NodeDied                   (NODE_DIED)
    │   └── EngineStartTimeout         (START_TIMEOUT)
    ├── EmbeddingError                 (EMBEDDING_ERROR)
    ├── IngestError                    (INGEST_ERROR)
    │   ├── ParseError                 (PARSE_ERROR)     one file could not be read
    │   ├── IngestRunning              (INGEST_RUNNING)  another run holds the index's lease (ingest.lease)
    │   └── Interrupted                (INTERRUPTED)     the run was stopped by a signal (ingest.signals)
    ├── InvalidQuery                   (INVALID_QUERY)   bad search input
    ├── RateLimited                    (RATE_LIMIT)
    ├── Unauthorized                   (UNAUTHORIZED)    unknown or missing credentials
    ├── NotFound                       (NOT_FOUND)       no such id visible to the caller
    └── SearchError                    (DATABASE_ERROR)  talking to the engine
        ├── IndexUnavailable           (INDEX_UNAVAILABLE) the engine does not answer, or the index is missing
        ├── IndexSetupError            (INDEX_SETUP_ERROR)
        ├── EngineBusy                 (ENGINE_BUSY)     out of memory or queue room, a shard not started: try again
        ├── EngineTimeout              (ENGINE_TIMEOUT)  the engine answers, but not this request in time
        ├── DiskFull                   (DISK_FULL)       writes blocked at the flood-stage watermark
        └── PastLastPage               (PAST_LAST_PAGE)  internal: the service answers an empty page

opensearch-py exceptions become members of this tree in exactly one place: ``service.opensearch``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ValidationError


class StroidokError(Exception):
    """Base of every error the product raises on purpose."""

    code: ClassVar[str] = "INTERNAL_ERROR"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class ConfigError(StroidokError):
    code = "CONFIG_ERROR"


class EngineError(StroidokError):
    code = "ENGINE_ERROR"


class JavaNotFound(EngineError):
    code = "JAVA_NOT_FOUND"


class PortInUse(EngineError):
    code = "PORT_IN_USE"


class ArtifactDownloadFailed(EngineError):
    code = "DOWNLOAD_FAILED"


class EngineAssemblyFailed(EngineError):
    code = "ASSEMBLY_FAILED"


class NodeDied(EngineError):
    code = "NODE_DIED"


class EngineStartTimeout(EngineError):
    code = "START_TIMEOUT"


class EmbeddingError(StroidokError):
    code = "EMBEDDING_ERROR"


class IngestError(StroidokError):
    code = "INGEST_ERROR"


class ParseError(IngestError):
    code = "PARSE_ERROR"


class InvalidQuery(StroidokError):
    code = "INVALID_QUERY"

    @classmethod
    def from_validation(cls, exc: ValidationError, what: str, whole: str) -> InvalidQuery:
        """pydantic's complaints as one INVALID_QUERY: each field (``whole`` when the input as a whole is
        wrong) and its problem, in the message and in ``details.problems``."""
        problems = [{"field": ".".join(map(str, e["loc"])) or whole, "problem": e["msg"]} for e in exc.errors()]
        return cls(f"invalid {what}: " + "; ".join(f"{p['field']}: {p['problem']}" for p in problems),
                   details={"problems": problems})


class RateLimited(StroidokError):
    code = "RATE_LIMIT"


class Unauthorized(StroidokError):
    code = "UNAUTHORIZED"


class NotFound(StroidokError):
    code = "NOT_FOUND"


class SearchError(StroidokError):
    code = "DATABASE_ERROR"


class IndexUnavailable(SearchError):
    code = "INDEX_UNAVAILABLE"


class IndexSetupError(SearchError):
    code = "INDEX_SETUP_ERROR"


class EngineBusy(SearchError):
    """The engine refused for lack of memory (a circuit breaker) or of queue room (429): nothing is wrong with
    the request; the same call later succeeds. ``details.retry_after_s`` says when to try again."""

    code = "ENGINE_BUSY"


class EngineTimeout(SearchError):
    """The engine is up but did not finish the request within its bound (``details.timeout_s``); the request
    was cancelled inside the engine. A narrower query or a filter finishes sooner."""

    code = "ENGINE_TIMEOUT"


class DiskFull(SearchError):
    """The engine's disk is past its flood-stage watermark: it blocks writes to the index (searches go on)
    until space is freed, then lifts the block itself."""

    code = "DISK_FULL"


class PastLastPage(SearchError):
    """The engine's hybrid query refuses a ``from`` past its last hit; the service turns this into an
    empty page, so the code never reaches a client."""

    code = "PAST_LAST_PAGE"
