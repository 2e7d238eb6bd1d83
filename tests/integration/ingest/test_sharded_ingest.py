"""``stroidok ingest --shard K/N``: N processes fill one index at once, each file once, deletions right."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from ingest.discover import Shard, document_id
from tests.support.crash import REPO, ingest_env
from tests.support.engine import drop_index_resources, new_alias, product_settings

pytestmark = pytest.mark.integration

TEXT = "Пункт {n}. Требования к монолитным бетонным конструкциям и контролю прочности бетона, файл {i}.\n\n"


def start(root: Path, shard: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "service.cli", "ingest", str(root), "--shard", shard, "--json"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_shards(root: Path, env: dict[str, str], count: int) -> list[dict[str, Any]]:
    """All N shard processes started together, their JSON reports once all have finished."""
    procs = [start(root, f"{k}/{count}", env) for k in range(1, count + 1)]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
        reports.append(json.loads(out))
    return reports


def outcomes(report: dict[str, Any], status: str) -> set[str]:
    return {f["path"] for f in report["files"] if f["status"] == status}


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    root = tmp_path / "archive"
    root.mkdir()
    for i in range(24):
        (root / f"doc{i:02d}.txt").write_text("".join(TEXT.format(n=n, i=i) for n in range(30)), encoding="utf-8")
    return root


def test_three_shards_at_once_index_every_file_once_and_delete_once(archive: Path, opensearch_url: str,
                                                                    client: OpenSearch) -> None:
    alias = new_alias()
    env = ingest_env(opensearch_url, alias)
    try:
        reports = run_shards(archive, env, 3)
        indexed = [outcomes(r, "indexed") for r in reports]
        assert all(indexed), "every shard got some files"
        assert sum(len(s) for s in indexed) == 24 and len(set().union(*indexed)) == 24  # each file by one shard
        for k, files in enumerate(indexed, 1):
            assert all(Shard(k, 3).holds(document_id(Path(p))) for p in files)
        client.indices.refresh(index=alias)
        per_file = client.search(index=alias, body={"size": 0, "aggs": {"f": {"terms": {"field": "doc_id",
                                                                                        "size": 100}}}})
        single = {b["key"]: b["doc_count"] for b in per_file["aggregations"]["f"]["buckets"]}
        assert len(single) == 24
        # one set of embedder statistics for the whole index, whoever fitted first
        assert client.count(index=f"{alias}-meta", body={"query": {"term": {"kind": "embedder"}}})["count"] == 1

        gone = sorted(archive.glob("*.txt"))[:5]
        for path in gone:
            path.unlink()
        again = run_shards(archive, env, 3)
        deleted = [outcomes(r, "deleted") for r in again]
        assert sum(len(s) for s in deleted) == 5 and set().union(*deleted) == {str(p) for p in gone}
        assert sum(len(outcomes(r, "skipped")) for r in again) == 19
        client.indices.refresh(index=alias)
        assert client.count(index=alias)["count"] == sum(n for d, n in single.items()
                                                         if d not in {document_id(p) for p in gone})
    finally:
        drop_index_resources(client, product_settings(opensearch_url, alias).index)
