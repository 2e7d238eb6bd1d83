"""The engine client's JSON serializer: orjson speed, opensearch-py's output and errors."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid

import numpy as np
import pytest
from opensearchpy import JSONSerializer
from opensearchpy.exceptions import SerializationError

from service.engine.gateway import FastJSONSerializer, build_client
from service.settings import Settings

BODY = {"query": {"knn": {"embedding": {"vector": [0.25, -1.5e-07, 3.0], "k": 10}}}, "text": "Бетон «В25» — п. 5.2",
        "when": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "day": dt.date(2024, 1, 2), "n": np.int64(7),
        "v": np.array([1.5, 2.0], dtype=np.float32), "d": decimal.Decimal("1.25"), "id": uuid.UUID(int=5),
        "ok": True, "none": None}


def test_it_writes_what_opensearch_py_writes() -> None:
    assert json.loads(FastJSONSerializer().dumps(BODY)) == json.loads(JSONSerializer().dumps(BODY))
    assert "Бетон" in FastJSONSerializer().dumps(BODY)  # UTF-8, not \\u escapes


def test_strings_pass_through_and_responses_parse() -> None:
    assert FastJSONSerializer().dumps('{"a":1}\n') == '{"a":1}\n'
    assert FastJSONSerializer().loads('{"hits": {"total": {"value": 3}}, "t": "ё"}') == {
        "hits": {"total": {"value": 3}}, "t": "ё"}


def test_failures_are_the_clients_serialization_error() -> None:
    with pytest.raises(SerializationError):
        FastJSONSerializer().dumps({"x": object()})
    with pytest.raises(SerializationError):
        FastJSONSerializer().loads("{not json")


def test_the_client_uses_it() -> None:
    client = build_client(Settings())
    assert isinstance(client.transport.serializer, FastJSONSerializer)
    assert isinstance(client.transport.deserializer.serializers["application/json"], FastJSONSerializer)
