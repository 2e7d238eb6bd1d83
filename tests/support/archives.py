"""A small archive ingested through the product's own ingest, with one folder only the «legal» group may read."""

from __future__ import annotations

import json
from pathlib import Path

from opensearchpy import OpenSearch

from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.embedders.navec import NavecEmbedder
from service.settings import Settings
from tests.support.engine import product_settings

#: files below this folder of an archive are readable by the «legal» group only
RESTRICTED = "секретно"


def ingest_archive(root: Path, opensearch_url: str, client: OpenSearch, embedder: NavecEmbedder) -> Settings:
    """``root`` ingested into a fresh index (no cache, no rate limit to speak of), ``секретно/*`` for «legal»;
    the settings its service runs with."""
    rules = root.parent / f"{root.name}-access.json"
    rules.write_text(json.dumps({"rules": [{"pattern": f"{RESTRICTED}/*", "groups": ["legal"]}]}), encoding="utf-8")
    settings = product_settings(opensearch_url, access_rules=rules)
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "10000/minute"
    assert not run_ingest(IngestOptions([root]), settings, client, embedder, quiet=True).failed
    return settings
