"""The public contract of ``search_documents`` / ``get_document`` / ``list_sources`` as pydantic models."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.query.contract import Operator

Route = Literal["hybrid", "bm25", "knn"]
SIMILARITY = ("Cosine of the query's and the chunk's vectors, 0-1 (negative cosines are 0): the same for the same "
              "chunk and query whatever the filters, page or limit; null when the query has no vector.")
RELEVANCE = "Rank score of this result set, 0-1 (relative: compare within one response only)."


class ChunkResult(BaseModel):
    chunk_id: str
    chunk_index: int
    text: str = Field(description="In a search, the chunk's passage that best matches the query (chosen by the "
                      "engine; its opening when no word matches); at most 500 characters, cut at a word boundary. "
                      "get_document gives the whole chunk.")
    page_number: int | None
    page_end: int | None = Field(default=None, description="The page the chunk ends on, when it runs over pages.")
    page_label: str | None = None
    section_title: str | None = None
    clause: str | None = Field(default=None, description="The clause in effect where the chunk starts: «5.2.3», "
                               "«Приложение Б», «Таблица 4»; pass it to get_document to open it.")
    relevance_score: float = Field(description=RELEVANCE)
    similarity: float | None = Field(default=None, description=SIMILARITY)


class DocumentResult(BaseModel):
    id: str = Field(description="Stable document id; pass it (or a chunk_id) to get_document.")
    title: str = Field(description="Designation and name («ГОСТ 10180-2012 Бетоны. Методы …»), as cited.")
    designation: str | None = Field(default=None, description="«СП 63.13330.2018», «ГОСТ 10180-2012», when the "
                                    "document has one.")
    file_path: str
    file_type: str
    file_size: int
    created_at: str | None
    updated_at: str | None
    page_count: int | None = None
    relevance_score: float = Field(ge=0, le=1, description=RELEVANCE)
    similarity: float | None = Field(default=None, description="The similarity of the document's best chunk. "
                                     + SIMILARITY)
    highlights: list[str] = Field(default_factory=list, description="Up to 3 snippets of its best chunks with the "
                                  "query's words marked **like this**.")
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


class VectorCoverage(BaseModel):
    share: float = Field(description="Share of the chunks you may read that have their vector (1.0: all). Below "
                         "1, vectors are still being filled in: the dense leg sees only those chunks, BM25 all.")
    pending_chunks: int = Field(description="Chunks still waiting for their vector.")


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
    vectors: VectorCoverage = Field(default_factory=lambda: VectorCoverage(share=1.0, pending_chunks=0))


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
