"""The OpenSearch client, and the one place where opensearch-py errors become the product's errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from opensearchpy import OpenSearch
from opensearchpy import exceptions as os_exc

from service.errors import IndexUnavailable, SearchError, StroidokError
from service.settings import Settings

T = TypeVar("T")


def build_client(settings: Settings) -> OpenSearch:
    """A client for the configured engine; no request is made here."""
    return OpenSearch(
        hosts=[settings.opensearch_url],
        timeout=settings.opensearch.timeout_s,
        verify_certs=settings.opensearch.verify_certs,
        ssl_show_warn=False,
        max_retries=0,
        retry_on_timeout=False,
    )


def translate(exc: Exception) -> StroidokError:
    """Map an opensearch-py exception to a member of the product's tree."""
    if isinstance(exc, (os_exc.ConnectionError, os_exc.ConnectionTimeout)):
        return IndexUnavailable(
            "the search engine is not reachable; start it with `stroidok engine up`",
            details={"reason": type(exc).__name__, "info": str(exc)[:300]},
        )
    if isinstance(exc, os_exc.NotFoundError):
        return IndexUnavailable(
            f"index or resource not found: {_reason(exc)}; create it with `stroidok index init`",
            details={"status": 404},
        )
    if isinstance(exc, os_exc.RequestError) and "Pipeline" in _reason(exc) and "is not defined" in _reason(exc):
        return IndexUnavailable(
            f"{_reason(exc)}: the index is not initialised; run `stroidok index init`", details={"status": 400})
    if isinstance(exc, os_exc.TransportError):
        return SearchError(
            f"the search engine rejected the request: {_reason(exc)}",
            details={"status": exc.status_code if isinstance(exc.status_code, int) else None},
        )
    return SearchError(f"unexpected engine failure: {exc}")


def _reason(exc: os_exc.TransportError) -> str:
    info = exc.info if isinstance(exc.info, dict) else {}
    error = info.get("error")
    if isinstance(error, dict):
        root = (error.get("root_cause") or [error])[0]
        return str(root.get("reason") or error.get("reason") or error.get("type"))
    return str(error or exc.error)


@contextmanager
def engine_errors() -> Iterator[None]:
    """Run a block of engine calls, re-raising opensearch-py failures as product errors."""
    try:
        yield
    except os_exc.OpenSearchException as exc:
        raise translate(exc) from exc


def call(fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    """One engine call with errors translated."""
    with engine_errors():
        return fn(*args, **kwargs)
