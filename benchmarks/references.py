"""References and editions through the shipped parser: the 361 documents written as TXT files, parsed by
``parse_file`` (what ``stroidok ingest`` runs), compared with the judged reference lists of
``evaluation/sets/references/judgments.jsonl``; then every edition relation ``ingest/links.py`` finds between two
documents of the archive, listed for a hand check.

    python -m benchmarks.references ../shared/data
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from evaluation.sample import write_txt_corpus
from ingest.links import Entry, plan_links
from ingest.parse import parse_file
from service.search.citations.designations import find_designation

JUDGMENTS = Path(__file__).resolve().parents[1] / "eval" / "references" / "judgments.jsonl"


def score(found: set[str], judged: set[str]) -> tuple[int, int, int]:
    """True positives, found, judged."""
    return len(found & judged), len(found), len(judged)


def main(shared: Path) -> None:
    judged = {row["file"]: set(row["references"]) for row in map(json.loads, JUDGMENTS.read_text().splitlines())}
    entries: list[Entry] = []
    listed, cited = [0, 0, 0], [0, 0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        for path in write_txt_corpus(shared, Path(tmp)):
            parsed = parse_file(path)
            entries.append(Entry(path.stem, parsed.designation, parsed.title or "", tuple(parsed.replaces),
                                 tuple(parsed.cited_names.items())))
            if path.stem in judged:
                truth = judged[path.stem]
                for total, found in ((listed, set(parsed.cited_names)), (cited, set(parsed.cites))):
                    total[:] = [a + b for a, b in zip(total, score(found, truth), strict=True)]
    for label, counts in (("cites (what get_document and the cites filter use)", cited),
                          ("names the references section gives (entries and the СНиП quoted in them)", listed)):
        tp, found_n, truth_n = counts
        print(f"{label}: precision {tp / max(1, found_n):.3f}, recall {tp / max(1, truth_n):.3f} "
              f"({tp} of {found_n} found, {truth_n} judged, {len(judged)} documents)")
    plan = plan_links(entries)
    by_id = {e.doc_id: e for e in entries}
    relations = sorted((by_id[d].designation or "", links.superseded_by_designation or "")
                       for d, links in plan.items() if links.superseded_by)
    print(f"\n{len(relations)} documents replaced by another document of the archive:")
    for old, new in relations:
        print(f"  {old} → {new}")
    said = sum(bool(e.replaces) for e in entries)
    print(f"\n{said} of {len(entries)} documents say what they replace; "
          f"{sum(1 for e in entries if e.designation and find_designation(e.designation))} have a designation")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
