from __future__ import annotations

import pytest
from opensearchpy import exceptions as os_exc

from service.engine.gateway import translate
from service.errors import (
    AccessRefused,
    AlreadyExists,
    DiskFull,
    EngineTimeout,
    IndexUnavailable,
    RequestRejected,
    ResourceMissing,
    SearchError,
    VersionConflict,
    WaitExpired,
)


def test_connection_failure_is_index_unavailable() -> None:
    err = translate(os_exc.ConnectionError("N/A", "refused", Exception("refused")))
    assert isinstance(err, IndexUnavailable)
    assert err.code == "INDEX_UNAVAILABLE"


def test_missing_index_is_index_unavailable() -> None:
    info = {"error": {"root_cause": [{"type": "index_not_found_exception", "reason": "no such index [x]"}]}}
    err = translate(os_exc.NotFoundError(404, "index_not_found_exception", info))
    assert isinstance(err, IndexUnavailable)
    assert "no such index" not in err.message and "stroidok index init" in err.message


def test_bad_request_is_a_database_error_whose_engine_reason_is_logged_not_sent(
        capsys: pytest.CaptureFixture[str]) -> None:
    from loguru import logger

    sink = logger.add(lambda m: print(m, end="", file=__import__("sys").stderr), level="WARNING")
    info = {"error": {"root_cause": [{"type": "parsing_exception", "reason": "unknown query [foo] on [secret-index]"}]}}
    err = translate(os_exc.RequestError(400, "parsing_exception", info))
    logger.remove(sink)
    assert isinstance(err, RequestRejected)
    assert err.code == "DATABASE_ERROR"
    assert err.details == {"status": 400, "type": "parsing_exception"}
    assert "secret-index" not in err.message and "secret-index" not in str(err.details)
    assert "unknown query [foo] on [secret-index]" in capsys.readouterr().err


def test_every_call_of_the_products_client_fails_with_the_products_error() -> None:
    from service.engine.gateway import build_client
    from service.settings import OpenSearchSettings, Settings
    from tests.support.net import free_port

    client = build_client(Settings(opensearch=OpenSearchSettings(url=f"http://127.0.0.1:{free_port()}")))
    for call in (client.info, lambda: client.search(index="x", body={}), lambda: client.indices.exists(index="x")):
        with pytest.raises(IndexUnavailable) as failed:
            call()
        assert isinstance(failed.value.__cause__, os_exc.ConnectionError)


def test_an_engine_that_connects_but_does_not_answer_in_time_is_a_timeout_not_unavailable() -> None:
    err = translate(os_exc.ConnectionTimeout("TIMEOUT", "read timed out", Exception()))
    assert isinstance(err, EngineTimeout) and err.code == "ENGINE_TIMEOUT"
    assert "stroidok engine up" not in err.message and "filters" in err.message


@pytest.mark.parametrize("reason", ["Time exceeded", "Task cancelled before it could start [by user request]",
                                    "The parent task was cancelled, shouldn't start any child tasks"])
def test_a_search_the_engine_stopped_for_its_time_is_a_timeout(reason: str) -> None:
    info = {"error": {"root_cause": [{"type": "query_phase_execution_exception", "reason": reason}],
                      "type": "search_phase_execution_exception", "reason": "all shards failed"}}
    assert isinstance(translate(os_exc.TransportError(500, "search_phase_execution_exception", info)), EngineTimeout)


def test_other_engine_failures_are_not_timeouts() -> None:
    info = {"error": {"root_cause": [{"type": "illegal_argument_exception", "reason": "no such field"}]}}
    assert not isinstance(translate(os_exc.TransportError(500, "illegal_argument_exception", info)), EngineTimeout)


def test_each_client_keeps_its_own_connect_timeout() -> None:
    from service.engine.gateway import build_client
    from service.settings import Settings

    fast, slow = Settings(), Settings()
    fast.opensearch.connect_timeout_s, slow.opensearch.connect_timeout_s = 0.5, 7.0
    first, second = build_client(fast), build_client(slow)
    # a request with its own read timeout bounds the connect by the client's setting, at request time
    timeouts = [c.transport.get_connection()._bounded(30.0).connect_timeout for c in (first, second)]
    assert timeouts == [0.5, 7.0]


SHARD_STARTING = {"error": {"root_cause": [{"type": "illegal_index_shard_state_exception",
                                            "reason": "CurrentState[RECOVERING] operations only allowed when shard "
                                                      "state is one of [POST_RECOVERY, STARTED]"}],
                            "type": "illegal_index_shard_state_exception"}, "status": 503}


def test_a_shard_that_has_not_started_is_busy_not_a_database_error() -> None:
    from service.errors import EngineBusy

    err = translate(os_exc.TransportError(503, "illegal_index_shard_state_exception", SHARD_STARTING))
    assert isinstance(err, EngineBusy) and err.code == "ENGINE_BUSY"
    assert err.details["type"] == "illegal_index_shard_state_exception"


def _connection_answering(monkeypatch: pytest.MonkeyPatch, answers: list[Exception | str]) -> tuple[object, list[int]]:
    from opensearchpy import Urllib3HttpConnection

    from service.engine.gateway import BoundedConnection

    calls: list[int] = []

    def perform(self: object, *args: object, **kwargs: object) -> str:
        calls.append(1)
        answer = answers[len(calls) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(Urllib3HttpConnection, "perform_request", perform)
    return BoundedConnection(host="127.0.0.1", port=1), calls


def test_every_request_waits_briefly_for_a_shard_that_is_starting(monkeypatch: pytest.MonkeyPatch) -> None:
    starting = os_exc.TransportError(503, "illegal_index_shard_state_exception", SHARD_STARTING)
    connection, calls = _connection_answering(monkeypatch, [starting, starting, "ok"])
    assert connection.perform_request("GET", "/x/_search") == "ok"  # type: ignore[attr-defined]
    assert len(calls) == 3


def test_other_refusals_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    info = {"error": {"root_cause": [{"type": "parsing_exception", "reason": "bad"}]}, "status": 503}
    refused = os_exc.TransportError(503, "parsing_exception", info)
    connection, calls = _connection_answering(monkeypatch, [refused, "ok"])
    with pytest.raises(os_exc.TransportError):
        connection.perform_request("GET", "/x/_search")  # type: ignore[attr-defined]
    assert len(calls) == 1


def test_a_shard_that_never_starts_is_given_up_on_after_a_few_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    from service.engine.gateway import SHARD_RETRIES

    starting = os_exc.TransportError(503, "illegal_index_shard_state_exception", SHARD_STARTING)
    connection, calls = _connection_answering(monkeypatch, [starting] * SHARD_RETRIES)
    with pytest.raises(os_exc.TransportError):
        connection.perform_request("GET", "/x/_search")  # type: ignore[attr-defined]
    assert len(calls) == SHARD_RETRIES


def test_what_is_not_there_gives_the_default_and_every_other_failure_goes_on() -> None:
    from collections.abc import Callable

    from service.engine.gateway import unless_missing

    def raising(status: int, kind: str) -> Callable[[], str]:
        def call() -> str:
            refusal = os_exc.HTTP_EXCEPTIONS.get(status, os_exc.TransportError)
            raise translate(refusal(status, kind, {"error": {"type": kind, "reason": "x"}}))
        return call

    assert unless_missing(raising(404, "index_not_found_exception"), "default") == "default"
    assert unless_missing(lambda: "found", "default") == "found"
    for status in (403, 500, 409):
        with pytest.raises(SearchError):
            unless_missing(raising(status, "some_exception"), "default")


@pytest.mark.parametrize(("status", "kind", "typed", "code"), [
    (404, "index_not_found_exception", ResourceMissing, "INDEX_UNAVAILABLE"),
    (409, "version_conflict_engine_exception", VersionConflict, "DATABASE_ERROR"),
    (400, "resource_already_exists_exception", AlreadyExists, "DATABASE_ERROR"),
    (401, "security_exception", AccessRefused, "DATABASE_ERROR"),
    (403, "security_exception", AccessRefused, "DATABASE_ERROR"),
    (408, "timeout_exception", WaitExpired, "DATABASE_ERROR"),
    (400, "illegal_argument_exception", RequestRejected, "DATABASE_ERROR"),
])
def test_each_refusal_a_caller_expects_is_its_own_class_with_the_public_code_of_before(
        status: int, kind: str, typed: type[SearchError], code: str) -> None:
    info = {"error": {"root_cause": [{"type": kind, "reason": "r"}], "type": kind, "reason": "r"}}
    err = translate(os_exc.HTTP_EXCEPTIONS.get(status, os_exc.TransportError)(status, kind, info))
    assert type(err) is typed
    assert err.code == code
    assert err.details.get("status") == status


def test_a_flood_stage_block_stays_disk_full_not_an_access_refusal() -> None:
    reason = "index [x] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, " \
             "index has read-only-allow-delete block]"
    info = {"error": {"root_cause": [{"type": "cluster_block_exception", "reason": reason}],
                      "type": "cluster_block_exception", "reason": reason}}
    assert isinstance(translate(os_exc.TransportError(403, "cluster_block_exception", info)), DiskFull)
