"""What checking a whole project document costs (``stroidok cite --file``): a PDF of ``--pages`` pages, each a
page of a norm's own text with ``--per-page`` citations of the citation set written into it (the set's kinds in
turn, every fifth one repeated from an earlier page), read by the ingest's parsers and checked through the service
with its defaults on an index ``stroidok ingest`` built; the time to read, the time to check, the engine's shard
query phases (requests × shards), and whether every citation was found on its page.

    STROIDOK_INDEX_ALIAS=norms python -m benchmarks.cite_file [--pages 300] [--per-page 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benchmarks.citations import SET, bench_service, mixed, query_phases, shards
from evaluation.citations import load_citations
from evaluation.sample import render_pdf
from ingest.cited import read_pages
from service.caller.principal import Principal

READER = Principal.of("bench", [])
FILLER = Path("../shared/data/construction_ru/russian_construction_standards/metadata")


def filler_pages(count: int) -> list[str]:
    """``count`` pages of norms' own text (the first pages with 800+ characters of the shared documents), or a
    fixed paragraph where the shared data is absent."""
    pages: list[str] = []
    for path in sorted(FILLER.glob("*.json"))[:60] if FILLER.is_dir() else []:
        for page in json.loads(path.read_text(encoding="utf-8"))["pages"][3:]:
            text = " ".join((page.get("page_content") or "").split())
            if len(text) >= 800:
                pages.append(text[:1500])
            if len(pages) >= count:
                return pages
    return (pages or ["Пояснительная записка. Проектные решения приняты в соответствии с заданием."]) * count


def document_pages(count: int, per_page: int) -> tuple[list[str], list[tuple[int, str]]]:
    """The pages' texts and each citation with the page it is written on."""
    texts = mixed(load_citations(SET), 10_000)
    placed: list[tuple[int, str]] = []
    pages = []
    for number, filler in enumerate(filler_pages(count)[:count], 1):
        cited: list[str] = []
        for _ in range(per_page):
            at = len(placed) + len(cited)
            cited.append(placed[at // 2][1] if at % 5 == 4 else texts[at % len(texts)])  # every fifth a repeat
        placed += [(number, c) for c in cited]
        pages.append(filler[:700] + "\n" + "\n".join(f"Принято по {c}." for c in cited) + "\n" + filler[700:])
    return pages, placed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--per-page", type=int, default=3)
    args = parser.parse_args()
    settings, client, service = bench_service()
    pages, placed = document_pages(args.pages, args.per_page)
    with tempfile.TemporaryDirectory() as folder:
        path = render_pdf(pages, Path(folder) / "записка.pdf", "Пояснительная записка")
        began = time.perf_counter()
        read = read_pages(path, settings)
        read_s = time.perf_counter() - began
    before = query_phases(client, settings.index.alias)
    began = time.perf_counter()
    reply = service.check_pages("записка.pdf", read, READER, "bench")
    check_s = time.perf_counter() - began
    requests = (query_phases(client, settings.index.alias) - before) / shards(client, settings.index.alias)
    found = {(c.page, c.designation) for c in reply.citations}
    placed_found = sum(1 for page, text in placed if any(p == page and d in text for p, d in found))
    distinct = len({(c.designation, c.clause, c.value) for c in reply.citations})
    print(f"index {settings.index.alias}: a PDF of {len(pages)} pages, {len(placed)} citations written "
          f"({distinct} distinct as read)")
    print(f"read (ingest's parser, one worker): {read_s:.1f} s; check: {check_s:.1f} s, "
          f"{requests:.0f} engine requests; {len(reply.citations)} citations read, "
          f"{placed_found / len(placed):.3f} of those written found on their page")
    print("summary: " + ", ".join(f"{k} {v}" for k, v in (reply.summary or {}).items()))


if __name__ == "__main__":
    main()
