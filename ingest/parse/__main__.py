"""``python -m ingest.parse FILE [--ocr auto|never|always] [--pdf-parser pdfium|unstructured]``:
parse one file and print its blocks as JSON. Used to check parsing with the network cut off."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from ingest.parse import ParseOptions, parse_file
from ingest.parse.pdf import PdfOptions
from service.errors import StroidokError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("--ocr", default="auto", choices=["auto", "never", "always"])
    parser.add_argument("--pdf-parser", default="pdfium", choices=["pdfium", "unstructured"])
    parser.add_argument("--encoding")
    args = parser.parse_args()
    options = ParseOptions(PdfOptions(parser=args.pdf_parser, ocr=args.ocr), encoding=args.encoding)
    try:
        parsed = parse_file(args.file, options)
    except StroidokError as exc:
        print(json.dumps({"error": exc.to_dict()}, ensure_ascii=False))
        return 2
    json.dump(asdict(parsed), sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
