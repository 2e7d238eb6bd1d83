"""What the contract generates: the MCP tool's parameters, the CLI's flags, the eval's request, the docs' table,
the query log's fields and the largest call's bytes — each from the request models of
``service.search.request.contract``, never declared twice. ``CLAUSES`` says which OpenSearch clause each
parameter becomes (docs/tools.md prints it), and a test fails when any edge differs from the model.
"""

from __future__ import annotations

import copy
import inspect
import json
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from service.search.request.contract import (
    CitationsRequest,
    DocumentRequest,
    PageRequest,
    SearchRequest,
    SourcesRequest,
)

#: which part of the engine request each parameter becomes (service/search/dsl/build.py builds it)
CLAUSES: dict[str, str] = {
    "query": "hybrid.queries: multi_match (+ match_phrase for quotes) and the k-NN leg's query vector",
    "queries": "dis_max over each phrasing's text leg; the mean of their vectors for the k-NN leg",
    "limit": "size (documents, after collapse on doc_id)",
    "page": "from = (page - 1) × limit",
    "cursor": "from = the offset the cursor carries",
    "document_types": "filter: terms file_type",
    "path": "filter: terms file_path",
    "folder": "filter: prefix file_path \"<folder>/\" (absolute) or wildcard \"*/<folder>/*\" (relative)",
    "date_range": "filter: range updated_at (gte from, lte to||/d)",
    "source_filter": "filter: prefix file_path (absolute) or wildcard *fragment*",
    "cites": "filter: term cites (an edition) or cites_family (no edition)",
    "current_only": "filter: must_not exists superseded_by",
    "include_context": "the chunks request's passages shown whole, or as short highlights",
    "max_chunks": "the chunks request's top_hits size (plus the candidates re-ranked)",
    "search_mode": "which hybrid.queries legs run and with which search pipeline",
    "operator": "multi_match operator / minimum_should_match / match_phrase, and a hybrid-level filter for "
                "AND, PHRASE and required phrases",
    "threshold": "hybrid-level filter: radial k-NN (min_score = (1 + threshold) / 2, cosine space)",
}


#: short CLI flags; the long flag is always the parameter's name hyphenated
SHORT_FLAGS: dict[str, str] = {"limit": "-l", "page": "-p", "document_types": "-t", "search_mode": "-m",
                               "operator": "-o", "queries": "-q", "max_chunks": "-c"}


def cli_flag(name: str) -> str:
    """The long CLI flag of parameter ``name``: its name hyphenated."""
    return "--" + name.replace("_", "-")


def inline_refs(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` into ``defs`` replaced by the definition itself."""
    if "$ref" in schema:
        return inline_refs(copy.deepcopy(defs[schema["$ref"].rsplit("/", 1)[-1]]), defs)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if isinstance(value, dict):
            out[key] = inline_refs(value, defs)
        elif isinstance(value, list):
            out[key] = [inline_refs(v, defs) if isinstance(v, dict) else v for v in value]
        else:
            out[key] = value
    return out


def parameter_schemas(model: type[BaseModel] = SearchRequest) -> dict[str, dict[str, Any]]:
    """Each parameter's JSON schema (bounds, enum, default, description), self-contained."""
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    out = {name: inline_refs(prop, defs) for name, prop in schema["properties"].items()}
    for name, prop in out.items():
        if (default := default_of(name, model)) is not inspect.Parameter.empty:
            prop.setdefault("default", default)
    return out


def default_of(name: str, model: type[BaseModel] = SearchRequest) -> Any:
    """The default of parameter ``name`` (``inspect.Parameter.empty`` when it is required)."""
    field = model.model_fields[name]
    return inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)


def tool_parameters(model: type[BaseModel] = SearchRequest) -> list[inspect.Parameter]:
    """The MCP tool's keyword parameters: typed ``Any`` with the model's own JSON schema, so the SDK
    publishes the exact contract and passes the arguments through untouched: the service validates them
    once and answers ``INVALID_QUERY`` with the field."""
    from pydantic import WithJsonSchema

    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                              annotation=Annotated[Any, WithJsonSchema(schema)], default=default_of(name, model))
            for name, schema in parameter_schemas(model).items()]


def provided(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a caller set (None means "not given" at every edge)."""
    return {k: v for k, v in arguments.items() if v is not None}


def eval_request(query: str, **overrides: Any) -> dict[str, Any]:
    """The request ``stroidok eval`` sends: the contract's defaults, the query cut to its bound."""
    bound = SearchRequest.model_fields["query"].metadata
    max_length = next(m.max_length for m in bound if getattr(m, "max_length", None))
    return {"query": query[:max_length], **overrides}


def schema_type(schema: dict[str, Any]) -> str:
    """A parameter's type and bounds in a few words, for the docs table."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    part = options[0] if options else schema
    kind = part.get("type", "object")
    if kind == "object":
        return "object {" + ", ".join(part.get("properties", {})) + "}"
    if "enum" in part:
        return " \\| ".join(f"`{v}`" for v in part["enum"])
    if kind == "array":
        items = part.get("items", {})
        inner = "one of the file types" if "enum" in items else items.get("type", "value")
        return f"list of ≤ {part.get('maxItems', '∞')} ({inner})"
    bounds = [f"{part[k]}–{part[m]}" for k, m in (("minimum", "maximum"),) if k in part and m in part]
    bounds += [f"{part['minLength']}–{part['maxLength']} chars"] if "maxLength" in part else []
    return f"{kind}" + (f", {bounds[0]}" if bounds else "")


def contract_table() -> str:
    """The contract as a markdown table (docs/tools.md embeds it; a test keeps the two equal)."""
    rows = ["| parameter | CLI | type | default | meaning | engine clause |", "|---|---|---|---|---|---|"]
    for name, schema in parameter_schemas().items():
        flag = "argument" if name == "query" else f"`{cli_flag(name)}`" + (
            f" `{SHORT_FLAGS[name]}`" if name in SHORT_FLAGS else "")
        default = default_of(name)
        shown = "required" if default is inspect.Parameter.empty else f"`{json.dumps(default, ensure_ascii=False)}`"
        description = schema.get("description", "").replace("|", "\\|")
        clause = CLAUSES[name].replace("|", "\\|")
        rows.append(f"| `{name}` | {flag} | {schema_type(schema)} | {shown} | {description} | {clause} |")
    return "\n".join(rows)



def logged_fields(arguments: dict[str, Any]) -> dict[str, Any]:
    """What the query log keeps of a search request: its main fields (defaults filled) when the arguments are
    valid, and which filter parameters it set."""
    try:
        request = SearchRequest.model_validate(arguments)
    except (ValidationError, TypeError, ValueError):
        return {}
    return {"search_mode": request.search_mode, "operator": request.operator, "page": request.page,
            "document_types": request.document_types, "filters": used_filters(request)}


#: the search parameters that narrow or shape a search, as ``stats`` counts their use
FILTER_PARAMETERS = ("queries", "document_types", "date_range", "path", "folder", "source_filter", "cites",
                     "threshold", "current_only")


def used_filters(request: SearchRequest) -> list[str]:
    """The filter parameters a search set (a default value is not a use)."""
    defaults = SearchRequest(query=request.query)
    return [name for name in FILTER_PARAMETERS if getattr(request, name) != getattr(defaults, name)]


#: a character's longest JSON form: outside the BMP, escaped as a surrogate pair («\ud83d\ude00»)
ESCAPED_CHAR_BYTES = 12
#: a JSON-RPC ``tools/call`` around its arguments: jsonrpc, id, method, the tool's name, the keys
ENVELOPE_BYTES = 4096


def largest_json_bytes(schema: dict[str, Any]) -> int:
    """The most bytes a value valid under ``schema`` takes as JSON, every character escaped at its longest; a
    string without a length bound is ``ValueError`` (the contract bounds every input)."""
    if "anyOf" in schema:
        return max(largest_json_bytes(option) for option in schema["anyOf"])
    if "enum" in schema:
        return max(len(json.dumps(value)) * ESCAPED_CHAR_BYTES for value in schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        longest = 10 if schema.get("format") == "date" else schema.get("maxLength")
        if longest is None:
            raise ValueError(f"a string without maxLength: {schema.get('title')}")
        return 2 + ESCAPED_CHAR_BYTES * int(longest)
    if kind == "array":
        return 2 + int(schema["maxItems"]) * (largest_json_bytes(schema["items"]) + 1)
    if kind == "object":
        return 2 + sum(3 + ESCAPED_CHAR_BYTES * len(key) + largest_json_bytes(value) + 1
                       for key, value in schema["properties"].items())
    return {"integer": 24, "number": 32, "boolean": 5, "null": 4}[str(kind)]


def largest_call_bytes() -> int:
    """The largest HTTP body a valid tool call can take, for any JSON escaping: the HTTP body limit must hold it."""
    return ENVELOPE_BYTES + max(largest_json_bytes({"type": "object", "properties": parameter_schemas(model)})
                                for model in (SearchRequest, DocumentRequest, CitationsRequest, PageRequest,
                                              SourcesRequest))


if __name__ == "__main__":
    print(contract_table())
