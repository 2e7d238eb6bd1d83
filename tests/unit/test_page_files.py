"""The page-image door before any render: the file at the indexed place checked by ``fstat`` before a byte is
read (a folder, FIFO, a file of another size, a file with several names), its hash bounded in bytes and time, the
render child's memory capped well under 1 GB, and ``page -o`` writing no file through a link."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service import pages
from service.errors import PageUnavailable
from service.files import hash_descriptor, write_replacing
from service.settings import ServerSettings
from tests.support.documents import huge_image_pdf

REPO = Path(__file__).resolve().parents[2]


def never_read(*_: object, **__: object) -> str:
    raise AssertionError("the file's bytes were read")


def test_a_sparse_giant_at_the_indexed_place_is_refused_before_a_byte_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    giant = tmp_path / "a.pdf"
    with giant.open("wb") as out:
        out.truncate(8 * 2**30)
    monkeypatch.setattr(pages, "hash_descriptor", never_read)
    with pytest.raises(PageUnavailable, match="changed since it was indexed"):
        pages.render_page(tmp_path, giant, "0" * 64, 1, 512, size=1000)


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_folder_or_fifo_at_the_indexed_place_is_page_unavailable(tmp_path: Path, kind: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    place = tmp_path / "a.pdf"
    place.mkdir() if kind == "folder" else os.mkfifo(place)
    monkeypatch.setattr(pages, "hash_descriptor", never_read)
    with pytest.raises(PageUnavailable, match="no regular file"):
        pages.render_page(tmp_path, place, "0" * 64, 1, 512)


def test_a_file_with_a_second_name_shows_no_page_unless_hard_links_are_taken(tmp_path: Path) -> None:
    pdf = tmp_path / "public" / "a.pdf"
    pdf.parent.mkdir()
    huge_image_pdf(pdf, 64)
    digest = hashlib.sha256(pdf.read_bytes()).hexdigest()
    assert pages.render_page(tmp_path, pdf, digest, 1, 512, size=pdf.stat().st_size).png
    (tmp_path / "legal").mkdir()
    os.link(pdf, tmp_path / "legal" / "b.pdf")
    with pytest.raises(PageUnavailable, match="hard links"):
        pages.render_page(tmp_path, pdf, digest, 1, 512, size=pdf.stat().st_size)
    assert pages.render_page(tmp_path, pdf, digest, 1, 512, size=pdf.stat().st_size, hard_links=True).png


def test_the_hash_stops_at_its_byte_bound_and_its_time_bound(tmp_path: Path) -> None:
    data = os.urandom(3 * 2**20)
    (tmp_path / "f").write_bytes(data)
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        assert hash_descriptor(fd, limit=1000) == hashlib.sha256(data[:1000]).hexdigest()
        assert hash_descriptor(fd) == hashlib.sha256(data).hexdigest()
        with pytest.raises(TimeoutError):
            hash_descriptor(fd, block=4096, seconds=0.0)
    finally:
        os.close(fd)


def test_a_render_of_a_page_holding_a_giant_image_stays_within_the_default_memory_cap(tmp_path: Path) -> None:
    """24000² bytes of image to decode (576 MB): the default cap (512 MB) keeps the child well under 1 GB, where
    the parse workers' cap (4 GB) let it take ~1 GB."""
    pdf = tmp_path / "giant.pdf"
    huge_image_pdf(pdf, 24000)
    memory_mb = ServerSettings().render_memory_mb
    assert memory_mb <= 512
    driver = ("import hashlib, resource, sys; from pathlib import Path; from service.pages import render_page; "
              "p = Path(sys.argv[1]); "
              "d = hashlib.sha256(p.read_bytes()).hexdigest(); "
              "r = None\n"
              "try:\n r = render_page(p.parent, p, d, 1, int(sys.argv[2]), size=p.stat().st_size)\n"
              "except Exception as e:\n print(type(e).__name__, file=sys.stderr)\n"
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", driver, str(pdf), str(memory_mb)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=True)
    peak_mb = int(done.stdout.split()[-1]) / 1024
    assert peak_mb < 600, (peak_mb, done.stderr[-500:])


def test_page_out_replaces_a_link_at_its_path_and_never_writes_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "page.png"
    out.symlink_to(victim)
    write_replacing(out, b"\x89PNG page")
    assert victim.read_text() == "keep me"
    assert not out.is_symlink() and out.read_bytes() == b"\x89PNG page"


@pytest.mark.parametrize("kind", ["fifo", "folder", "proc"])
def test_page_out_refuses_special_files(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "x"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        target = Path(f"/proc/{os.getpid()}/comm")
    with pytest.raises(OSError):
        write_replacing(target, b"\x89PNG")
    assert not list(tmp_path.glob(".x.*"))
