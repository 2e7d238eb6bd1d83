"""Build a small folder of real documents from the shared construction corpus, for the demo and benchmarks.

The corpus's normative documents are page-level JSON; this renders them as real files (PDF with a text
layer through reportlab, XLSX, TXT in UTF-8 and cp1251, an image-only PDF for OCR) and copies the
original PDF and DOCX files, so every parser runs on every format.

    python -m evaluation.sample OUT_DIR [--shared ../shared/data] [--pdf-documents N]
    python -m evaluation.sample OUT_DIR --txt [--limit N]   # the normative documents as TXT files, pages
                                                        # separated by form feeds (as pdftotext writes them)
    python -m evaluation.sample OUT_DIR --pdf [--limit N]   # the normative documents as PDFs (a text layer)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loguru import logger

CORPUS = Path("construction_ru") / "russian_construction_standards" / "metadata"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
DEFAULT_SHARED = Path(os.environ.get("STROIDOK_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def load_standard(shared: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((shared / CORPUS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def list_standards(shared: Path) -> list[str]:
    return sorted(p.stem for p in (shared / CORPUS).glob("*.json"))


def render_pdf(pages: list[str], path: Path, title: str) -> Path:
    """One PDF page per source page (a page too long for one is set smaller, never run onto a second, so page
    numbers stay the source's), text wrapped to the page width, DejaVu for Cyrillic."""
    from xml.sax.saxutils import escape

    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import KeepInFrame, PageBreak, Paragraph, SimpleDocTemplate

    if "DejaVu" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("DejaVu", str(FONT)))
    style = ParagraphStyle("body", fontName="DejaVu", fontSize=7, leading=8.5)
    doc = SimpleDocTemplate(str(path), pagesize=A4, title=title, leftMargin=30, rightMargin=30,
                            topMargin=30, bottomMargin=30)
    story = []
    for page in pages:
        lines = [ln.strip() for ln in page.splitlines() if ln.strip()]
        paragraphs = [Paragraph(escape(ln), style) for ln in lines] or [Paragraph(" ", style)]
        story += [KeepInFrame(doc.width, doc.height - 1, paragraphs, mode="shrink"), PageBreak()]
    doc.build(story[:-1])
    return path


def render_xlsx(pages: list[str], path: Path) -> Path:
    """Each page a sheet ("стр. N"), one row per line."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for number, page in enumerate(pages, 1):
        sheet = book.create_sheet(f"стр. {number}")
        for line in page.splitlines():
            if line.strip():
                sheet.append([line.strip()])
    book.save(path)
    return path


def render_scan(text: str, path: Path) -> Path:
    """An image-only PDF page of ``text`` (no text layer), for OCR."""
    import textwrap

    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT), 30)
    image = Image.new("L", (1654, 2339), 255)
    draw = ImageDraw.Draw(image)
    lines = [w for para in text.splitlines() for w in textwrap.wrap(para, 80)][:50]
    for row, line in enumerate(lines):
        draw.text((100, 120 + row * 42), line, font=font, fill=0)
    image.save(path, "PDF", resolution=200.0)
    return path


def build_sample(shared: Path, out: Path, pdf_documents: int = 2) -> list[Path]:
    """The demo folder: originals plus rendered PDF/XLSX/TXT/scan; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    gost = shared / "construction_ru" / "gost_27772_2021" / "GOST_27772-2021.pdf"
    written = [Path(shutil.copyfile(gost, out / gost.name))]
    originals = out / "исходные DOCX"
    originals.mkdir(exist_ok=True)
    docx_dir = shared / "construction_ru" / "shasha_rag_task" / "docs"
    written += [Path(shutil.copyfile(p, originals / p.name)) for p in sorted(docx_dir.glob("*.docx"))]
    names = [n for n in list_standards(shared) if n.startswith("Свод правил")][:pdf_documents + 3]
    for name in names[:pdf_documents]:
        std = load_standard(shared, name)
        written.append(render_pdf([p["page_content"] for p in std["pages"]], out / f"{name}.pdf", std["full_name"]))
    xlsx_std, txt_std, scan_std = (load_standard(shared, n) for n in names[pdf_documents:pdf_documents + 3])
    written.append(render_xlsx([p["page_content"] for p in xlsx_std["pages"][:5]], out / "ведомость.xlsx"))
    txt = "\n\n".join(p["page_content"] for p in txt_std["pages"][:5])
    (out / "записка-utf8.txt").write_text(txt, encoding="utf-8")
    (out / "записка-cp1251.txt").write_bytes(txt.encode("cp1251", errors="replace"))
    written += [out / "записка-utf8.txt", out / "записка-cp1251.txt"]
    written.append(render_scan(scan_std["pages"][min(5, len(scan_std["pages"]) - 1)]["page_content"],
                               out / "скан-страницы.pdf"))
    return written


def write_txt_corpus(shared: Path, out: Path, limit: int | None = None, marker: str = "",
                     names: Sequence[str] = ()) -> list[Path]:
    """Each normative document (or those ``names`` gives) as one UTF-8 TXT file, pages joined by form feeds;
    ``marker`` (if any) is added to every page, so a copy of the corpus is not the same bytes as the original."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names or list_standards(shared)[:limit]:
        pages = [p["page_content"] + (f"\n{marker}" if marker else "") for p in load_standard(shared, name)["pages"]]
        path = out / f"{name}.txt"
        path.write_text("\f".join(pages), encoding="utf-8")
        written.append(path)
    return written


def write_pdf_corpus(shared: Path, out: Path, limit: int | None = None) -> list[Path]:
    """Each normative document as one PDF with a text layer, a page for each of its pages."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in list_standards(shared)[:limit]:
        std = load_standard(shared, name)
        written.append(render_pdf([p["page_content"] for p in std["pages"]], out / f"{name}.pdf",
                                  std.get("full_name") or name))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--pdf-documents", type=int, default=2)
    parser.add_argument("--txt", action="store_true", help="Write the normative documents as TXT files.")
    parser.add_argument("--pdf", action="store_true", help="Write the normative documents as PDF files.")
    parser.add_argument("--limit", type=int, default=None, help="With --txt or --pdf: the first N documents.")
    args = parser.parse_args()
    files = (write_txt_corpus(args.shared, args.out, args.limit) if args.txt
             else write_pdf_corpus(args.shared, args.out, args.limit) if args.pdf
             else build_sample(args.shared, args.out, args.pdf_documents))
    logger.info("sample of {} files in {}", len(files), args.out)


if __name__ == "__main__":
    main()
