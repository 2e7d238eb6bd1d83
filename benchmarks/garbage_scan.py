"""Is anything indexed as garbage? Every chunk of an index judged as the parser judges a page
(``ingest.parse.layer``: control characters, dictionary words, odd tokens), and every document's share of
dictionary words; prints the documents with garbage chunks or under half of their Cyrillic words known.

    STROIDOK_INDEX_ALIAS=rf40 .venv/bin/python -m benchmarks.garbage_scan
"""

from __future__ import annotations

from collections import defaultdict

from ingest.parse.layer import judge
from service.engine.gateway import build_client, scan
from service.settings import Settings


def main() -> None:
    settings = Settings()
    client = build_client(settings)
    garbage: dict[str, int] = defaultdict(int)
    chunks: dict[str, int] = defaultdict(int)
    known: dict[str, int] = defaultdict(int)
    cyrillic: dict[str, int] = defaultdict(int)
    for hit in scan(client, index=settings.index.alias, query={"_source": ["file_path", "text"]}):
        path, verdict = hit["_source"]["file_path"], judge(hit["_source"].get("text", ""))
        chunks[path] += 1
        garbage[path] += verdict.garbage
        known[path] += verdict.known
        cyrillic[path] += verdict.cyrillic + verdict.mojibake
    flagged = [p for p in chunks if garbage[p] or (cyrillic[p] >= 50 and known[p] / cyrillic[p] < 0.5)]
    print(f"{len(chunks)} documents, {sum(chunks.values())} chunks; garbage chunks {sum(garbage.values())}; "
          f"documents flagged {len(flagged)}")
    for path in sorted(flagged):
        share = known[path] / cyrillic[path] if cyrillic[path] else 1.0
        print(f"  {garbage[path]} of {chunks[path]} chunks garbage, dictionary words {share:.0%}  {path}")


if __name__ == "__main__":
    main()
