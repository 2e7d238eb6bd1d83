"""list_sources: what the caller can search — documents by type and folder, the date span, the most cited
designations and the replaced editions — in one aggregation request inside the caller's access filter."""

from __future__ import annotations

from service.caller.principal import Principal
from service.search.answer.models import SourcesResponse
from service.search.dsl.aggs import build_sources_body, document_count
from service.search.reads import EngineReads


def sources(principal: Principal, folder: str | None, reads: EngineReads) -> SourcesResponse:
    """The archive the caller may read (below ``folder``, if given), counted by the engine."""
    raw = reads.send(build_sources_body(list(principal.groups), folder))
    aggs = raw["aggregations"]
    return SourcesResponse(
        total_documents=document_count(aggs, 0), total_chunks=int(raw["hits"]["total"]["value"]),
        document_types={b["key"]: b["docs"]["value"] for b in aggs["document_types"]["buckets"]},
        folders={b["key"]: b["docs"]["value"] for b in aggs["folders"]["buckets"]},
        earliest=aggs["earliest"].get("value_as_string"), latest=aggs["latest"].get("value_as_string"),
        most_cited={b["key"]: b["doc_count"] for b in aggs["cited"]["top"]["buckets"]},
        replaced={h["_source"]["designation"]: h["_source"]["superseded_by_designation"]
                  for h in aggs["replaced"]["editions"]["hits"]["hits"] if h["_source"].get("designation")} or None)
