"""A page of a scanned PDF as an image, on a real node after ``run_ingest``: the page asked, within its bounds;
and never a file other than the one indexed — a file changed since, a folder swapped for a link — nor a
document the caller may not read."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch
from PIL import Image, ImageDraw, ImageFont

from evaluation.sample import FONT
from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.errors import NotFound, PageUnavailable
from service.pages import MAX_BYTES, MAX_SIDE
from service.search.service import SearchService
from tests.support.archives import ingest_archive
from tests.support.engine import drop_index_resources

PUBLIC = Principal.of("t", [])
LINES = ["ГОСТ 13568-97 Звездочки приводных роликовых цепей", "Таблица 2 Размеры зубьев в миллиметрах",
         "Шаг цепи 12,7 Диаметр ролика 8,51 Ширина 7,75"]


def scan(path: Path) -> None:
    """A two-page image-only PDF: text on both; the second page's lower half black, so a page is told apart."""
    font = ImageFont.truetype(str(FONT), 40)
    pages = []
    for number in (1, 2):
        page = Image.new("L", (1654, 2339), 255)
        draw = ImageDraw.Draw(page)
        for row, line in enumerate([f"Страница {number}", *LINES]):
            draw.text((120, 150 + row * 70), line, font=font, fill=0)
        if number == 2:
            draw.rectangle((0, 1400, 1654, 2339), fill=0)
        pages.append(page)
    pages[0].save(path, "PDF", resolution=200.0, save_all=True, append_images=pages[1:])


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[tuple[SearchService, Path]]:
    root: Path = tmp_path_factory.mktemp("pages")
    (root / "сканы").mkdir()
    (root / "секретно").mkdir()
    scan(root / "сканы" / "ГОСТ 13568-97.pdf")
    scan(root / "секретно" / "скан.pdf")
    (root / "сканы" / "записка.txt").write_text("Пояснительная записка к проекту. Шаг цепи 12,7.", encoding="utf-8")
    settings = ingest_archive(root, opensearch_url, client, navec_embedder)
    yield SearchService(settings, client, navec_embedder), root
    drop_index_resources(client, settings.index)


def ids(service: SearchService, principal: Principal = PUBLIC) -> dict[str, str]:
    found = service.search({"query": "шаг цепи", "operator": "OR", "search_mode": "fulltext"}, principal).results
    return {r.file_path.rsplit("/", 1)[-1]: r.id for r in found}


def darkness(png: bytes, top: float, bottom: float) -> float:
    """The mean darkness (0 white – 1 black) of a horizontal band of the image."""
    image = Image.open(io.BytesIO(png)).convert("L")
    band = image.crop((0, int(image.height * top), image.width, int(image.height * bottom)))
    pixels = band.tobytes()  # one byte a pixel in «L» mode
    return 1 - sum(pixels) / (255 * len(pixels))


def test_a_scanned_page_is_the_page_asked_within_its_bounds(archive: tuple[SearchService, Path]) -> None:
    service, _ = archive
    scanned = ids(service)["ГОСТ 13568-97.pdf"]
    first = service.get_page_image({"id": scanned, "page": 1}, PUBLIC)
    second = service.get_page_image({"id": f"{scanned}:0", "page": 2}, PUBLIC)
    for page in (first, second):
        assert page.png.startswith(b"\x89PNG") and len(page.png) <= MAX_BYTES
        assert max(page.width, page.height) <= MAX_SIDE and page.page_count == 2
        assert Image.open(io.BytesIO(page.png)).size == (page.width, page.height)
    assert darkness(second.png, 0.7, 0.95) > 0.95 > 0.05 > darkness(first.png, 0.7, 0.95)
    assert darkness(first.png, 0.05, 0.2) > 0.01  # the text is on it


def test_no_page_of_a_file_changed_since_it_was_indexed(archive: tuple[SearchService, Path]) -> None:
    service, root = archive
    scanned = ids(service)["ГОСТ 13568-97.pdf"]
    path = root / "сканы" / "ГОСТ 13568-97.pdf"
    kept = path.read_bytes()
    try:
        path.write_bytes(kept + b"\n% appended\n")
        with pytest.raises(PageUnavailable, match="changed since it was indexed"):
            service.get_page_image({"id": scanned, "page": 1}, PUBLIC)
    finally:
        path.write_bytes(kept)
    assert service.get_page_image({"id": scanned, "page": 1}, PUBLIC).png


def test_no_page_through_a_folder_swapped_for_a_link(archive: tuple[SearchService, Path], tmp_path: Path) -> None:
    service, root = archive
    scanned = ids(service)["ГОСТ 13568-97.pdf"]
    folder = root / "сканы"
    elsewhere = tmp_path / "сканы"
    shutil.copytree(folder, elsewhere)  # the same bytes: only the link on the way refuses it
    moved = root / "сканы-настоящие"
    folder.rename(moved)
    try:
        folder.symlink_to(elsewhere, target_is_directory=True)
        with pytest.raises(PageUnavailable, match="no longer where it was indexed"):
            service.get_page_image({"id": scanned, "page": 1}, PUBLIC)
    finally:
        folder.unlink(missing_ok=True)
        moved.rename(folder)


def test_a_reader_gets_no_page_of_a_document_they_may_not_read(archive: tuple[SearchService, Path]) -> None:
    service, _ = archive
    secret = ids(service, Principal.of("l", ["legal"]))["скан.pdf"]
    assert "скан.pdf" not in ids(service)
    with pytest.raises(NotFound):
        service.get_page_image({"id": secret, "page": 1}, PUBLIC)
    assert service.get_page_image({"id": secret, "page": 1}, Principal.of("l", ["legal"])).png


def test_a_page_past_the_last_and_a_document_not_a_pdf_are_refused(archive: tuple[SearchService, Path]) -> None:
    service, _ = archive
    found = ids(service)
    with pytest.raises(NotFound):
        service.get_page_image({"id": found["ГОСТ 13568-97.pdf"], "page": 3}, PUBLIC)
    with pytest.raises(PageUnavailable, match="made of PDFs"):
        service.get_page_image({"id": found["записка.txt"], "page": 1}, PUBLIC)
