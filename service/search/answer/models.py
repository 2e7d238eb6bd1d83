"""The public contract of ``search_documents`` / ``get_document`` / ``list_sources`` as pydantic models."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.search.request.contract import Operator

Route = Literal["hybrid", "bm25", "knn"]
SIMILARITY = ("Cosine of the query's and the chunk's vectors, 0-1 (negative cosines are 0): the same for the same "
              "chunk and query whatever the filters, page or limit; null when the query has no vector.")
STATED = "As the document states it on its first pages, {}; absent when it does not state it (never inferred)."
RELEVANCE = "Rank score of this result set, 0-1 (relative: compare within one response only)."


class ChunkResult(BaseModel):
    chunk_id: str = Field(description="Pass it to get_document for the whole chunk and its neighbours.")
    chunk_index: int | None = Field(default=None, description="The chunk's position in its document "
                                    "(get_document; in a search it is the number after the colon of chunk_id).")
    text: str = Field(description="In a search, the passage of the chunk that answers the query: the whole "
                      "clause where it fits, cut at clause or sentence boundaries (never inside a word), at most "
                      "passage_chars (600) characters. get_document gives the whole chunk.")
    page_number: int | None = Field(default=None, description="The page the text starts on.")
    page_end: int | None = Field(default=None, description="The page it ends on, when it runs over pages.")
    page_label: str | None = Field(default=None, description="The sheet (XLSX) or the page's own label.")
    section_title: str | None = Field(default=None, description="get_document: the heading the chunk is under; "
                                      "in a search, only when the query's quoted phrase is in that heading and "
                                      "not in the text shown.")
    clause: str | None = Field(default=None, description="The clause in effect where the text starts: «5.2.3», "
                               "«Приложение Б», «Таблица 4»; pass it to get_document to open it.")
    clause_end: str | None = Field(default=None, description="The clause in effect where the text ends, when "
                                   "the text runs from one clause into another.")
    relevance_score: float = Field(description=RELEVANCE)
    similarity: float | None = Field(default=None, description=SIMILARITY)


class Copy(BaseModel):
    id: str = Field(description="The copy's document id (get_document).")
    file_path: str


class Edition(BaseModel):
    id: str | None = Field(default=None, description="Its document id (get_document), when the archive holds it "
                           "and you may read it.")
    designation: str


class CitingDocument(BaseModel):
    id: str
    designation: str | None = None
    title: str


class DocumentResult(BaseModel):
    id: str = Field(description="Stable document id; pass it (or a chunk_id) to get_document.")
    title: str = Field(description="Designation and name («ГОСТ 10180-2012 Бетоны. Методы …»), as cited.")
    designation: str | None = Field(default=None, description="«СП 63.13330.2018», «ГОСТ 10180-2012», when the "
                                    "document has one.")
    file_path: str
    file_type: str
    copies: list[Copy] | None = Field(default=None, description="The same file (identical content) kept at other "
                                      "paths too: every path you may read, this one among them; absent when "
                                      "there is one.")
    superseded_by: Edition | None = Field(default=None, description="A newer edition of this document the "
                                          "archive holds (a later edition of its family, or one that says it "
                                          "replaces it): cite that one unless you mean this edition.")
    introduced: str | None = Field(default=None, description=STATED.format("«Дата введения»: the date it came "
                                                                           "into force"))
    amendments: list[str] | None = Field(default=None, description=STATED.format("the amendments it names "
                                                                                 "(«Изменение № 1»)"))
    withdrawn: str | None = Field(default=None, description=STATED.format("its stamp that it is withdrawn "
                                                                          "(«Утратил силу …»)"))
    file_size: int | None = Field(default=None, description="get_document: bytes.")
    created_at: str | None = Field(default=None, description="get_document: the file's creation time.")
    updated_at: str | None = Field(default=None, description="get_document: the file's modification time "
                                   "(date_range filters on it).")
    page_count: int | None = Field(default=None, description="get_document: pages (sheets for XLSX).")
    relevance_score: float = Field(ge=0, le=1, description=RELEVANCE)
    similarity: float | None = Field(default=None, description="The similarity of the document's best chunk. "
                                     + SIMILARITY)
    highlights: list[str] | None = Field(default=None, description="With include_context false only: up to 3 "
                                         "short lines (~120 characters) around the query's words, marked **like "
                                         "this** (with context, the passages are the text; nothing is repeated).")
    context_chunks: list[ChunkResult] = Field(default_factory=list, description="The document's chunks that "
                                              "answer best, best first: its best one, then up to max_chunks while "
                                              "the answer stays within its size (docs/tools.md).")


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
    total_pages: int = Field(description="Pages of total_results; where the ranking ran out (``reachable`` "
                             "set), the pages that hold results: there is no page after them.")
    has_more: bool
    next_cursor: str | None = None
    reachable: int | None = Field(default=None, description="Set when the walk ended before total_results: the "
                                  "documents the ranking reaches (the pages up to this one; up to the previous one "
                                  "when this page came back empty); the rest match too but rank below its depth — "
                                  "narrow the query or add filters to see them.")


class VectorCoverage(BaseModel):
    share: float = Field(description="Share of the chunks you may read that have their vector (1.0: all). Below "
                         "1, vectors are still being filled in: the dense leg sees only those chunks, BM25 all.")
    pending_chunks: int = Field(description="Chunks still waiting for their vector.")


class SearchMeta(BaseModel):
    query: str
    total_results: int = Field(description="Documents that match the query (one per content), the engine's count: "
                               "the same on every page of a walk. The pages show the best of them and can end "
                               "(has_more false) before the count on a broad OR query of a large archive.")
    total_relation: Literal["eq", "gte"] = Field(
        default="eq", description="gte: total_results and the facets are counted over the text leg's best "
        "candidate chunks and the dense leg's (the query matches more: a broad query of a large archive), eq: "
        "over every match.")
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


Verdict = Literal["found", "clause_not_found", "superseded", "edition_not_found", "document_not_found", "ambiguous"]


class CitedDocument(BaseModel):
    id: str | None = Field(default=None, description="Its document id (get_document), when you may read it.")
    designation: str
    title: str | None = None
    introduced: str | None = Field(default=None, description=STATED.format("«Дата введения»"))
    amendments: list[str] | None = Field(default=None, description=STATED.format("«Изменение № N»"))
    withdrawn: str | None = Field(default=None, description=STATED.format("«Утратил силу …»"))


class CitedClause(BaseModel):
    clause: str = Field(description="The clause, table or appendix as the document labels it.")
    text: str = Field(description="The clause's text from its start, cut at a clause or sentence boundary, at "
                      "most passage_chars (600) characters.")
    page_number: int | None = Field(default=None, description="The page the clause starts on.")
    chunk_id: str = Field(description="The chunk it starts in: get_document(chunk_id) for all of it.")



class ClauseEdition(BaseModel):
    designation: str
    id: str | None = None
    clause: CitedClause
    difference: str | None = Field(default=None, description=(
        "The words changed from the edition before: [-removed-] {+added+}, the rest elided by «…»; absent for "
        "the first edition, empty when the texts agree."))
    changed_numbers: list[str] | None = Field(default=None, description="Numbers that changed: «2,5 → 2,7».")


class DocumentResponse(BaseModel):
    status: Literal["ok"] = "ok"
    id: str
    document: DocumentResult
    chunk: ChunkResult | None = Field(default=None, description="The requested chunk when a chunk id was given.")
    neighbours: list[ChunkResult] = Field(default_factory=list, description="Chunks just before and after it.")
    passages: list[ChunkResult] | None = Field(default=None, description=(
        "With query: the document's passages that answer it best, best first, each with its clause and page "
        "(every chunk of the document ranked); empty when nothing in it matches."))
    cites: list[Edition] | None = Field(default=None, description=(
        "The designations the document cites, as cited («СП 63.13330» without an edition means the current one), "
        "each with the id of the archive's document it resolves to among those you may read (without an edition: "
        "the newest you may read); at most 200."))
    cited_by: list[CitingDocument] | None = Field(default=None, description=(
        "Documents of the archive citing this edition (and, for the current edition, its designation without an "
        "edition); at most 100."))
    replaces: list[str] | None = Field(default=None, description="The editions it says it replaces («Взамен …», "
                                       "«Актуализированная редакция СНиП …»).")
    editions: list[Edition] | None = Field(default=None, description=(
        "Opened by designation: the other editions of it the archive holds (and a document replacing it)."))
    comparison: list[ClauseEdition] | None = Field(default=None, description=(
        "With compare: the clause in each edition held, oldest first, each with its word-level difference "
        "from the one before."))


class SourcesResponse(BaseModel):
    status: Literal["ok"] = "ok"
    total_documents: int
    total_chunks: int
    document_types: dict[str, int]
    folders: dict[str, int]
    earliest: str | None = Field(default=None, description="The oldest document's modification date; absent "
                                 "when no visible document has one (an empty index).")
    latest: str | None = Field(default=None, description="The newest document's modification date; absent when "
                               "no visible document has one.")
    most_cited: dict[str, int] = Field(default_factory=dict, description=(
        "The designations most documents cite (documents citing each, as cited), top 20."))
    replaced: dict[str, str] | None = Field(default=None, description=(
        "The editions the archive holds a newer one of (a later edition of the family, or a document saying it "
        "replaces it), each with the designation replacing it; at most 100."))


class CitationCheck(BaseModel):
    cited: str = Field(description="The citation as the text wrote it.")
    verdict: Verdict = Field(description=(
        "found: the document (current or the edition cited) holds the clause; clause_not_found: the document is "
        "here, that clause, table or appendix is not (see nearest); superseded: the edition or document cited "
        "is replaced by one the archive holds (see replaced_by); edition_not_found: that edition is not here "
        "and nothing says it was replaced (see editions); document_not_found: no document of that designation "
        "is visible to you; ambiguous: several documents match (see candidates)."))
    designation: str = Field(description="The designation cited, normalized («СП 54.13330.2016»).")
    clause: str | None = Field(default=None, description="What the citation points at, as documents label it.")
    document: CitedDocument | None = Field(default=None, description="The document checked: the edition cited, "
                                           "or without an edition the archive's current one.")
    found: CitedClause | None = Field(default=None, description="The clause in that document.")
    value: str | None = Field(default=None, description="The value stated beside the citation.")
    value_matches: bool | None = Field(default=None, description=(
        "Whether the stated value is what the clause says: every number in it with the same bound («не менее» "
        "is not «не более»), the same modality («допускается» is not «не допускается»), a quote («…») as the "
        "clause's own words in order (without numbers: every word is in the clause)."))
    clause_words: str | None = Field(default=None, description="value_matches false: the clause's own sentence "
                                     "stating that number (or word), to quote instead.")
    replaced_by: CitedDocument | None = Field(default=None, description="superseded: the replacing document.")
    replaced_clause: CitedClause | None = Field(default=None, description="superseded: the same clause in the "
                                                "replacing document, when it has one (its text may differ).")
    editions: list[str] | None = Field(default=None, description="The editions of this designation the archive "
                                       "holds, when other than the one checked.")
    nearest: list[str] | None = Field(default=None, description="clause_not_found: the document's labels "
                                      "closest to the one cited.")
    candidates: list[CitedDocument] | None = Field(default=None, description="ambiguous: the documents matching "
                                                   "(at most 5).")
    matching: int | None = Field(default=None, description="ambiguous: how many documents match (at least; the "
                                 "first 20 a citation are read), when more than candidates lists.")
    page: int | None = Field(default=None, description="A document checked whole: the page of it the citation "
                             "stands on.")
    line: int | None = Field(default=None, description="A document checked whole: its line on that page.")


class CitationsResponse(BaseModel):
    status: Literal["ok"] = "ok"
    citations: list[CitationCheck] = Field(description="Every citation found in the text, in order (at most 50; "
                                           "a document checked whole: at most 5,000, each with its page and line, "
                                           "one repeated there checked once).")
    truncated: bool | None = Field(default=None, description="True when the text held more citations than are "
                                   "checked.")
    file: str | None = Field(default=None, description="A document checked whole: its file name.")
    pages: int | None = Field(default=None, description="A document checked whole: its pages with text.")
    summary: dict[str, int] | None = Field(default=None, description="A document checked whole: citations per "
                                           "verdict; value_mismatch: found, with a stated value not the clause's.")
    texts_cut: int | None = Field(default=None, description="How many clause texts were cut to fit the answer "
                                  "(the last citations'): get_document(chunk_id) opens one whole.")


class PageReply(BaseModel):
    """A page rendered: what the text block says of it; the PNG itself goes as MCP image content."""

    status: Literal["ok"] = "ok"
    id: str = Field(description="The document's id.")
    title: str
    page: int
    page_count: int | None = None
    width: int = Field(description="Pixels.")
    height: int = Field(description="Pixels.")
    png: bytes = Field(exclude=True, repr=False)
