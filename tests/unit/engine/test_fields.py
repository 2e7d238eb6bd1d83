"""The field names the product reads exist in the chunk index's template, so a renamed or dropped field fails
here rather than as an empty result on a real index."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from service.engine import fields
from service.engine.index_admin.templates import TEMPLATES_DIR


def mapped(properties: dict[str, Any], prefix: str = "") -> Iterator[str]:
    """Every field path of a mapping, sub-fields (``text.codes``) and nested properties included."""
    for name, field in properties.items():
        path = prefix + name
        yield path
        yield from (f"{path}.{sub}" for sub in field.get("fields", {}))
        yield from mapped(field.get("properties", {}), path + ".")


def queried(query: Any) -> Iterator[str]:
    """The field names a standard query names (``term``'s key, ``exists``' field)."""
    for kind, clause in query.items():
        yield from ([clause["field"]] if kind == "exists" else clause)


def test_every_field_the_product_reads_is_in_the_chunk_template() -> None:
    template = json.loads((TEMPLATES_DIR / "chunks.json").read_text(encoding="utf-8"))
    known = set(mapped(template["template"]["mappings"]["properties"]))
    named = {fields.VECTOR_FIELD, fields.UNITS_FIELD, *fields.DOCUMENT_FIELDS, *fields.CHUNK_FIELDS,
             *fields.PHRASE_FIELDS}
    named |= {name for query in (fields.FIRST_CHUNK, fields.PENDING, fields.REPLACED) for name in queried(query)}
    assert named - known == set()
    assert "text.codes" in known and "units" in known  # the walk reads sub-fields and nested fields
