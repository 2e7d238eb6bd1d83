"""What a page image costs a caller, for two trees side by side on one index: each tree's own service (its
``get_page_image`` with its defaults, in a process of its own started in that tree) renders the same pages of
the index's PDFs; the trees take turns, a block of renders each, so both see the same machine. Prints the wall
time a render (median, p95) per tree and their ratio.

    git worktree add ../prev <commit>
    STROIDOK_INDEX_ALIAS=demo python -m benchmarks.page_cost --previous ../prev [--blocks 5] [--per-block 6]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: run inside a tree (its ``service`` first on the path): renders the pages given, prints each wall time in ms
CHILD = """
import json, sys, time
from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.search.service import SearchService
from service.settings import load_settings
settings = load_settings()
service = SearchService(settings, build_client(settings), build_embedder(settings.embedder))
reader = Principal.of("bench", [])
pages = json.loads(sys.argv[1])
service.get_page_image({"id": pages[0][0], "page": pages[0][1]}, reader)  # warm
walls = []
for doc_id, page in pages:
    began = time.perf_counter()
    service.get_page_image({"id": doc_id, "page": page}, reader)
    walls.append((time.perf_counter() - began) * 1000)
print(json.dumps(walls))
"""


def pdf_pages(count: int) -> list[tuple[str, int]]:
    """``count`` (document id, page) pairs of the index's PDFs, pages 1 and 2 of each in turn."""
    from service.engine.fields import FIRST_CHUNK
    from service.engine.gateway import build_client
    from service.settings import load_settings

    settings = load_settings()
    hits = build_client(settings).search(index=settings.index.alias, body={
        "size": 50, "_source": ["doc_id", "page_count"],
        "query": {"bool": {"filter": [FIRST_CHUNK, {"term": {"file_type": "pdf"}},
                                      {"term": {"access_groups": "public"}}]}}})["hits"]["hits"]
    pairs = [(h["_source"]["doc_id"], p) for p in (1, 2) for h in hits if (h["_source"].get("page_count") or 0) >= p]
    return [pairs[i % len(pairs)] for i in range(count)]


def renders(tree: Path, pages: list[tuple[str, int]]) -> list[float]:
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(pages)], cwd=tree, capture_output=True,
                          text=True, check=True, timeout=600)
    walls: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return walls


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--previous", type=Path, required=True, help="the previous round's tree (a git worktree)")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--per-block", type=int, default=6)
    args = parser.parse_args()
    pages = pdf_pages(args.per_block)
    times: dict[str, list[float]] = {"this": [], "previous": []}
    for _ in range(args.blocks):
        times["this"] += renders(REPO, pages)
        times["previous"] += renders(args.previous.resolve(), pages)
    for name, walls in times.items():
        print(f"{name:9s} {len(walls)} renders: median {statistics.median(walls):7.1f} ms, p95 {p95(walls):7.1f} ms")
    ratio = statistics.median(times["this"]) / statistics.median(times["previous"])
    print(f"this / previous (median): {ratio:.2f}")


if __name__ == "__main__":
    main()
