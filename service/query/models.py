"""The public contract of ``search_documents`` / ``get_document`` / ``list_sources`` as pydantic models."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SearchMode = Literal["hybrid", "semantic", "fulltext"]
Operator = Literal["AUTO", "AND", "OR", "PHRASE"]
Route = Literal["hybrid", "bm25", "knn"]
#: every file type the ingest reads (ingest/parse takes its list from here); a filter on another is a mistake
FileType = Literal["pdf", "docx", "doc", "xlsx", "xls", "pptx", "odt", "rtf", "html", "htm", "csv", "tsv", "txt",
                   "md", "epub"]
FILE_TYPES: tuple[str, ...] = get_args(FileType)
MAX_PAGE_DEPTH = 1000


class DateRange(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    from_: date | None = Field(default=None, alias="from", description="First day included (YYYY-MM-DD).")
    to: date | None = Field(default=None, description="Last day included (YYYY-MM-DD).")

    @model_validator(mode="after")
    def _ordered(self) -> DateRange:
        if self.from_ and self.to and self.from_ > self.to:
            raise ValueError("date_range.from is after date_range.to")
        return self


class SearchRequest(BaseModel):
    """Validated search input; every bound here is the product's, not the engine's."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=500)
    queries: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(default_factory=list, max_length=5)
    limit: int = Field(default=10, ge=1, le=50)
    page: int = Field(default=1, ge=1, le=200)
    cursor: str | None = Field(default=None, max_length=200)
    document_types: list[FileType] = Field(default_factory=list, max_length=20)
    date_range: DateRange | None = None
    source_filter: str | None = Field(default=None, min_length=1, max_length=200)
    include_context: bool = True
    max_chunks: int = Field(default=3, ge=1, le=10)
    search_mode: SearchMode = "hybrid"
    operator: Operator = "AUTO"
    threshold: float | None = Field(default=None, ge=0, le=1)

    @field_validator("query", "source_filter", mode="before")
    @classmethod
    def _trim(cls, value: str | None) -> str | None:
        return value.strip() if isinstance(value, str) else value

    @field_validator("queries", mode="before")
    @classmethod
    def _trim_all(cls, value: list[str] | None) -> list[str]:
        return [v.strip() for v in value or [] if isinstance(v, str) and v.strip()]

    @field_validator("document_types", mode="before")
    @classmethod
    def _lower(cls, value: list[str] | None) -> list[str]:
        return sorted({v.strip().lower().lstrip(".") for v in value or []})

    @model_validator(mode="after")
    def _depth(self) -> SearchRequest:
        if self.page * self.limit > MAX_PAGE_DEPTH:
            raise ValueError(f"page × limit may not exceed {MAX_PAGE_DEPTH}; narrow the query or the filters")
        return self

    @property
    def all_queries(self) -> list[str]:
        return list(dict.fromkeys([self.query, *self.queries]))


class ChunkResult(BaseModel):
    chunk_id: str
    chunk_index: int
    text: str = Field(description="At most 500 characters, cut at a word boundary.")
    page_number: int | None
    page_label: str | None = None
    section_title: str | None = None
    relevance_score: float


class DocumentResult(BaseModel):
    id: str = Field(description="Stable document id; pass it (or a chunk_id) to get_document.")
    title: str
    file_path: str
    file_type: str
    file_size: int
    created_at: str | None
    updated_at: str | None
    page_count: int | None = None
    relevance_score: float = Field(ge=0, le=1)
    highlights: list[str] = Field(default_factory=list)
    context_chunks: list[ChunkResult] = Field(default_factory=list)


class Timings(BaseModel):
    embedding_ms: float = 0.0
    search_ms: float = 0.0
    total_ms: float = 0.0


class Facets(BaseModel):
    document_types: dict[str, int] = Field(default_factory=dict)
    date_distribution: dict[str, int] = Field(default_factory=dict, description="Documents per month (YYYY-MM).")


class Suggestions(BaseModel):
    corrected_query: str | None = None
    related_queries: list[str] = Field(default_factory=list)


class Pagination(BaseModel):
    page: int
    limit: int
    total_pages: int
    has_more: bool
    next_cursor: str | None = None


class SearchMeta(BaseModel):
    query: str
    total_results: int
    route_used: Route
    operator_used: Operator = Field(default="AUTO", description="The operator applied to the text (see docs/tools.md).")
    fallback_reason: str | None = None
    timings: Timings
    facets: Facets
    suggestions: Suggestions
    pagination: Pagination
    truncated: bool = False
    cached: bool = False


class SearchResponse(BaseModel):
    status: Literal["ok"] = "ok"
    results: list[DocumentResult]
    meta: SearchMeta


class DocumentResponse(BaseModel):
    status: Literal["ok"] = "ok"
    id: str
    document: DocumentResult
    chunk: ChunkResult | None = Field(default=None, description="The requested chunk when a chunk id was given.")
    neighbours: list[ChunkResult] = Field(default_factory=list, description="Chunks just before and after it.")


class SourcesResponse(BaseModel):
    status: Literal["ok"] = "ok"
    total_documents: int
    total_chunks: int
    document_types: dict[str, int]
    folders: dict[str, int]
    earliest: str | None
    latest: str | None
