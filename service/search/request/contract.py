"""The search contract, defined once.

``SearchRequest`` below is the only place a search parameter is declared: name, type, bounds, default and
description. Everything else is generated from it:

- the MCP tool's input schema (``service.search.request.schema.tool_parameters``: one JSON schema per argument,
  bounds included);
- the CLI options of ``stroidok search`` (``cli_parameters``: same names, hyphenated, plus ``SHORT_FLAGS``);
- the eval's request (``eval_request``: the defaults, so eval measures what a default call gets).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from service.errors import InvalidQuery
from service.search.citations.designations import find_designation

SearchMode = Literal["hybrid", "semantic", "fulltext"]
Operator = Literal["AUTO", "AND", "OR", "PHRASE"]
#: every file type the ingest reads (ingest/parse takes its list from here); a filter on another is a mistake
FileType = Literal["pdf", "docx", "doc", "xlsx", "xls", "pptx", "odt", "rtf", "html", "htm", "csv", "tsv", "txt",
                   "md", "epub"]
FILE_TYPES: tuple[str, ...] = get_args(FileType)
SEARCH_MODES: tuple[str, ...] = get_args(SearchMode)
OPERATORS: tuple[str, ...] = get_args(Operator)
M = TypeVar("M", bound=BaseModel)
MAX_PAGE_DEPTH = 1000

Query = Annotated[str, Field(min_length=1, max_length=500)]
#: the advice an agent sees in the tool's schema: norms answer in their own words, not the engineer's
PHRASING_ADVICE = (
    "Phrase it as a norm states the requirement, in the norms' terms (e.g. «расстояние между осями», "
    "«предел огнестойкости», «не менее»), not in conversational words, and put one or two alternative "
    "phrasings with other terms for the same thing in `queries`.")
_WORD_RE = re.compile(r"\w")
PathText = Annotated[str, Field(min_length=1, max_length=1000)]


def stripped(value: Any) -> Any:
    """Text without the spaces around it (a parameter's value as typed), anything else as it is."""
    return value.strip() if isinstance(value, str) else value


def shown_bytes(text: str) -> str:
    """A command line's undecodable text as the bytes it was given, for a message."""
    try:
        return repr(text.encode("utf-8", "surrogateescape")[:80])
    except UnicodeEncodeError:
        return repr(text.encode("utf-8", "backslashreplace")[:80])


def utf8_text(data: Any) -> Any:
    """The arguments as given, when every text in them (at any depth) is valid UTF-8; a command line passes bytes
    that are not (``--path $'\\xff'``) as lone surrogates, which nothing downstream can encode."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"text is not valid UTF-8: {shown_bytes(value)}") from exc
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return data


class DateRange(BaseModel):
    """Modification dates, both ends included; either end may be left open."""

    #: dates come as text ("2024-01-31") from every edge: parsed, unlike the request's strict scalars
    model_config = ConfigDict(populate_by_name=True, extra="forbid", strict=False)

    from_: date | None = Field(default=None, alias="from", description="First day included (YYYY-MM-DD).")
    to: date | None = Field(default=None, description="Last day included (YYYY-MM-DD).")

    @model_validator(mode="after")
    def _ordered(self) -> DateRange:
        if self.from_ and self.to and self.from_ > self.to:
            raise ValueError("date_range.from is after date_range.to")
        return self


class SearchRequest(BaseModel):
    """The arguments of ``search_documents``; every bound here is the product's, not the engine's. Types are
    strict, as published: "3", 3.0 or true for an integer, "yes" for a boolean are refused, not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)
    _utf8 = model_validator(mode="before")(utf8_text)

    query: Query = Field(description="What to find, in Russian: 1-500 characters. " + PHRASING_ADVICE
                         + " \"Quoted\" parts are exact phrases.")
    queries: list[Query] = Field(default_factory=list, max_length=5, description=(
        "Up to 5 further phrasings searched together in the same one request (results merged, deduplicated): "
        "add the norms' synonyms and terms for the same question here rather than calling again."))
    limit: int = Field(default=10, ge=1, le=50, description="Documents per page, 1-50.")
    page: int = Field(default=1, ge=1, le=200, description="Page number, from 1 (page × limit ≤ 1000).")
    cursor: str | None = Field(default=None, min_length=1, max_length=200, description=(
        "next_cursor of a previous response: continues exactly where it stopped (overrides page)."))
    document_types: list[FileType] = Field(default_factory=list, max_length=20, description=(
        "File types, any of them, e.g. [\"pdf\", \"docx\"]."))
    path: list[PathText] = Field(default_factory=list, max_length=50, description=(
        "Only these files: exact file_path values as results and list_sources show them."))
    folder: PathText | None = Field(default=None, description=(
        "Only files below this folder (whole path segments): an absolute folder from list_sources, or a "
        "relative part such as \"norms/fire\" matched anywhere in the path."))
    date_range: DateRange | None = Field(default=None, description=(
        "{\"from\": \"YYYY-MM-DD\", \"to\": \"YYYY-MM-DD\"} on the file's modification date; either end optional."))
    source_filter: str | None = Field(default=None, min_length=1, max_length=200, description=(
        "A fragment of the file path or name (case-sensitive); prefer path or folder."))
    cites: str | None = Field(default=None, min_length=3, max_length=100, description=(
        "Only documents that cite this designation: \"СП 63.13330.2018\" (that edition, as cited) or \"СП "
        "63.13330\" (any edition of it)."))
    current_only: bool = Field(default=False, description=(
        "Leave out editions the archive holds a newer one of (results marked superseded_by)."))
    include_context: bool = Field(default=True, description="Return the matching chunks' text.")
    max_chunks: int = Field(default=3, ge=1, le=10, description="Chunks per document, 1-10.")
    search_mode: SearchMode = Field(default="hybrid", description=(
        "hybrid (BM25 + vectors, default), semantic (vectors) or fulltext (BM25)."))
    operator: Operator = Field(default="AUTO", description=(
        "AUTO (default, for questions): the configured share of the words must match (default: any word, "
        "ranked by how many), \"straight-quoted\" parts are required phrases; "
        "AND: every word and quoted part (a word may be in the chunk's text, its document's title or designation, "
        "or its section title: «высота комнат СП 54.13330» finds the clause of СП 54.13330.2016); OR: any word; "
        "PHRASE: the whole query as one phrase. AND, PHRASE and "
        "required phrases bind in every search_mode."))
    threshold: float | None = Field(default=None, ge=0, le=1, description=(
        "Minimum similarity 0-1 (cosine of query and chunk vectors, the results' `similarity`), applied "
        "inside the engine to every chunk before ranking, totals and facets."))

    _trim = field_validator("query", "source_filter", "folder", mode="before")(stripped)

    @field_validator("cites", mode="after")
    @classmethod
    def _designation(cls, value: str | None) -> str | None:
        """The designation as the index stores it («сп 63.13330» → «СП 63.13330»)."""
        if value is None:
            return None
        designation = find_designation(value)
        if designation is None:
            raise ValueError("cites must be a designation such as \"СП 63.13330.2018\" or \"ГОСТ 10180\"")
        return designation

    @field_validator("query", mode="after")
    @classmethod
    def _has_words(cls, value: str) -> str:
        """A query of quotes or punctuation alone would match everything (AND of nothing) or nothing."""
        if not _WORD_RE.search(value):
            raise ValueError("the query has no words or numbers to search for")
        return value

    @field_validator("queries", mode="after")
    @classmethod
    def _all_have_words(cls, value: list[str]) -> list[str]:
        if any(not _WORD_RE.search(v) for v in value):
            raise ValueError("every phrasing needs words or numbers to search for")
        return value

    @field_validator("queries", mode="before")
    @classmethod
    def _trim_all(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [v.strip() if isinstance(v, str) else v for v in value if not isinstance(v, str) or v.strip()]

    @field_validator("document_types", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return value  # not strings: the field's own validation names the item that is wrong
        return sorted({v.strip().lower().lstrip(".") for v in value})

    @field_validator("path", mode="before")
    @classmethod
    def _unique(cls, value: Any) -> Any:
        return list(dict.fromkeys(value)) if isinstance(value, list) and all(isinstance(v, str) for v in value) \
            else value

    @model_validator(mode="after")
    def _depth(self) -> SearchRequest:
        if self.page * self.limit > MAX_PAGE_DEPTH:
            raise ValueError(f"page × limit may not exceed {MAX_PAGE_DEPTH}; narrow the query or the filters")
        return self

    @property
    def all_queries(self) -> list[str]:
        return list(dict.fromkeys([self.query, *self.queries]))


class DocumentRequest(BaseModel):
    """The arguments of ``get_document``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    _utf8 = model_validator(mode="before")(utf8_text)

    id: str | None = Field(default=None, min_length=1, max_length=40,
                           description="A result id (document) or a chunk_id (<document id>:<n>).")
    designation: str | None = Field(default=None, min_length=2, max_length=80, description=(
        "Open a document by its designation instead of an id: «СП 1.13130.2020», «ГОСТ 27772-2021», «СНиП "
        "2.01.07-85*»; without an edition («СП 1.13130») the archive's current edition."))
    clause: str | None = Field(default=None, min_length=1, max_length=60,
                               description="Open this clause of the document: «5.2.3», «п. 5.2.3», «Приложение Б», "
                                           "«Таблица 4».")
    query: Query | None = Field(default=None, description=(
        "Rank every passage of the document by this question and return its best few (`passages`, each with its "
        "clause and page) instead of a chunk and its neighbours: the call to make when the document is the "
        "right one but no passage shown so far answers. Phrase it as the norm states the requirement, in its terms."))

    compare: bool = Field(default=False, description=(
        "With designation and clause: the clause in every edition of the document the archive holds (and in "
        "the document replacing it), with a word-level difference of their texts."))

    @model_validator(mode="after")
    def _one_way_in(self) -> DocumentRequest:
        if self.clause is not None and self.query is not None:
            raise ValueError("give clause (open that clause) or query (its best passages), not both")
        if (self.id is None) == (self.designation is None):
            raise ValueError("give id or designation (one of them)")
        if self.designation is not None and find_designation(self.designation) is None:
            raise ValueError("designation must name a document: «СП 1.13130.2020», «ГОСТ 27772-2021»")
        if self.designation is not None and self.query is not None:
            raise ValueError("query needs id: open the document by designation, then ask with its id")
        if self.compare and (self.designation is None or self.clause is None):
            raise ValueError("compare needs designation and clause")
        return self


class PageRequest(BaseModel):
    """The arguments of ``get_page_image``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    _utf8 = model_validator(mode="before")(utf8_text)

    id: str = Field(min_length=1, max_length=40, description="A result id (document) or a chunk_id of a PDF.")
    page: int = Field(ge=1, le=100_000, description="The page to see, as page_number gives it (1 is the first).")


def validate_page_request(arguments: dict[str, Any]) -> PageRequest:
    """``get_page_image``'s arguments → ``PageRequest`` (one ``INVALID_QUERY`` naming the field)."""
    return _validated(PageRequest, arguments, "get_page_image request")


class CitationsRequest(BaseModel):
    """The arguments of ``check_citations``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    _utf8 = model_validator(mode="before")(utf8_text)

    text: str | None = Field(default=None, min_length=1, max_length=20_000, description=(
        "The text whose citations to check: a draft answer, a list. Citations as documents and engineers write "
        "them: «СП 54.13330.2016, п. 5.8», «СП 1.13130.2020, 4.2.19», «п.5.8 СП 54.13330», «табл. 2 ГОСТ "
        "13579-2018», «приложение Б СП 20.13330.2016», with a value stated after a colon («п. 5.8: не менее 2,7 "
        "м», or quoted «…») checked too."))
    document_id: str | None = Field(default=None, min_length=1, max_length=40, description=(
        "Instead of a text: check every citation of an indexed document (a result id) you may read — a project's "
        "explanatory note, a specification —, each with its page and line, and a summary by verdict."))

    @model_validator(mode="after")
    def _one_of(self) -> CitationsRequest:
        if (self.text is None) == (self.document_id is None):
            raise ValueError("give text or document_id (one of them)")
        return self


def validate_citations_request(arguments: dict[str, Any]) -> CitationsRequest:
    """``check_citations``' arguments → ``CitationsRequest`` (one ``INVALID_QUERY`` naming the field)."""
    return _validated(CitationsRequest, arguments, "check_citations request")


class SourcesRequest(BaseModel):
    """The arguments of ``list_sources``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    _utf8 = model_validator(mode="before")(utf8_text)

    folder: PathText | None = Field(default=None, description=(
        "Only what lies below this folder (whole path segments): an absolute folder, or a folder name anywhere "
        "in the path; omit it for the whole archive."))

    _trim = field_validator("folder", mode="before")(stripped)


def validate_sources_request(arguments: dict[str, Any]) -> SourcesRequest:
    """``list_sources``' arguments → ``SourcesRequest`` (one ``INVALID_QUERY`` naming the field)."""
    return _validated(SourcesRequest, arguments, "list_sources request")


def validate_request(arguments: dict[str, Any]) -> SearchRequest:
    """Tool/CLI arguments → ``SearchRequest``; pydantic's complaints become one ``INVALID_QUERY``."""
    return _validated(SearchRequest, arguments, "search request")


def validate_document_request(arguments: dict[str, Any]) -> DocumentRequest:
    """``get_document``'s arguments → ``DocumentRequest`` (one ``INVALID_QUERY`` naming the field)."""
    return _validated(DocumentRequest, arguments, "get_document request")


def _validated(model: type[M], arguments: dict[str, Any], what: str) -> M:
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise InvalidQuery.from_validation(exc, what, "request") from exc
