"""Access control that cannot leak: a rule matches a file however the path is written (Unicode normal
form, the root given to ingest, a trailing slash), a changed rule takes effect on the next ingest of
unchanged files, and a running service never serves a response cached under the old rights."""

from __future__ import annotations

import json
import unicodedata
import uuid
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from tests.support.engine import drop_index_resources, product_settings

pytestmark = pytest.mark.integration
TEXT = "Смета на гидроизоляцию фундаментной плиты битумной мастикой."
QUERY = {"query": "гидроизоляция битумной мастикой", "search_mode": "fulltext"}


def rules_file(tmp_path: Path, pattern: str) -> Path:
    path = tmp_path / f"rules-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps({"rules": [{"pattern": pattern, "groups": ["legal"]}]}), encoding="utf-8")
    return path


def groups_in_index(client: OpenSearch, alias: str) -> set[str]:
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 100})["hits"]["hits"]
    return {g for h in hits for g in h["_source"]["access_groups"]}


@pytest.mark.parametrize(("folder", "pattern", "root_is_folder"), [
    ("секретно", "секретно/*", False),
    ("секретно", "секретно/*", True),             # ingest docs/секретно instead of docs
    ("секретно", "секретно/", True),              # trailing slash: the folder and all in it
    (unicodedata.normalize("NFD", "Для служебного пользования"), "Для служебного пользования/*", False),
    ("Для служебного пользования", unicodedata.normalize("NFD", "Для служебного пользования/*"), True),
])
def test_a_rule_matches_however_the_path_is_written(tmp_path: Path, opensearch_url: str, client: OpenSearch,
                                                    navec_embedder: NavecEmbedder,
                                                    folder: Path, pattern: str, root_is_folder: bool) -> None:
    docs = tmp_path / "docs"
    (docs / folder).mkdir(parents=True)
    (docs / folder / "смета.txt").write_text(TEXT, encoding="utf-8")
    settings = product_settings(opensearch_url,
                                access_rules=rules_file(tmp_path, pattern))
    try:
        root = docs / folder if root_is_folder else docs
        report = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
        assert report.counts["indexed"] == 1
        assert groups_in_index(client, settings.index.alias) == {"legal"}
    finally:
        drop_index_resources(client, settings.index)


def test_a_changed_rule_applies_on_the_next_ingest_and_no_cache_serves_the_old_rights(
        tmp_path: Path, opensearch_url: str, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    docs = tmp_path / "docs"
    (docs / "сметы").mkdir(parents=True)
    (docs / "сметы" / "смета.txt").write_text(TEXT, encoding="utf-8")
    open_rules = rules_file(tmp_path, "нет-такой-папки/*")
    settings = product_settings(opensearch_url, access_rules=open_rules)
    public = Principal.of("someone", [])
    try:
        run_ingest(IngestOptions([docs]), settings, client, navec_embedder, quiet=True)
        service = SearchService(settings, client, navec_embedder)  # the query cache is on (default TTL)
        assert service.search(QUERY, public).meta.total_results == 1
        assert service.search(QUERY, public).meta.cached is True

        settings.ingest.access_rules = rules_file(tmp_path, "сметы/*")
        report = run_ingest(IngestOptions([docs], access_rules_changed=True), settings, client, navec_embedder,
                            quiet=True)

        assert report.counts["indexed"] == 1  # same bytes, new rights: re-indexed, not "unchanged"
        assert groups_in_index(client, settings.index.alias) == {"legal"}
        revoked = service.search(QUERY, public)
        assert revoked.meta.total_results == 0 and revoked.results == []
        assert service.search(QUERY, Principal.of("lawyer", ["legal"])).meta.total_results == 1
    finally:
        drop_index_resources(client, settings.index)
