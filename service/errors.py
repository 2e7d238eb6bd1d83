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
    │   │   └── FileMoved              (PARSE_ERROR)     not the file the walk found, or reached through a link
    │   ├── IngestRunning              (INGEST_RUNNING)  another run holds the index's lease (ingest.lease)
    │   ├── AccessRulesChanged         (ACCESS_RULES_CHANGED) the run's access rules are not the index's
    │   └── Interrupted                (INTERRUPTED)     the run was stopped by a signal (ingest.signals)
    ├── InvalidQuery                   (INVALID_QUERY)   bad search input
    ├── RateLimited                    (RATE_LIMIT)
    ├── Unauthorized                   (UNAUTHORIZED)    unknown or missing credentials
    ├── NotFound                       (NOT_FOUND)       no such id visible to the caller
    ├── PageUnavailable                (PAGE_UNAVAILABLE) a page image cannot be made of the file as it is now
    │   └── RendersBusy                (RENDER_BUSY)     every render slot stayed taken past the wait: try again
    └── SearchError                    (DATABASE_ERROR)  talking to the engine
        ├── IndexUnavailable           (INDEX_UNAVAILABLE) the engine does not answer, or the index is missing
        │   └── ResourceMissing        (INDEX_UNAVAILABLE) no such index, template, pipeline or document (404)
        ├── VersionConflict            (DATABASE_ERROR)  another writer was first (409)
        ├── AlreadyExists              (DATABASE_ERROR)  an index another process created first
        ├── AccessRefused              (DATABASE_ERROR)  the engine's security refused the action (401, 403)
        ├── RequestRejected            (DATABASE_ERROR)  a request the engine refused as given (400)
        ├── WaitExpired                (DATABASE_ERROR)  a wait the engine gave up on (408)
        ├── IndexSetupError            (INDEX_SETUP_ERROR)
        ├── EngineBusy                 (ENGINE_BUSY)     out of memory or queue room, a shard not started: try again
        ├── EngineTimeout              (ENGINE_TIMEOUT)  the engine answers, but not this request in time
        ├── DiskFull                   (DISK_FULL)       writes blocked at the flood-stage watermark
        └── PastLastPage               (PAST_LAST_PAGE)  internal: the service answers an empty page

opensearch-py exceptions become members of this tree in exactly one place: ``service.engine.gateway``. The kinds
of an engine refusal that callers expect (a missing resource, a lost race) are classes of their own that keep
their parent's public code.
docs/errors.md lists every code with its meaning (``python -m service.errors`` prints the table).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import ValidationError

#: the credentials part of a URL (``scheme://user:password@``)
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/@]+@")


def redact(text: str) -> str:
    """``text`` with every URL's credentials replaced by ``***`` (an endpoint's ``user:password@`` must never reach
    a caller or a log through an error message)."""
    return _URL_CREDENTIALS.sub(r"\1***@", text)


class StroidokError(Exception):
    """Base of the tree; as a code: an unexpected failure inside the product (its traceback is in the server's
    log on stderr, never in the reply)."""

    code: ClassVar[str] = "INTERNAL_ERROR"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": redact(self.message), "details": self.details}


class ConfigError(StroidokError):
    """A setting or command-line value the product cannot use; the message names it. Fix the setting
    (docs/settings.md) and run again."""

    code = "CONFIG_ERROR"


class EngineError(StroidokError):
    """The managed node could not be installed, started or stopped; ``stroidok engine logs`` shows why."""

    code = "ENGINE_ERROR"


class JavaNotFound(EngineError):
    """No JDK 21 or newer was found (``OPENSEARCH_JAVA_HOME``, ``JAVA_HOME``, ``/usr/lib/jvm``) and the registry
    JDK is off or missing."""

    code = "JAVA_NOT_FOUND"


class PortInUse(EngineError):
    """The node's HTTP or transport port is taken by another process; stop it or set ``STROIDOK_ENGINE_HTTP_PORT``."""

    code = "PORT_IN_USE"


class ArtifactDownloadFailed(EngineError):
    """OpenSearch or a plugin could not be fetched from Maven Central; check the network and run ``stroidok engine
    install`` again."""

    code = "DOWNLOAD_FAILED"


class EngineAssemblyFailed(EngineError):
    """The downloaded distribution or its plugins could not be put together; the message says which step."""

    code = "ASSEMBLY_FAILED"


class NodeDied(EngineError):
    """The node's process exited while starting or running; its log's last lines come with the error."""

    code = "NODE_DIED"


class EngineStartTimeout(EngineError):
    """The node did not reach green (yellow for a cluster) within ``STROIDOK_ENGINE_START_TIMEOUT_S``."""

    code = "START_TIMEOUT"


class EmbeddingError(StroidokError):
    """The embedder could not turn text into vectors (a model that does not load, an endpoint that refuses)."""

    code = "EMBEDDING_ERROR"


class IngestError(StroidokError):
    """An ingest run could not go on (its report says which files were done); run it again to continue."""

    code = "INGEST_ERROR"


class IngestRunning(IngestError):
    """Another ingest holds the index (or an overlapping part of it); this one refused to start. The other one's
    lease expires a minute after it stops renewing it (a crashed run)."""

    code = "INGEST_RUNNING"


class AccessRulesChanged(IngestError):
    """The index's access groups were decided by other access rules than this run's (another rule file, or none:
    a run without ``STROIDOK_INGEST_ACCESS_RULES``). Nothing was changed. Run with the index's rule file, or pass
    ``--access-rules-changed`` to re-decide every document's groups by the new rules."""

    code = "ACCESS_RULES_CHANGED"


class Interrupted(IngestError):
    """The run was stopped by a signal; what was acknowledged stays, the rest is redone next run."""

    code = "INTERRUPTED"


class ParseError(IngestError):
    """One file could not be read (corrupt, encrypted, not what its name says); it is reported failed and skipped,
    never indexed."""

    code = "PARSE_ERROR"


class FileMoved(ParseError):
    """The file at a planned place is no longer the one the walk found (another file, or a folder on its way
    replaced by a link): not read; the next run plans it anew."""


class InvalidQuery(StroidokError):
    """A tool's arguments are refused by its contract; ``details.problems`` names each field and its problem."""

    code = "INVALID_QUERY"

    @classmethod
    def from_validation(cls, exc: ValidationError, what: str, whole: str) -> InvalidQuery:
        """pydantic's complaints as one INVALID_QUERY: each field (``whole`` when the input as a whole is
        wrong) and its problem, in the message and in ``details.problems``."""
        problems = [{"field": ".".join(map(str, e["loc"])) or whole, "problem": e["msg"]} for e in exc.errors()]
        return cls(f"invalid {what}: " + "; ".join(f"{p['field']}: {p['problem']}" for p in problems),
                   details={"problems": problems})


class RateLimited(StroidokError):
    """The caller made more calls than ``STROIDOK_SEARCH_RATE_LIMIT`` allows; try again in a few seconds."""

    code = "RATE_LIMIT"


class Unauthorized(StroidokError):
    """An HTTP caller without a valid token (``STROIDOK_SERVER_TOKENS``)."""

    code = "UNAUTHORIZED"


class NotFound(StroidokError):
    """No document or chunk with this id that the caller may read (one that exists but is not readable answers the
    same)."""

    code = "NOT_FOUND"


class PageUnavailable(StroidokError):
    """A page image cannot be made: the document is not a PDF, its file moved or changed since it was indexed
    (re-ingest it), or the page did not render within its limits."""

    code = "PAGE_UNAVAILABLE"


class RendersBusy(PageUnavailable):
    """Every page-render slot of the server stayed taken for the whole wait: ask again in a few seconds."""

    code = "RENDER_BUSY"


class SearchError(StroidokError):
    """The engine refused a request for a reason not listed below; its own reason is in the server's log, never in
    the reply."""

    code = "DATABASE_ERROR"


class IndexUnavailable(SearchError):
    """The engine does not answer (not started, or down), or the index is missing: ``stroidok engine up``,
    ``stroidok index init``."""

    code = "INDEX_UNAVAILABLE"


class ResourceMissing(IndexUnavailable):
    """The engine has no such index, template, pipeline or document (404); callers that expect it catch it (the
    code a client sees is its parent's)."""


class VersionConflict(SearchError):
    """A write refused for a version conflict (409): another writer was first; the caller reads again or gives
    way."""


class AlreadyExists(SearchError):
    """An index another process created first; the creator that lost the race uses it."""


class AccessRefused(SearchError):
    """The engine's security refused the product's credentials or this action (401, 403; a disk block is
    DISK_FULL)."""


class RequestRejected(SearchError):
    """A request the engine refused as given (400), e.g. a mapping change an existing index cannot take."""


class WaitExpired(SearchError):
    """A wait the engine gave up on within its own timeout (408), e.g. for shards to start."""


class IndexSetupError(SearchError):
    """The index, its template or pipelines could not be made as the templates describe; ``stroidok index status``
    says what differs."""

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


def error_classes() -> list[type[StroidokError]]:
    """Every member of the tree, parents before children, in the order they are declared."""
    found: list[type[StroidokError]] = []

    def walk(cls: type[StroidokError]) -> None:
        found.append(cls)
        for sub in cls.__subclasses__():
            if sub.__module__ == __name__:
                walk(sub)

    walk(StroidokError)
    return found


def error_table() -> str:
    """docs/errors.md's table: each code, the class that carries it, its parent, and what it means."""
    rows = ["| code | error | kind of | meaning |", "|---|---|---|---|"]
    for cls in error_classes():
        parent = next((b.__name__ for b in cls.__bases__ if issubclass(b, StroidokError)), "")
        meaning = " ".join((cls.__doc__ or "").split()).replace("``", "`").replace("|", "\\|")
        rows.append(f"| `{cls.code}` | {cls.__name__} | {parent} | {meaning} |")
    return "\n".join(rows)


#: exit code when an ingest made no progress for the stall limit (``ingest.watchdog``)
EXIT_STALLED = 3

#: what each exit code of a ``stroidok`` command means (docs/errors.md)
EXIT_CODES: tuple[tuple[str, str], ...] = (
    ("0", "Done: every file indexed, unchanged or deleted; the search or command answered."),
    ("1", "Done, but something in it failed: an ingest with failed files (its report names each and why), an "
          "`embed` with chunks left without vectors, an `engine status` that finds a problem."),
    ("2", "Refused: a product error (`error CODE: message` on stderr, a code of the table above), or a flag "
          "the command does not take (usage shown)."),
    (str(EXIT_STALLED), "`INGEST_STALLED`: an ingest made no progress for `STROIDOK_INGEST_STALL_TIMEOUT_S` "
          "(a stuck engine or library); what is written stays, the same command goes on."),
    ("128 + N", "Stopped by signal N (130: Ctrl-C, 143: SIGTERM, 129: SIGHUP): files reported as indexed are "
                "searchable, nothing half-written is marked done; the same command goes on."),
)


def exit_code_table() -> str:
    """docs/errors.md's table of exit codes."""
    rows = ["| exit code | meaning |", "|---|---|"]
    rows += [f"| {code} | {meaning} |" for code, meaning in EXIT_CODES]
    return "\n".join(rows)


if __name__ == "__main__":
    print(error_table())
    print()
    print(exit_code_table())
