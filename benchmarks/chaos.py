"""The chaos run: faults and hostile input against real processes, counted.

1. engine kills: ``kill -9`` of the node at a random moment of an ingest (the archive changes between
   rounds), restart, again; then one clean rerun, compared chunk by chunk with an uninterrupted run.
2. ingest kills: the same with ``kill -9`` of the ingest process; orphan workers are counted.
3. bad input: every hostile file kind of tests/support/hostile.py in one CLI run.
4. an access-control fuzz and 5. an injection corpus through the MCP HTTP transport with tokens.
6. engine outage: time to INDEX_UNAVAILABLE per tool, and to the first answer after the node is back.
7. big ingests: the normative documents as TXT files, default settings, several fresh runs in a row.
8. long-lived faults: disk-full rounds (flood stage forced through the node's cluster settings
   mid-archive: the ingest must end with DISK_FULL, the rerun after the engine lifts its block completes;
   compared chunk by chunk), searches while the normative documents are ingested, two ingests of one
   index at once, and ``index migrate`` under a search load.
9. the create-index block: with the flood stage forced the engine refuses to create indexes; two
   ingests into a new alias wait it out once the watermarks are back, one writes, nothing is doubled.
10. the request space under load: every mode × operator × page × limit × max_chunks and each kind of filter
   (tests/support/sweep.py) by 20 concurrent clients, with the engine's cardinality pruning on, each call
   bounded at 10 s; afterwards no search task may be left running in the engine.

    .venv/bin/python -m benchmarks.chaos                       # the full run (about an hour)
    .venv/bin/python -m benchmarks.chaos --quick               # a few of each (minutes)
    .venv/bin/python -m benchmarks.chaos --write-docs          # also write the results into docs/reliability.md
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from evaluation.sample import DEFAULT_SHARED, write_txt_corpus
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.engine.gateway import PRUNING_SETTING
from service.engine.index_admin.maintenance import migrate
from service.engine.launcher.process import EngineProcess, running_pid
from service.search.service import SearchService
from service.settings import EmbedderSettings
from tests.support import hostile, probes
from tests.support.crash import (
    REPO,
    chunk_state,
    chunks_per_document,
    ingest_env,
    kill_hard,
    marked_processes,
    new_marker,
    no_process_marked,
    registry_chunks,
    registry_count,
    run_ingest_cli,
    start_ingest,
    wait_until,
)
from tests.support.engine import engine_client, managed_engine_settings, product_settings
from tests.support.faults import (
    blocks_lifted,
    create_blocked,
    force_flood_stage,
    release_flood_stage,
    reset_disk_faults,
    search_load,
    write_blocked,
)
from tests.support.net import free_port
from tests.support.servers import http_server, server_env
from tests.support.sweep import (
    QUERIES,
    filters_of_each_kind,
    ingest_every_kind,
    run_sweep,
    running_searches,
    sweep_arguments,
)

NO_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


ANYONE = Principal.of("chaos", [])


def mutate(root: Path, rng: random.Random, share: float, round_: int) -> None:
    """An archive that changes: some files get a new paragraph."""
    files = sorted(root.glob("*.txt"))
    for path in rng.sample(files, max(1, int(len(files) * share))):
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\nИзменение № {round_}: уточнены требования к приемке работ.\n")


def compare(client: OpenSearch, alias: str, url: str, root: Path) -> dict[str, int]:
    """The index after the faults vs a fresh uninterrupted run over the same files."""
    reference_alias = f"chaos-ref-{uuid.uuid4().hex[:6]}"
    done = run_ingest_cli(root, ingest_env(url, reference_alias))
    assert done.returncode == 0, done.stderr[-1000:]
    got, want = chunk_state(client, alias), chunk_state(client, reference_alias)
    pending = registry_count(client, alias, done_only=False) - registry_count(client, alias)
    return {"chunks": len(want), "lost": len(want.keys() - got.keys()) + sum(got.get(k, v) != v for k,
                                                                             v in want.items()),
            "duplicate_or_stale": len(got.keys() - want.keys()), "pending_registry": pending}


def engine_kills(engine: EngineProcess, root: Path, kills: int, rng: random.Random) -> dict[str, Any]:
    url, alias = engine.url, f"chaos-ek-{uuid.uuid4().hex[:6]}"
    client = engine_client(url, 120)
    hung = nonzero = 0
    for round_ in range(kills):
        mutate(root, rng, 0.15, round_)
        running = start_ingest(root, ingest_env(url, alias))
        time.sleep(rng.uniform(1.0, 8.0))
        pid = running_pid(engine.paths)
        assert pid is not None, "the engine stopped before it was killed"
        os.kill(pid, signal.SIGKILL)
        try:
            running.communicate(timeout=900)
            nonzero += running.returncode != 0
        except subprocess.TimeoutExpired:
            hung += 1
            kill_hard(running)
        engine.up()
    final = run_ingest_cli(root, ingest_env(url, alias))
    return {"kills": kills, "hung": hung, "interrupted_runs_nonzero": nonzero, "final_rerun_exit": final.returncode,
            **compare(client, alias, url, root)}


def ingest_kills(url: str, root: Path, kills: int, rng: random.Random) -> dict[str, Any]:
    alias = f"chaos-ik-{uuid.uuid4().hex[:6]}"
    client = engine_client(url, 120)
    orphans = 0
    for round_ in range(kills):
        mutate(root, rng, 0.15, round_)
        marker = new_marker()
        running = start_ingest(root, ingest_env(url, alias, marker))
        time.sleep(rng.uniform(1.0, 8.0))
        kill_hard(running)
        orphans += 0 if wait_until(functools.partial(no_process_marked, marker),
                                   timeout=10) else len(marked_processes(marker))
    final = run_ingest_cli(root, ingest_env(url, alias))
    return {"kills": kills, "orphan_processes": orphans, "final_rerun_exit": final.returncode,
            **compare(client, alias, url, root)}


def bad_inputs(url: str, work: Path) -> dict[str, Any]:
    from tests.support.hostile import meets, outcome_name

    root = work / "hostile"
    expected = hostile.build(root, work / "outside", big_mb=50)
    env = {**ingest_env(url, f"chaos-bad-{uuid.uuid4().hex[:6]}"), "STROIDOK_INGEST_BATCH_SIZE": "500"}
    began = time.perf_counter()
    try:
        done = subprocess.run([*NO_DAC, sys.executable, "-m", "service.cli", "ingest", str(root), "--json"], cwd=REPO,
                              capture_output=True, text=True, env=env, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"kinds": len(expected), "hung": 1}
    finally:
        hostile.unlock(root)
    outcomes = {outcome_name(f["path"]): f for f in json.loads(done.stdout)["files"]}
    wrong = sorted(n for n, want in expected.items() if n not in outcomes or not meets(outcomes[n], want))
    return {"kinds": len(expected), "handled_as_expected": len(expected) - len(wrong), "wrong": wrong,
            "batch_finished": done.returncode in (0, 1), "traceback": "Traceback" in done.stderr,
            "seconds": round(time.perf_counter() - began, 1),
            "one_line_50mb_s": outcomes.get("one-line.txt", {}).get("status")}


def acl_corpus(root: Path) -> Path:
    rng = random.Random(3)
    for folder in probes.FOLDERS:
        for i in range(15):
            words = " ".join(rng.choice(probes.WORDS) for _ in range(60))
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / f"{folder}-{i:02d}.txt").write_text(f"Документ {folder} {i}. {words}.", encoding="utf-8")
    rules = root.parent / "acl-rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": f"{f}/*", "groups": g} for f, g in probes.FOLDERS.items()]}),
                     encoding="utf-8")
    return rules


def acl_and_injections(url: str, work: Path, requests: int) -> dict[str, Any]:
    root = work / "acl"
    rules = acl_corpus(root)
    alias = f"chaos-acl-{uuid.uuid4().hex[:6]}"
    done = run_ingest_cli(root, {**ingest_env(url, alias), "STROIDOK_INGEST_ACCESS_RULES": str(rules)})
    assert done.returncode == 0, done.stderr[-1000:]
    client = engine_client(url, 60)
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 5000, "_source": ["doc_id", "access_groups"]})["hits"]["hits"]
    doc_groups = {h["_source"]["doc_id"]: h["_source"]["access_groups"] for h in hits}
    chunk_ids = [h["_id"] for h in hits]
    tokens = json.dumps({t: g for t, g in probes.TOKENS.items()})
    env = server_env(alias, url,
                     STROIDOK_SERVER_TOKENS=tokens, STROIDOK_SEARCH_RATE_LIMIT="1000000/minute")
    with http_server(env, free_port()) as (mcp_url, _):
        fuzz = probes.acl_fuzz(mcp_url, doc_groups, chunk_ids, requests)
        injections = probes.run_injections(mcp_url, doc_groups)
    return {"acl": {"requests": fuzz.tried, "leaks": fuzz.leaks, "other_errors": fuzz.errors,
                    "examples": fuzz.examples},
            "injections": {"payloads": injections.tried, "successes": injections.leaks,
                           "examples": injections.examples}}


def outage(engine: EngineProcess, work: Path) -> dict[str, Any]:
    alias = f"chaos-out-{uuid.uuid4().hex[:6]}"
    root = work / "outage"
    root.mkdir()
    (root / "акт.txt").write_text("Акт приемки бетонных работ по устройству ростверка.", encoding="utf-8")
    assert run_ingest_cli(root, ingest_env(engine.url, alias)).returncode == 0
    env = server_env(alias, engine.url)
    calls = [("search_documents", {"query": "ростверк"}), ("get_document", {"id": "0" * 20}), ("list_sources", {})]
    with http_server(env, free_port()) as (url, _):
        engine.down()
        down = {}
        for name, arguments in calls:
            began = time.perf_counter()
            answer = probes.rpc(url, "none", name, arguments)
            down[name] = (answer.get("code"), round(time.perf_counter() - began, 3))
        engine.up()
        began = time.perf_counter()
        while "ok" not in probes.rpc(url, "none", *calls[0]) and time.perf_counter() - began < 60:
            time.sleep(0.1)
        recovered = round(time.perf_counter() - began, 2)
    return {"down": down, "recovered_after_green_s": recovered}


def big_runs(engine: EngineProcess, work: Path, runs: int, documents: int | None) -> dict[str, Any]:
    root = work / "normative"
    write_txt_corpus(DEFAULT_SHARED, root, documents)
    client = engine_client(engine.url, 120)
    rows = []
    for _ in range(runs):
        alias = f"chaos-big-{uuid.uuid4().hex[:6]}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STROIDOK_", "OPENBLAS_NUM", "OMP_NUM"))}
        env.update({"OPENSEARCH_URL": engine.url, "STROIDOK_INDEX_ALIAS": alias})
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "service.cli", "ingest", str(root)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=7200)
        client.indices.refresh(index=alias)
        rows.append({"exit": done.returncode, "chunks": client.count(index=alias)["count"],
                     "seconds": round(time.perf_counter() - began, 1)})
        client.indices.delete(index=f"{alias}-*")
    return {"documents": len(list(root.glob("*.txt"))), "runs": rows}


def disk_full_rounds(url: str, root: Path, rounds: int, rng: random.Random) -> dict[str, Any]:
    """Each round: the archive changes, the flood stage is forced, an ingest must stop with DISK_FULL and
    record nothing refused; the node's watermarks come back, and once the engine lifts its blocks the rerun
    completes. Then the index is compared chunk by chunk with an uninterrupted run."""
    alias = f"chaos-df-{uuid.uuid4().hex[:6]}"
    client = engine_client(url, 120)
    assert run_ingest_cli(root, ingest_env(url, alias)).returncode == 0
    index = sorted(client.indices.get_alias(name=alias))[-1]
    refused_with_code = reruns_ok = registered_while_blocked = 0
    try:
        for round_ in range(rounds):
            mutate(root, rng, 0.3, round_)
            registered = registry_chunks(client, f"{alias}-files")
            force_flood_stage(client)
            assert wait_until(lambda: write_blocked(client, index), timeout=90, step=1), "no block"
            blocked = run_ingest_cli(root, ingest_env(url, alias), timeout=600)
            refused_with_code += blocked.returncode == 2 and "DISK_FULL" in blocked.stderr
            registered_while_blocked += registry_chunks(client, f"{alias}-files") != registered
            release_flood_stage(client)
            assert blocks_lifted(client, index), "the engine kept its blocks"
            reruns_ok += run_ingest_cli(root, ingest_env(url, alias), timeout=900).returncode == 0
    finally:
        reset_disk_faults(client)
    return {"rounds": rounds, "refused_with_DISK_FULL": refused_with_code, "reruns_completed": reruns_ok,
            "registry_changed_while_blocked": registered_while_blocked, **compare(client, alias, url, root)}


def create_block_rounds(url: str, root: Path, rounds: int) -> dict[str, Any]:
    """Each round: the flood stage is forced until the engine blocks creating indexes, two ingests start into
    a new alias, the node's watermarks come back; both must wait out the block, then one writes and the
    other is refused (INGEST_RUNNING) or, if it came after, finds everything done. Nothing doubled."""
    client = engine_client(url, 120)
    waited = one_writer = doubled = 0
    try:
        for _ in range(rounds):
            alias = f"chaos-cb-{uuid.uuid4().hex[:6]}"
            force_flood_stage(client)
            assert wait_until(lambda: create_blocked(client), timeout=90, step=1), "no create-index block"
            runs = [start_ingest(root, ingest_env(url, alias)) for _ in range(2)]
            time.sleep(5)
            still = all(run.poll() is None for run in runs)
            release_flood_stage(client)
            outcomes = sorted((run.wait(900), run.stderr.read() if run.stderr else "") for run in runs)
            waited += still and outcomes[0][0] == 0
            one_writer += outcomes[1][0] == 0 or (outcomes[1][0] == 2 and "INGEST_RUNNING" in outcomes[1][1])
            registered = registry_chunks(client, f"{alias}-files")
            doubled += chunks_per_document(client, alias) != registered
    finally:
        reset_disk_faults(client)
    return {"rounds": rounds, "waited_out_the_block": waited, "one_writer_kept": one_writer,
            "rounds_with_chunks_doubled_or_lost": doubled}


def beside_searches(url: str, work: Path, documents: int | None, navec: NavecEmbedder) -> dict[str, Any]:
    """Searches without pause (two threads, no cache) while the CLI ingests the normative documents, then
    two ingests of one index at once, then ``index migrate`` under the same load."""
    alias = f"chaos-ls-{uuid.uuid4().hex[:6]}"
    root = write_txt_corpus(DEFAULT_SHARED, work / "ls", documents)[0].parent
    client = engine_client(url, 120)
    settings = product_settings(url, alias)
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "100000000/minute"
    seed = work / "ls-seed"
    seed.mkdir()
    (seed / "seed.txt").write_text("Ширина эвакуационного выхода из помещения не менее 1,2 м.", encoding="utf-8")
    assert run_ingest_cli(seed, ingest_env(url, alias)).returncode == 0  # the index exists, searches answer
    service = SearchService(settings, client, navec)
    question = {"query": "минимальная ширина эвакуационного выхода"}
    with search_load(lambda: service.search(question, ANYONE)) as during:
        ingested = run_ingest_cli(root, ingest_env(url, alias), timeout=3600)
    assert ingested.returncode == 0, ingested.stderr[-1000:]
    mutate(root, random.Random(1), 1.0, 0)  # every file changed: the next run rewrites them all
    first = start_ingest(root, ingest_env(url, alias))
    time.sleep(3)
    second = run_ingest_cli(root, ingest_env(url, alias), timeout=600)
    first.communicate(timeout=3600)
    (seed / "seed.txt").unlink()
    assert run_ingest_cli(seed, ingest_env(url, alias)).returncode == 0  # the seed document is deleted
    with search_load(lambda: service.search(question, ANYONE)) as migrating:
        migrate(client, settings.index)
    return {"during_ingest": during.summary(),
            "concurrent_ingests": {"second_refused": second.returncode == 2 and "INGEST_RUNNING" in second.stderr,
                                   "first_exit": first.returncode, **compare(client, alias, url, root)},
            "migrate_under_load": migrating.summary()}


def request_space(url: str, work: Path, navec: NavecEmbedder, clients: int = 20) -> dict[str, Any]:
    """The sweep of the real-node guard by ``clients`` concurrent clients (each its own client id), with the
    cardinality pruning of an unmanaged cluster on; the engine's search tasks read afterwards."""
    client = engine_client(url, 120)
    settings = product_settings(url, f"chaos-rs-{uuid.uuid4().hex[:6]}")
    settings.search.cache_ttl_s, settings.search.rate_limit, settings.search.log_queries = 0, "100000000/minute", False
    root = work / "request-space"
    ingest_every_kind(root, settings, client, navec)
    service = SearchService(settings, client, navec)
    arguments = list(sweep_arguments(QUERIES, filters_of_each_kind(root)))
    client.cluster.put_settings(body={"transient": {PRUNING_SETTING: 100}})
    began = time.perf_counter()
    try:
        report = run_sweep(lambda given: service.search(given, ANYONE, f"client-{threading.get_ident() % clients}"),
                           arguments, workers=clients)
        time.sleep(1)
        left = running_searches(client)
    finally:
        client.cluster.put_settings(body={"transient": {PRUNING_SETTING: None}})
    return {"clients": clients, "calls": report.calls, "of": len(arguments), "hung": len(report.hung),
            "failed": [code for _, code in report.failed], "unstable_totals": len(report.unstable_totals),
            "searches_left_running": len(left), "calls_per_s": round(report.calls / (time.perf_counter() - began), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--engine-kills", type=int, default=20)
    parser.add_argument("--ingest-kills", type=int, default=10)
    parser.add_argument("--acl-requests", type=int, default=2000)
    parser.add_argument("--big-runs", type=int, default=5)
    parser.add_argument("--big-documents", type=int, default=None, help="Normative documents per big run (all).")
    parser.add_argument("--kill-documents", type=int, default=30, help="Normative documents in the kill rounds.")
    parser.add_argument("--disk-rounds", type=int, default=3)
    parser.add_argument("--long-documents", type=int, default=None, help="Normative documents for the searches "
                        "beside an ingest (all).")
    parser.add_argument("--only", nargs="*", default=None, help="engine ingest bad acl outage big disk create beside "
                        "sweep")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    if args.quick:
        args.engine_kills, args.ingest_kills, args.acl_requests, args.big_runs, args.disk_rounds = 2, 2, 200, 1, 1
        args.big_documents = args.big_documents or 10
        args.long_documents = args.long_documents or 20
    only = set(args.only or ["engine", "ingest", "bad", "acl", "outage", "big", "disk", "create", "beside", "sweep"])
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="stroidok-chaos-"))
    engine = EngineProcess(managed_engine_settings(heap="2g"))
    engine.up()
    results: dict[str, Any] = {"command": " ".join(["python -m benchmarks.chaos", *sys.argv[1:]])}
    try:
        steps: list[tuple[str, Callable[[], dict[str, Any]]]] = [
                 ("bad", lambda: bad_inputs(engine.url, work)),
                 ("acl", lambda: acl_and_injections(engine.url, work, args.acl_requests)),
                 ("ingest", lambda: ingest_kills(engine.url, write_txt_corpus(DEFAULT_SHARED, work / "ik",
                                                                              args.kill_documents)[0].parent,
                                                 args.ingest_kills, rng)),
                 ("engine", lambda: engine_kills(engine, write_txt_corpus(DEFAULT_SHARED, work / "ek",
                                                                          args.kill_documents)[0].parent,
                                                 args.engine_kills, rng)),
                 ("outage", lambda: outage(engine, work)),
                 ("big", lambda: big_runs(engine, work, args.big_runs, args.big_documents)),
                 ("disk", lambda: disk_full_rounds(engine.url, write_txt_corpus(DEFAULT_SHARED, work / "df",
                                                                                args.kill_documents)[0].parent,
                                                   args.disk_rounds, rng)),
                 ("create", lambda: create_block_rounds(engine.url, write_txt_corpus(
                     DEFAULT_SHARED, work / "cb", args.kill_documents)[0].parent, args.disk_rounds)),
                 ("beside", lambda: beside_searches(engine.url, work, args.long_documents,
                                                    NavecEmbedder(EmbedderSettings()))),
                 ("sweep", lambda: request_space(engine.url, work, NavecEmbedder(EmbedderSettings())))]
        for name, step in steps:
            if name in only:
                began = time.perf_counter()
                results[name] = step()
                results[name]["step_s"] = round(time.perf_counter() - began, 1)
                print(json.dumps({name: results[name]}, ensure_ascii=False), flush=True)
    finally:
        engine.down()
        shutil.rmtree(engine.paths.root, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, ensure_ascii=False, indent=1))
    if args.write_docs:
        out = REPO / "docs" / "reliability-results.json"
        out.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
