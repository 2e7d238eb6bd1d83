"""get_page_image: a PDF page of a document the caller may read, rendered from the file at its recorded root."""

from __future__ import annotations

from pathlib import Path

from service.caller.principal import Principal
from service.engine.gateway import bounded_search
from service.errors import NotFound, PageUnavailable
from service.pages import render_page
from service.search.answer.models import PageReply
from service.search.documents import document_id
from service.search.dsl.lookups import build_page_source, build_registry_root
from service.search.reads import EngineReads
from service.search.request.contract import PageRequest


def page_image(request: PageRequest, principal: Principal, reads: EngineReads) -> PageReply:
    """The page rendered (``service.pages``): NOT_FOUND for a document the caller may not read or a page past its
    last, PAGE_UNAVAILABLE for a document that is not a PDF or whose ingest folder is not recorded."""
    settings = reads.settings
    doc_id = document_id(request.id)
    hits = reads.send(build_page_source(doc_id, list(principal.groups)))["hits"]["hits"]
    if not hits:
        raise NotFound(f"no document or chunk with id {request.id} is visible to you", details={"id": request.id})
    source = hits[0]["_source"]
    if source.get("file_type") != "pdf":
        raise PageUnavailable(f"a page image is made of PDFs; this document is {source.get('file_type')}: read "
                              "its text with get_document", details={"file_type": str(source.get("file_type"))})
    if request.page > int(source.get("page_count") or 0):
        raise NotFound(f"the document has {source.get('page_count')} pages", details={"page": request.page})
    roots = bounded_search(reads.client, settings.index.files_index, build_registry_root(doc_id), {},
                           settings.search.timeout_s)["hits"]["hits"]
    if not roots or not roots[0]["_source"].get("root"):
        raise PageUnavailable("the file's ingest folder is not recorded: re-ingest it")
    size = source.get("file_size")
    image = render_page(Path(roots[0]["_source"]["root"]), Path(source["file_path"]),
                        str(source.get("doc_hash") or "").split("+")[0], request.page,
                        settings.server.render_memory_mb, size=int(size) if size is not None else None,
                        limit=settings.ingest.max_file_mb * 1024 * 1024,
                        hard_links=settings.ingest.hard_links == "same-groups")
    return PageReply(id=doc_id, title=source.get("title") or source.get("file_name") or "", page=request.page,
                     page_count=source.get("page_count"), width=image.width, height=image.height, png=image.png)
