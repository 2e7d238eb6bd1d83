"""docker/dashboards.ndjson names only fields the query log's template maps (a renamed field breaks a
visualisation silently otherwise)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
#: a field a KQL query names: ``field:value`` or ``field:*``
KQL_FIELD = re.compile(r"([A-Za-z_][\w.]*)\s*:")


def objects() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (REPO / "docker" / "dashboards.ndjson").read_text().splitlines() if line]


def mapped_fields() -> set[str]:
    mappings = json.loads((REPO / "index_templates" / "queries.json").read_text())["mappings"]["properties"]
    return set(mappings) | {f"{name}.{sub}" for name, spec in mappings.items() for sub in spec.get("fields", {})}


def named_fields(obj: dict[str, Any]) -> set[str]:
    attributes = obj["attributes"]
    names = {agg["params"]["field"] for agg in json.loads(attributes.get("visState", "{}")).get("aggs", [])
             if "field" in agg.get("params", {})}
    source = json.loads(attributes.get("kibanaSavedObjectMeta", {}).get("searchSourceJSON", "{}"))
    names |= set(KQL_FIELD.findall(source.get("query", {}).get("query", "")))
    return names | ({attributes["timeFieldName"]} if "timeFieldName" in attributes else set())


def test_every_field_a_dashboard_object_names_is_in_the_query_log_template() -> None:
    known = mapped_fields()
    named = {obj["id"]: named_fields(obj) for obj in objects()}
    assert sum(map(len, named.values())) >= 10, "the check reads the objects' fields"
    missing = {obj_id: sorted(fields - known) for obj_id, fields in named.items() if fields - known}
    assert missing == {}


def test_the_dashboard_shows_every_visualisation() -> None:
    visualisations = {obj["id"] for obj in objects() if obj["type"] == "visualization"}
    dashboard = next(obj for obj in objects() if obj["type"] == "dashboard")
    assert {ref["id"] for ref in dashboard["references"]} == visualisations
