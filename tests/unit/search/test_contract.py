"""Every edge of the search contract is generated from ``SearchRequest``: MCP schema, CLI options, eval."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from service.cli.app import app
from service.cli.search_commands import SPLIT_AT_COMMAS, cli_arguments
from service.errors import InvalidQuery
from service.search.request.contract import DocumentRequest, SearchRequest, validate_document_request
from service.search.request.schema import CLAUSES, SHORT_FLAGS, cli_flag, eval_request, parameter_schemas
from service.server.errors import published_schema
from service.server.tools import build_server
from service.settings import Settings
from tests.support.documents import REPO

FIELDS = set(SearchRequest.model_fields)


def search_command() -> Any:
    return typer.main.get_command(app).commands["search"]  # type: ignore[attr-defined]


def mcp_input_schema(tool: str = "search_documents") -> dict[str, Any]:
    server = build_server(Settings(), service=object())  # type: ignore[arg-type]
    return next(t for t in server.published if t.name == tool).input_schema


def test_get_document_parameters_and_bounds_come_from_its_request_model() -> None:
    schema = mcp_input_schema("get_document")
    assert set(schema["properties"]) == set(DocumentRequest.model_fields) == {"id", "designation", "clause", "query",
                                                                             "compare"}
    assert "required" not in schema  # id or designation: the contract asks for exactly one
    for name, expected in parameter_schemas(DocumentRequest).items():
        assert {k: v for k, v in schema["properties"][name].items() if k != "title"} == \
            {k: v for k, v in expected.items() if k != "title"}, name
    assert schema["properties"]["id"]["anyOf"][0]["maxLength"] == 40
    assert schema["properties"]["designation"]["anyOf"][0]["maxLength"] == 80
    assert schema["properties"]["query"]["anyOf"][0]["maxLength"] == 500


@pytest.mark.parametrize(("arguments", "field"), [({"id": "0" * 41}, "id"), ({"id": ""}, "id"),
                                                  ({"id": "0" * 20, "clause": "5" * 61}, "clause"),
                                                  ({"id": "0" * 20, "query": "м" * 501}, "query"),
                                                  ({"id": "0" * 20, "query": ""}, "query"),
                                                  ({"id": "0" * 20, "query": "высота", "clause": "5.1"}, "request"),
                                                  ({"id": ["0" * 20]}, "id"), ({"id": "0" * 20, "page": 2}, "page"),
                                                  ({}, "request"), ({"id": "0" * 20, "designation": "СП 1.13130"},
                                                                    "request"),
                                                  ({"designation": "Правила"}, "request"),
                                                  ({"designation": "СП 1.13130", "query": "высота"}, "request"),
                                                  ({"designation": "СП 1.13130", "compare": True}, "request"),
                                                  ({"designation": "С" * 81}, "designation")])
def test_get_document_arguments_out_of_bounds_are_an_invalid_query_naming_the_field(
        arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidQuery) as raised:
        validate_document_request(arguments)
    assert [p["field"] for p in raised.value.details["problems"]] == [field]


def test_mcp_tool_parameters_are_the_request_model_fields_with_their_schemas() -> None:
    schema = mcp_input_schema()
    assert set(schema["properties"]) == FIELDS
    assert schema["required"] == ["query"]
    for name, expected in parameter_schemas().items():
        published = {k: v for k, v in schema["properties"][name].items() if k != "title"}
        # as published for clients' converters: no boolean additionalProperties (service.server.errors)
        assert published == published_schema({k: v for k, v in expected.items() if k != "title"}), name


def test_cli_options_are_the_mcp_parameters_hyphenated_with_short_flags() -> None:
    params = {p.name: p for p in search_command().params}
    assert set(params) - {"fmt"} == FIELDS
    assert params["query"].param_type_name == "argument"
    for name in FIELDS - {"query"}:
        assert cli_flag(name) in params[name].opts, name
        if name in SHORT_FLAGS:
            assert SHORT_FLAGS[name] in params[name].opts + params[name].secondary_opts
    assert {"-l", "-t", "-m", "-f"} <= {o for p in params.values() for o in p.opts}


def test_cli_defaults_are_the_contract_defaults() -> None:
    params = {p.name: p for p in search_command().params}
    for name, field in SearchRequest.model_fields.items():
        if field.is_required():
            continue
        default = field.get_default(call_default_factory=True)
        shown = params[name].default
        if isinstance(default, list):
            assert shown in (None, []), name
        elif isinstance(default, bool):
            assert shown is default, name
        else:
            assert shown == (None if default is None else str(default)), name


def test_every_parameter_says_which_engine_clause_it_becomes() -> None:
    assert set(CLAUSES) == FIELDS


def test_cli_values_become_contract_arguments() -> None:
    arguments = cli_arguments({"query": "бетон", "document_types": ["pdf,docx", "txt"], "path": ["/a,b.pdf"],
                               "date_range": "2020-01-01..", "limit": "5", "cursor": None})
    assert arguments == {"query": "бетон", "document_types": ["pdf", "docx", "txt"], "path": ["/a,b.pdf"],
                         "date_range": {"from": "2020-01-01", "to": None}, "limit": 5}
    request = SearchRequest.model_validate(arguments)
    assert request.limit == 5 and request.date_range is not None and request.document_types == ["docx", "pdf", "txt"]
    assert {"document_types"} == SPLIT_AT_COMMAS
    assert cli_arguments({"query": "бетон", "limit": "пять", "threshold": "0.5"}) == {
        "query": "бетон", "limit": "пять", "threshold": 0.5}  # not a number: refused by the contract, by name


def test_eval_sends_the_contract_defaults() -> None:
    request = SearchRequest.model_validate(eval_request("x" * 900, search_mode="fulltext"))
    defaults = SearchRequest(query="x")
    assert len(request.query) == 500
    assert request.model_dump(exclude={"query", "search_mode"}) == defaults.model_dump(exclude={"query", "search_mode"})


def test_docs_carry_the_contract_table_as_generated() -> None:

    from service.search.request.schema import contract_table

    page = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    embedded = page.split("<!-- contract:begin -->\n", 1)[1].split("\n<!-- contract:end -->", 1)[0]
    assert embedded == contract_table(), "regenerate with: python -m service.search.request.schema"


@pytest.mark.parametrize("field", ["document_types", "path", "queries"])
def test_an_object_in_any_list_parameter_is_an_invalid_query_naming_the_field(field: str) -> None:
    from service.errors import InvalidQuery
    from service.search.request.contract import validate_request

    with pytest.raises(InvalidQuery) as caught:
        validate_request({"query": "бетон", field: [{"a": 1}]})
    assert caught.value.details["problems"][0]["field"] == f"{field}.0"
