"""Where a scanned page's OCR time goes: the shipped path (pdfium render + tesseract called directly, one
thread) beside its variants — render DPI, ``rus`` against ``rus+eng``, page segmentation mode, tesseract's
own threads — and unstructured's ``ocr_only`` strategy (the previous path), on the same pages in one run.

    .venv/bin/python -m benchmarks.ocr ../shared/data/real_files/gost_mechanical/3722-81.pdf --pages 2 4

Prints seconds per page, pages/s, and dictionary words read per page for each variant; results in
docs/ingest.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium

from ingest.parse.layer import judge


def unstructured_ocr_pages(pdf: pdfium.PdfDocument, indexes: list[int], languages: list[str]) -> dict[int, str]:
    """The previous path: the pages copied into a temporary PDF and read by unstructured's ``ocr_only``
    strategy."""
    from unstructured.partition.pdf import partition_pdf

    subset = pdfium.PdfDocument.new()
    subset.import_pages(pdf, indexes)
    with tempfile.NamedTemporaryFile(suffix=".pdf") as tmp:
        subset.save(tmp.name)
        subset.close()
        elements = partition_pdf(filename=tmp.name, strategy="ocr_only", languages=languages)
    found: dict[int, str] = {i: "" for i in indexes}
    for element in elements:
        position = (element.metadata.page_number or 1) - 1
        if 0 <= position < len(indexes):
            found[indexes[position]] += str(element) + "\n\n"
    return found


def tesseract(dpi: int, languages: str, psm: int, threads: int) -> Callable[[pdfium.PdfDocument, int], str]:
    def read(pdf: pdfium.PdfDocument, index: int) -> str:
        import pytesseract

        image = pdf[index].render(scale=dpi / 72, grayscale=True).to_pil()
        os.environ["OMP_THREAD_LIMIT"] = str(threads)
        return str(pytesseract.image_to_string(image, lang=languages, config=f"--psm {psm}"))
    return read


VARIANTS: dict[str, Callable[[pdfium.PdfDocument, int], str]] = {
    "shipped: 300 dpi, rus+eng, psm 3, 1 thread": tesseract(300, "rus+eng", 3, 1),
    "200 dpi": tesseract(200, "rus+eng", 3, 1),
    "rus only": tesseract(300, "rus", 3, 1),
    "psm 6 (one block)": tesseract(300, "rus+eng", 6, 1),
    "2 tesseract threads": tesseract(300, "rus+eng", 3, 2),
    "unstructured ocr_only (before)": lambda pdf, index: unstructured_ocr_pages(pdf, [index], ["rus", "eng"])[index],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdf", type=Path)
    parser.add_argument("--pages", type=int, nargs="+", default=[0], help="0-based pages to read")
    parser.add_argument("--skip-unstructured", action="store_true")
    args = parser.parse_args()
    pdf = pdfium.PdfDocument(str(args.pdf))
    print("| variant | s / page | pages / s | dictionary words / page |\n|---|---|---|---|")
    for name, read in VARIANTS.items():
        if args.skip_unstructured and name.startswith("unstructured"):
            continue
        seconds, words = [], []
        for index in args.pages:
            began = time.perf_counter()
            text = read(pdf, index)
            seconds.append(time.perf_counter() - began)
            words.append(judge(text).known)
        per_page = statistics.mean(seconds)
        print(f"| {name} | {per_page:.2f} | {1 / per_page:.2f} | {statistics.mean(words):.0f} |")


if __name__ == "__main__":
    main()
