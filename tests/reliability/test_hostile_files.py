"""Hostile and broken files (30 kinds): each is indexed correctly or reported with a reason, the batch
goes on and ends, and nothing outside the ingested folders is read. The ingest runs as the CLI a user
runs, as root without the capability to bypass file permissions (so an unreadable file is unreadable)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opensearchpy import OpenSearch, helpers

from tests.support import hostile
from tests.support.documents import requires_shared
from tests.support.hostile import meets, outcome_name

pytestmark = [pytest.mark.integration, requires_shared]
NO_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


def test_every_hostile_file_is_indexed_or_reported_and_the_batch_ends(tmp_path: Path, opensearch_url: str,
                                                                      client: OpenSearch, alias: str) -> None:
    root = tmp_path / "docs"
    expected = hostile.build(root, tmp_path / "outside")
    env = {**os.environ, "OPENSEARCH_URL": opensearch_url, "STROIDOK_INDEX_ALIAS": alias, "DO_NOT_TRACK": "1",
           "STROIDOK_INGEST_FILE_TIMEOUT_S": "300"}
    try:
        done = subprocess.run([*NO_DAC, sys.executable, "-m", "service.cli", "ingest", str(root), "--json"],
                              capture_output=True, text=True, env=env, timeout=900)
    finally:
        hostile.unlock(root)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    outcomes = {outcome_name(f["path"]): f for f in json.loads(done.stdout)["files"]}
    wrong = {name: outcomes.get(name) for name, want in expected.items()
             if name not in outcomes or not meets(outcomes[name], want)}
    assert not wrong, json.dumps(wrong, ensure_ascii=False, indent=1)
    client.indices.refresh(index=alias)
    texts = [h["_source"]["text"] for h in helpers.scan(client, index=alias, query={"query": {"match_all": {}}},
                                                         _source_includes=["text"])]
    assert not any("пароль администратора" in t or "root:x:0" in t for t in texts)
    assert not any(c in t for t in texts for c in "\x1b\x07\x00")
    assert any("КРАСНЫЙ текст про арматуру" in t for t in texts)
    assert client.count(index=alias, body={"query": {"term": {"file_name": "отчёт по бетону.txt"}}})["count"] >= 1
