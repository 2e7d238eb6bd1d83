"""The status fields an ingest parsed, checked against the documents' own words: for every document of an index
built from the page-level JSON corpus, whether its ``introduced`` date is printed after «Дата введения» in its text
(any date form), which documents print a «Дата введения» the ingest did not read, and what it read of amendments
and withdrawal.

    python -m evaluation.status_check --index norms --documents $D/russian_construction_standards/metadata
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from service.engine.gateway import build_client, scan
from service.settings import IndexSettings, Settings

#: «Дата введения», letter-spaced too («Д а т а  в в е д е н и я», as title pages print it)
_INTRODUCTION_RE = re.compile(r"д ?а ?т ?а\s+в ?в ?е ?д ?е ?н ?и ?[ея]", re.IGNORECASE)
_MONTHS = ("январ", "феврал", "март", "апрел", "ма", "июн", "июл", "август", "сентябр", "октябр", "ноябр", "декабр")


def date_forms(iso: str) -> list[re.Pattern[str]]:
    """The ways a text prints an ISO date: 2013-07-01 (any dashes), 01.07.2013, 01.07.13, «1 июля 2013»."""
    year, month, day = iso.split("-")
    month_name = _MONTHS[int(month) - 1]
    return [re.compile(rf"{year}\W{{1,3}}{month}\W{{1,3}}{day}"),
            re.compile(rf"{day}\s*\.\s*{month}\s*\.\s*(?:{year}|{year[2:]})(?!\d)"),
            re.compile(rf"0?{int(day)}\s+{month_name}\w*\s+{year}", re.IGNORECASE)]


def introductions(pages: list[str]) -> list[str]:
    """What follows each «Дата введения» of a document's text."""
    flat = " ".join(" ".join(pages).split())
    return [flat[m.end():m.end() + 40] for m in _INTRODUCTION_RE.finditer(flat)]


def check(sources: list[dict[str, Any]], documents: Path) -> dict[str, Any]:
    agree: list[Any] = []
    disagree: list[Any] = []
    unread: list[Any] = []
    amended: list[Any] = []
    withdrawn: list[Any] = []
    for source in sources:
        path = documents / f"{Path(source['file_name']).stem}.json"
        if not path.exists():
            continue
        said = introductions([p.get("page_content") or "" for p in json.loads(path.read_text("utf-8"))["pages"]])
        if source.get("introduced"):
            forms = date_forms(source["introduced"])
            (agree if any(f.search(s) for s in said for f in forms) else disagree).append(
                (source["file_name"], source["introduced"], said[:1]))
        elif said:
            unread.append((source["file_name"], said[:1]))
        if source.get("amendments"):
            amended.append((source["file_name"], source["amendments"]))
        if source.get("withdrawn"):
            withdrawn.append((source["file_name"], source["withdrawn"]))
    return {"documents": len(sources), "introduced": len(agree) + len(disagree), "as_printed": len(agree),
            "not_as_printed": disagree, "printed_not_read": unread, "amendments": amended, "withdrawn": withdrawn}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", required=True)
    parser.add_argument("--documents", type=Path, required=True)
    args = parser.parse_args()
    settings = Settings(index=IndexSettings(alias=args.index))
    client = build_client(settings)
    fields = ["file_name", "introduced", "amendments", "withdrawn"]
    sources = [h["_source"] for h in scan(client, index=args.index, _source=fields,
                                          query={"query": {"term": {"chunk_index": 0}}})]
    print(json.dumps(check(sources, args.documents), ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
