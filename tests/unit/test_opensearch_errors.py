from __future__ import annotations

import pytest
from opensearchpy import exceptions as os_exc

from service.errors import IndexUnavailable, SearchError
from service.opensearch import engine_errors, translate


def test_connection_failure_is_index_unavailable():
    err = translate(os_exc.ConnectionError("N/A", "refused", Exception("refused")))
    assert isinstance(err, IndexUnavailable)
    assert err.code == "INDEX_UNAVAILABLE"


def test_missing_index_is_index_unavailable():
    info = {"error": {"root_cause": [{"type": "index_not_found_exception", "reason": "no such index [x]"}]}}
    err = translate(os_exc.NotFoundError(404, "index_not_found_exception", info))
    assert isinstance(err, IndexUnavailable)
    assert "no such index [x]" in err.message


def test_bad_request_is_database_error_with_the_engines_reason():
    info = {"error": {"root_cause": [{"type": "parsing_exception", "reason": "unknown query [foo]"}]}}
    err = translate(os_exc.RequestError(400, "parsing_exception", info))
    assert type(err) is SearchError
    assert err.code == "DATABASE_ERROR"
    assert err.details["status"] == 400
    assert "unknown query [foo]" in err.message


def test_engine_errors_context_reraises_translated():
    with pytest.raises(IndexUnavailable):
        with engine_errors():
            raise os_exc.ConnectionTimeout("TIMEOUT", "timed out", Exception())
