"""Real and generated test documents: the shared originals, plus XLSX, TXT and a scanned PDF made here."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("STROIDOK_SHARED_DATA") or REPO.parent / "shared" / "data")
SHARED_MISSING = f"the shared corpus is not at {SHARED} (clone the repo beside shared/ or set STROIDOK_SHARED_DATA)"
#: a test module that reads the shared corpus is skipped, with that one-line reason, where it is absent
requires_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=SHARED_MISSING)


def require_shared() -> Path:
    """The shared corpus; the calling test or fixture is skipped where it is absent."""
    if not SHARED.is_dir():
        pytest.skip(SHARED_MISSING)
    return SHARED

CONSTRUCTION = SHARED / "construction_ru"
GOST_PDF = CONSTRUCTION / "gost_27772_2021" / "GOST_27772-2021.pdf"
GOST_JSON = CONSTRUCTION / "russian_construction_standards" / "metadata" / "ГОСТ 27772-2021.json"
DOCX_DIR = CONSTRUCTION / "shasha_rag_task" / "docs"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

XLSX_SHEETS: dict[str, list[list[object]]] = {
    "Смета": [["Наименование работ", "Ед. изм.", "Количество"],
              ["Устройство монолитной железобетонной фундаментной плиты", "м3", 120],
              ["Армирование каркаса стальной арматурой класса А500С", "т", 14.5]],
    "Материалы": [["Материал", "Марка"],
                  ["Бетон тяжелый класса прочности В25", "W6 F150"],
                  ["Минераловатный утеплитель плотностью 110 кг/м3", "ППЖ-110"]],
}
TXT_TEXT = ("Пояснительная записка к проекту организации строительства.\n\n"
            "Продолжительность строительства жилого дома составляет четырнадцать месяцев.\n\n"
            "Ёмкость противопожарного резервуара принята равной пятидесяти кубическим метрам.\n")
SCAN_LINES = ["Акт освидетельствования скрытых работ", "Бетонирование ростверка выполнено",
              "в соответствии с проектной документацией"]


def make_xlsx(path: Path) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in XLSX_SHEETS.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def make_txt(path: Path, encoding: str) -> Path:
    path.write_bytes(TXT_TEXT.encode(encoding))
    return path


#: a page of its own for each page of a long scan (identical pages would be read as running headers and dropped)
PAGE_TOPICS = ["Бетонирование ростверков", "Армирование плит перекрытия", "Монтаж стальных колонн",
               "Устройство кровли", "Кладка наружных стен", "Гидроизоляция фундаментов",
               "Засыпка пазух котлована", "Сварка арматурных каркасов"]


def make_scanned_pdf(path: Path, lines: list[str] = SCAN_LINES, pages: int = 1, distinct: bool = False) -> Path:
    """An image-only PDF (no text layer): Russian text rendered to a 200 dpi bitmap; ``distinct``: each page
    under a topic line of its own."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT), 40)
    images = []
    for number in range(pages):
        image = Image.new("L", (1654, 2339), 255)
        draw = ImageDraw.Draw(image)
        page_lines = [f"Раздел {number + 1}. {PAGE_TOPICS[number % len(PAGE_TOPICS)]}", *lines] if distinct else lines
        for row, line in enumerate(page_lines):
            draw.text((120, 200 + row * 80), line, font=font, fill=0)
        draw.text((120, 2200), f"Лист {number + 1}", font=font, fill=0)
        images.append(image)
    images[0].save(path, "PDF", resolution=200.0, save_all=True, append_images=images[1:])
    return path

#: six short topics, one TXT document each, that a query of its key word finds
TOPICS = {
    "бетон": "Контроль прочности бетона. Испытание контрольных образцов бетона на сжатие в возрасте 28 суток.",
    "сварка": "Сварка стальных конструкций. Монтажный стык выполняют ручной дуговой сваркой электродами.",
    "кровля": "Кровля из металлочерепицы. Обрешётку кровли устраивают из досок с шагом под волну листа.",
    "эвакуация": "Эвакуационные пути и выходы. Ширина эвакуационного выхода из помещения не менее 1,2 м.",
    "отопление": "Отопление жилых зданий. Радиаторы отопления размещают под световыми проёмами у наружных стен.",
    "кладка": "Каменная кладка стен. Кирпичную кладку ведут с перевязкой швов на цементно-песчаном растворе.",
}


def huge_image_pdf(path: Path, side: int) -> None:
    """A one-page PDF of a few hundred KB holding a ``side`` × ``side`` grey image (a render must decode
    ``side``² bytes of it): the page a hostile archive plants to take a renderer's memory."""
    squeeze = zlib.compressobj(9)
    row = bytes(side)
    data = b"".join([*(squeeze.compress(row) for _ in range(side)), squeeze.flush()])
    content = b"q 595 0 0 842 0 0 cm /Im Do Q"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im 4 0 R >> >> "
               b"/Contents 5 0 R >>",
               b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 "
               b"/Filter /FlateDecode /Length %d >>\nstream\n%b\nendstream" % (side, side, len(data), data),
               b"<< /Length %d >>\nstream\n%b\nendstream" % (len(content), content)]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%b\nendobj\n" % (number, body)
    table = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, table)
    path.write_bytes(bytes(out))
