"""The chunk index's field names as the product reads them, and the standard queries on them. The mapping
itself is data (``index_templates/chunks.json``); a unit test checks every name here against it."""

from __future__ import annotations

from typing import Any

VECTOR_FIELD = "embedding"
#: the nested passage-unit vectors of a static embedder (``units.vector``)
UNITS_FIELD = "units"
# What a search result shows: the document's fields on its hit, the chunk's on each chunk fetched (the rest —
# whole text of the top chunk, hashes, clause lists, groups — would triple the response). A chunk's text comes
# through the engine's highlighter, whole, with the query's terms marked.
DOCUMENT_FIELDS = ["doc_id", "title", "file_name", "designation", "file_path", "file_type", "superseded_by",
                   "superseded_by_designation", "introduced", "amendments", "withdrawn"]
CHUNK_FIELDS = ["chunk_id", "chunk_index", "page_number", "page_label", "page_end", "clause", "spans",
                "section_title", "section_kind"]
#: the fields a phrase binds in (a heading or the document's title may hold it)
PHRASE_FIELDS = ("text", "title", "section_title", "text.codes")

#: one chunk per document: a lookup or count of documents reads their first chunks (document fields are on each)
FIRST_CHUNK: dict[str, Any] = {"term": {"chunk_index": 0}}
#: chunks indexed text first whose vectors ``stroidok embed`` has still to fill in
PENDING: dict[str, Any] = {"term": {"vector_pending": True}}
#: a chunk of an edition the archive holds a newer one of (set by the ingest, ingest/links.py)
REPLACED: dict[str, Any] = {"exists": {"field": "superseded_by"}}
