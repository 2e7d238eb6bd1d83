"""Current editions over replaced ones, through the default call: for each question of
``evaluation/sets/editions/questions.jsonl`` (two editions of one document in the archive), the ranks of both in
the first 10 results of ``search_documents`` with its defaults on an index built by ``stroidok ingest``.

    STROIDOK_INDEX_ALIAS=r32 python -m benchmarks.editions
"""

from __future__ import annotations

import json
from pathlib import Path

from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search.service import SearchService
from service.settings import Settings

QUESTIONS = Path(__file__).resolve().parents[1] / "eval" / "editions" / "questions.jsonl"


def rank_of(designations: list[str | None], wanted: str) -> int | None:
    return designations.index(wanted) + 1 if wanted in designations else None


def main() -> None:
    settings = Settings()
    settings.search.cache_ttl_s = 0
    service = SearchService(settings, build_client(settings), build_embedder(settings.embedder))
    first = 0
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        results = service.search({"query": row["text"]}, Principal.of("bench", [])).results
        ranked = [r.designation for r in results]
        current, replaced = rank_of(ranked, row["current"]), rank_of(ranked, row["replaced"])
        ok = current is not None and (replaced is None or current < replaced)
        first += ok
        print(f"{row['_id']} {'ok ' if ok else 'BAD'} current {row['current']} at {current}, replaced "
              f"{row['replaced']} at {replaced}: {row['text']}")
    print(f"current edition above the replaced one: {first} of {len(rows)}")


if __name__ == "__main__":
    main()
