"""The operator's view of the query log (``<alias>-queries``), computed by the engine's aggregations: calls per tool
and day, time per call, errors by code, frequent and empty queries, filter and mode use, clients, and what agents
opened after a search (``service.usage.feedback``). ``stroidok stats`` prints it; ``--json`` for machines.

Only entries of callers who could read no more than the reader are counted (an entry records its caller's access
groups; every one of them must be the reader's): a reader never sees the queries of people who read documents the
reader may not. Entries expire after
``STROIDOK_SEARCH_LOG_RETENTION_DAYS`` (``prune_log``, run by the log's writer once a day and by ``stats --prune``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from opensearchpy import OpenSearch

from service.errors import ConfigError

SEARCH = "search_documents"
OPEN = "get_document"
#: ``--since``: a number of days, hours or minutes
SINCE_RE = re.compile(r"^\d{1,5}[dhm]$")


def since_filter(since: str) -> dict[str, Any]:
    if not SINCE_RE.match(since):
        raise ConfigError(f"--since must be a number of days, hours or minutes (7d, 24h, 30m), not {since!r}")
    return {"range": {"timestamp": {"gte": f"now-{since}"}}}


def terms(name: str, size: int = 20, **extra: Any) -> dict[str, Any]:
    return {"terms": {"field": name, "size": size, **extra}}


def readable_by(groups: list[str]) -> dict[str, Any]:
    """Entries of callers who could read no more than the reader: every group of the caller is one of the
    reader's (entries from before callers' groups were logged are left out)."""
    return {"bool": {"filter": [{"exists": {"field": "groups"}}, {"terms_set": {"groups": {
        "terms": sorted(set(groups)), "minimum_should_match_script": {"source": "doc['groups'].size()"}}}}]}}


def build_stats_body(since: str, groups: list[str], top: int = 10) -> dict[str, Any]:
    """One request: every figure of ``stats`` over the entries since ``since`` the reader may see."""
    timing = {"time": {"percentiles": {"field": "total_ms", "percents": [50, 95]}},
              "max_time": {"max": {"field": "total_ms"}},
              # the engine's share, over the calls that made an engine request (searches that ran)
              "engine": {"filter": {"exists": {"field": "search_ms"}}, "aggs": {
                  "mean_time": {"avg": {"field": "total_ms"}}, "mean_engine": {"avg": {"field": "search_ms"}}}}}
    searches = {"bool": {"filter": [{"term": {"tool": SEARCH}}, {"term": {"status": "ok"}}]}}
    return {
        "size": 0, "track_total_hits": True,
        "query": {"bool": {"filter": [since_filter(since), readable_by(groups)]}},
        "aggs": {
            "tools": {**terms("tool", 10), "aggs": timing},
            "days": {"date_histogram": {"field": "timestamp", "calendar_interval": "day", "format": "yyyy-MM-dd",
                                        "min_doc_count": 1}, "aggs": {"tools": terms("tool", 10)}},
            "errors": terms("error_code", 50),
            "clients": terms("client", 20, missing="(none)"),
            "searches": {"filter": searches, "aggs": {
                "queries": terms("query", top), "modes": terms("search_mode", 5), "operators": terms("operator", 5),
                "filters": terms("filters", 20), "routes": terms("route_used", 5),
                "empty": {"filter": {"term": {"total_results": 0}}, "aggs": {"queries": terms("query", top)}},
            }},
            "openings": {"filter": {"exists": {"field": "opened_rank"}}, "aggs": {
                "ranks": terms("opened_rank", 50, order={"_key": "asc"}),
                "searches": {"cardinality": {"field": "follows", "precision_threshold": 40000}},
            }},
        },
    }


@dataclass
class ToolStats:
    calls: int
    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None
    #: the engine request's share of a call's time (searches: planning and the engine request over the whole)
    engine_share: float | None = None


@dataclass
class Stats:
    since: str
    calls: int
    tools: dict[str, ToolStats] = field(default_factory=dict)
    days: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    clients: dict[str, int] = field(default_factory=dict)
    searches: int = 0
    top_queries: dict[str, int] = field(default_factory=dict)
    empty_queries: dict[str, int] = field(default_factory=dict)
    empty_searches: int = 0
    modes: dict[str, int] = field(default_factory=dict)
    operators: dict[str, int] = field(default_factory=dict)
    filters: dict[str, int] = field(default_factory=dict)
    routes: dict[str, int] = field(default_factory=dict)
    #: searches followed by a get_document of one of their results, and the ranks opened (rank → openings)
    followed_searches: int = 0
    opened_ranks: dict[int, int] = field(default_factory=dict)

    @property
    def followed_share(self) -> float | None:
        return self.followed_searches / self.searches if self.searches else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "followed_share": self.followed_share}


def counts(agg: dict[str, Any]) -> dict[str, int]:
    return {str(b.get("key_as_string", b["key"])): int(b["doc_count"]) for b in agg.get("buckets", [])}


def _tool(bucket: dict[str, Any]) -> ToolStats:
    values = bucket["time"]["values"]
    mean, engine = bucket["engine"]["mean_time"]["value"], bucket["engine"]["mean_engine"]["value"]
    return ToolStats(int(bucket["doc_count"]), values.get("50.0"), values.get("95.0"), bucket["max_time"]["value"],
                     round(engine / mean, 3) if engine is not None and mean else None)


def map_stats(since: str, raw: dict[str, Any]) -> Stats:
    """The engine's answer to ``build_stats_body`` as ``Stats``."""
    aggs = raw["aggregations"]
    searches, openings = aggs["searches"], aggs["openings"]
    return Stats(
        since=since, calls=int(raw["hits"]["total"]["value"]),
        tools={str(b["key"]): _tool(b) for b in aggs["tools"]["buckets"]},
        days={b["key_as_string"]: counts(b["tools"]) for b in aggs["days"]["buckets"]},
        errors=counts(aggs["errors"]), clients=counts(aggs["clients"]),
        searches=int(searches["doc_count"]), top_queries=counts(searches["queries"]),
        empty_queries=counts(searches["empty"]["queries"]), empty_searches=int(searches["empty"]["doc_count"]),
        modes=counts(searches["modes"]), operators=counts(searches["operators"]),
        filters=counts(searches["filters"]), routes=counts(searches["routes"]),
        followed_searches=int(openings["searches"]["value"]),
        opened_ranks={int(b["key"]): int(b["doc_count"]) for b in openings["ranks"]["buckets"]},
    )


def read_stats(client: OpenSearch, queries_index: str, since: str, groups: list[str], top: int = 10) -> Stats:
    raw = client.search(index=queries_index, body=build_stats_body(since, groups, top))
    return map_stats(since, raw)


def prune_log(client: OpenSearch, queries_index: str, retention_days: int) -> int:
    """Delete the entries older than ``retention_days``; returns how many went."""
    body = {"query": {"range": {"timestamp": {"lt": f"now-{retention_days}d"}}}}
    result = client.delete_by_query(index=queries_index, body=body, conflicts="proceed", refresh=True)
    return int(result.get("deleted", 0))


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def _pairs(values: dict[Any, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in values.items()) or "–"


def format_stats(stats: Stats) -> str:
    """``stats`` for a terminal."""
    lines = [f"query log, last {stats.since}: {stats.calls} calls"]
    for name, tool in stats.tools.items():
        share = f", engine {tool.engine_share:.0%}" if tool.engine_share is not None else ""
        lines.append(f"  {name}: {tool.calls} calls, ms p50 {_ms(tool.p50_ms)} / p95 {_ms(tool.p95_ms)} / max "
                     f"{_ms(tool.max_ms)}{share}")
    lines.append("per day: " + ("; ".join(f"{day} {_pairs(tools)}" for day, tools in stats.days.items()) or "–"))
    lines.append(f"errors by code: {_pairs(stats.errors)}")
    lines.append(f"clients: {_pairs(stats.clients)}")
    lines.append(f"searches: {stats.searches}; modes {_pairs(stats.modes)}; operators {_pairs(stats.operators)}; "
                 f"routes {_pairs(stats.routes)}")
    lines.append(f"filters used: {_pairs(stats.filters)}")
    lines.append(f"frequent queries: {_pairs(stats.top_queries)}")
    lines.append(f"searches with no results: {stats.empty_searches}; {_pairs(stats.empty_queries)}")
    share = f" ({stats.followed_share:.0%})" if stats.followed_share is not None else ""
    lines.append(f"followed by an opening: {stats.followed_searches} of {stats.searches} searches{share}; "
                 f"ranks opened: {_pairs(stats.opened_ranks)}")
    return "\n".join(lines)
