"""The server's own work a default call, without the engine: each question's engine answers captured once, then
replayed into ``SearchService`` (the opensearch-py connection answers from the capture: the client, its JSON
decoding, the search, the passages and the tool's reply all run as in a call) and the process's CPU a call timed,
with the share of each stage of choosing the passages. A diagnostic of where the server's CPU goes (its figures
leave out the MCP layer and the socket); ``benchmarks.call_pace`` measures the server as agents pay it.

    .venv/bin/python -m benchmarks.server_work capture --alias norms --out /tmp/answers.pkl \\
        --questions ../shared/data/construction_ru/dev_clause_set/clauses.jsonl \\
        --questions evaluation/sets/construction/clauses.jsonl
    .venv/bin/python -m benchmarks.server_work replay /tmp/answers.pkl --rounds 4 [--dump replies.json]

``--dump`` writes every reply (the meta's timings fixed, so the answer budget reads the same sizes): two trees'
dumps of one capture compare their passages byte for byte.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import pickle
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loguru import logger

from benchmarks.call_pace import load_questions
from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search import service as service_module
from service.search.answer import map as map_module
from service.search.answer.models import SearchResponse, Timings
from service.search.service import SearchService
from service.server.tools import YOUNG_OBJECTS, answer
from service.settings import Settings

#: a request's own time bound, in its body and its parameters: not part of what it asks
TIMEOUT_RE = re.compile(r'"timeout":"[0-9]+ms",?')
#: the stages of choosing passages timed apart (``service.search.answer.map``)
STAGES = ("document_candidates", "term_weights", "lexical_scores", "unit_similarities", "chunk_contexts",
          "document_windows", "best_window", "best_windows")

Key = tuple[str, str, str | None]


def request_key(method: str, url: str, params: dict[str, Any] | None, body: Any) -> Key:
    text = body.decode() if isinstance(body, bytes) else body
    kept = "&".join(f"{k}={v}" for k, v in sorted((params or {}).items()) if "timeout" not in k)
    return method, f"{url}?{kept}", TIMEOUT_RE.sub("", text) if text else None


def build_service(alias: str) -> SearchService:
    os.environ.update({"STROIDOK_INDEX_ALIAS": alias, "STROIDOK_SEARCH_CACHE_TTL_S": "0",
                       "STROIDOK_SEARCH_LOG_QUERIES": "false", "STROIDOK_SEARCH_RATE_LIMIT": "100000000/minute"})
    settings = Settings()
    return SearchService(settings, build_client(settings), build_embedder(settings.embedder))


def connection_class(service: SearchService) -> Any:
    return type(service.client.transport.get_connection())


def capture(alias: str, questions: list[str], out: Path) -> None:
    """Every question once through the service, each engine answer kept by its request."""
    service = build_service(alias)
    cls = connection_class(service)
    real, store = cls.perform_request, {}

    def recording(self: Any, method: str, url: str, params: Any = None, body: Any = None, timeout: Any = None,
                  ignore: Any = (), headers: Any = None) -> Any:
        result = real(self, method, url, params, body, timeout, ignore, headers)
        store[request_key(method, url, params, body)] = result
        return result

    cls.perform_request = recording
    for question in questions:
        service.search({"query": question}, Principal.of("bench", []))
    out.write_bytes(pickle.dumps({"alias": alias, "store": store, "questions": questions}))
    print(f"{len(store)} engine answers of {len(questions)} questions → {out}")


@contextmanager
def timed_stages(spent: dict[str, float]) -> Iterator[None]:
    """Each stage's time added to ``spent`` while inside."""
    originals = {name: getattr(map_module, name) for name in STAGES}

    def timing(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - began
        return run

    for name, function in originals.items():
        setattr(map_module, name, timing(name, function))
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(map_module, name, function)


def fixed_timings(**_: float) -> Timings:
    """The meta's timings at one width: the answer budget reads the same size in every replay."""
    return Timings(embedding_ms=1.0, search_ms=1.0, total_ms=1.0)


def replay(path: Path, rounds: int, dump: Path | None) -> None:
    """The captured questions ``rounds`` times after one pass to warm up, the server's heap settled as the MCP
    server settles it: CPU a call, and the stages' share."""
    data = pickle.loads(path.read_bytes())
    service = build_service(data["alias"])
    store: dict[Key, Any] = data["store"]

    def replaying(self: Any, method: str, url: str, params: Any = None, body: Any = None, timeout: Any = None,
                  ignore: Any = (), headers: Any = None) -> Any:
        key = request_key(method, url, params, body)
        if key not in store:
            raise SystemExit(f"a request the capture does not hold ({method} {url}): capture again with this tree")
        return store[key]

    connection_class(service).perform_request = replaying
    setattr(service_module, "Timings", fixed_timings)  # noqa: B010 (a replay's answers are sized alike every time)
    principal, questions = Principal.of("bench", []), data["questions"]
    replies = [answer(service.search({"query": q}, principal), SearchResponse).structured_content for q in questions]
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
    spent: dict[str, float] = collections.defaultdict(float)
    began = time.process_time()
    with timed_stages(spent):
        for _ in range(rounds):
            for question in questions:
                answer(service.search({"query": question}, principal), SearchResponse)
    calls = rounds * len(questions)
    print(f"{data['alias']}: {len(questions)} questions × {rounds} rounds, server CPU "
          f"{(time.process_time() - began) * 1000 / calls:.2f} ms a call (engine answers replayed)")
    for name in STAGES:
        print(f"  {name:22s} {spent[name] * 1000 / calls:6.2f} ms a call")
    if dump is not None:
        dump.write_text(json.dumps(replies, ensure_ascii=False, sort_keys=True, indent=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    taking = sub.add_parser("capture")
    taking.add_argument("--alias", required=True)
    taking.add_argument("--questions", type=Path, action="append", required=True)
    taking.add_argument("--out", type=Path, required=True)
    playing = sub.add_parser("replay")
    playing.add_argument("capture", type=Path)
    playing.add_argument("--rounds", type=int, default=3)
    playing.add_argument("--dump", type=Path)
    args = parser.parse_args()
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    if args.command == "capture":
        capture(args.alias, load_questions(args.questions), args.out)
    else:
        replay(args.capture, args.rounds, args.dump)


if __name__ == "__main__":
    main()
