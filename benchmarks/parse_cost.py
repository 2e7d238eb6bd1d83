"""The parse stage alone on born-digital PDFs (no OCR), in pages/s: run it in this tree and in a
``git worktree`` of an earlier round to compare what parsing a page costs.

    .venv/bin/python -m benchmarks.parse_cost ../shared/data/real_files/gost_standards/*.pdf \\
        ../shared/data/construction_ru/gost_27772_2021/GOST_27772-2021.pdf
    (cd ../prev && PYTHONPATH=. ../main/.venv/bin/python -m benchmarks.parse_cost …)   # the other tree
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ingest.parse import ParseOptions, parse_file
from ingest.parse.pdf import PdfOptions
from service.errors import ParseError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdfs", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-tables", action="store_true", help="Without reading ruled tables (pdfplumber).")
    args = parser.parse_args()
    options = ParseOptions(pdf=PdfOptions(ocr="never", tables=not args.no_tables))
    for path in args.pdfs[:2]:  # warm: imports, dictionaries
        parse_file(path, options)
    for round_ in range(args.rounds):
        pages, began = 0, time.perf_counter()
        for path in args.pdfs:
            try:
                pages += parse_file(path, options).page_count
            except ParseError:
                continue
        seconds = time.perf_counter() - began
        print(f"round {round_ + 1}: {pages} pages in {seconds:.2f} s, {pages / seconds:.1f} pages/s")


if __name__ == "__main__":
    main()
