"""A PDF page as an image, for an agent that cannot trust a scan's text layer (a table OCR garbled).

The file is the one the index names for a document the caller may read: opened beneath its ingest root without
following a link at any component (``service.files``), then checked before any byte is read — a regular file (a
folder, FIFO or device there is refused at once), of the size indexed, with one name unless the ingest takes hard
links (``STROIDOK_INGEST_HARD_LINKS``) — its bytes hashed within a time bound and compared with the content
indexed (a file changed or replaced since is not shown as this document), then rendered by a child process under
its own memory cap (``STROIDOK_SERVER_RENDER_MEMORY_MB``) and a time cap, so a hostile PDF costs the server nothing
but that child. The server runs renders in their own slots (``STROIDOK_SERVER_RENDER_SLOTS``), never in a tool
call's. The PNG is bounded in pixels and in bytes.

    python -m service.pages PAGE MAX_SIDE MAX_BYTES MEMORY_MB < file.pdf > page.png   (the child; stdin: the file)
"""

from __future__ import annotations

import io
import os
import resource
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from service.errors import FileMoved, PageUnavailable
from service.files import hash_descriptor, open_beneath

#: the longest side of a rendered page, in pixels (an A4 page at ~135 dpi)
MAX_SIDE = 1600
#: the largest PNG returned (a page over it is rendered smaller until it fits)
MAX_BYTES = 1_500_000
#: how long a render may take
RENDER_TIMEOUT_S = 30.0
#: how long hashing the file may take before a render (a 512 MB file reads in ~1-2 s from a page cache or an SSD)
HASH_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class PageImage:
    png: bytes
    width: int
    height: int


def render_png(pdf: bytes, page: int, max_side: int, max_bytes: int) -> bytes:
    """Page ``page`` (1-based) of ``pdf`` as a grey PNG, its longest side at most ``max_side`` pixels and its size
    at most ``max_bytes`` (rendered smaller until it fits)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        if not 1 <= page <= len(document):
            raise ValueError(f"page {page} of {len(document)}")
        sheet = document[page - 1]
        width, height = sheet.get_size()
        side = max_side
        while True:
            image = sheet.render(scale=side / max(width, height), grayscale=True).to_pil()
            out = io.BytesIO()
            image.save(out, "PNG", optimize=True)
            if out.tell() <= max_bytes or side <= 400:
                return out.getvalue()
            side = int(side * 0.75)
    finally:
        document.close()


def limit_self(memory_mb: int) -> None:
    """The child's limits, set by itself before it reads the file: its data segment (as the parse worker's) and
    a CPU-time cap (the server, which runs calls in threads, starts it without a pre-exec hook)."""
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (int(RENDER_TIMEOUT_S), int(RENDER_TIMEOUT_S) + 1))


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def file_refusal(st: os.stat_result, size: int | None, hard_links: bool) -> str | None:
    """Why the file opened where a document was indexed is not rendered, decided from its ``fstat`` before any
    byte is read; None when it may be hashed."""
    if not stat.S_ISREG(st.st_mode):
        return "no regular file stands where the document was indexed (a folder, FIFO or device): re-ingest it"
    if size is not None and st.st_size != size:
        return (f"the file changed since it was indexed ({st.st_size} bytes, {size} indexed): re-ingest it, then "
                "ask again")
    if st.st_nlink > 1 and not hard_links:
        return (f"the file has {st.st_nlink} names (hard links) now: a name elsewhere may lie under other access "
                "groups, so no page of it is shown")
    return None


def open_indexed(root: Path, file_path: Path, size: int | None, hard_links: bool) -> int:
    """A descriptor of the file indexed at ``file_path`` below ``root``, checked (``file_refusal``);
    ``PAGE_UNAVAILABLE`` saying why not."""
    try:
        fd = open_beneath(root, file_path.relative_to(root))
    except (OSError, ValueError, FileMoved) as exc:
        raise PageUnavailable("the file is no longer where it was indexed (moved, removed, or a link on its way): "
                              "re-ingest it") from exc
    refusal = file_refusal(os.fstat(fd), size, hard_links)
    if refusal is not None:
        os.close(fd)
        raise PageUnavailable(refusal)
    return fd


def render_page(root: Path, file_path: Path, content_hash: str, page: int, memory_mb: int,
                size: int | None = None, limit: int | None = None, hard_links: bool = False) -> PageImage:
    """Page ``page`` of the file at ``file_path`` below ``root``, if it is still the content ``content_hash``
    (the SHA-256 of its bytes, ``size`` of them when the index says) the index holds; ``PAGE_UNAVAILABLE`` saying
    why not. At most ``limit`` bytes are hashed (an index without sizes: the ingest's largest file)."""
    fd = open_indexed(root, file_path, size, hard_links)
    try:
        try:
            digest = hash_descriptor(fd, limit=(size + 1) if size is not None else limit, seconds=HASH_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise PageUnavailable(f"the file could not be read within {HASH_TIMEOUT_S:.0f} s: ask again later") \
                from exc
        if digest != content_hash:
            raise PageUnavailable("the file changed since it was indexed: re-ingest it, then ask again")
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            done = subprocess.run([sys.executable, "-m", "service.pages", str(page), str(MAX_SIDE), str(MAX_BYTES),
                                   str(memory_mb)], stdin=fd, capture_output=True, timeout=RENDER_TIMEOUT_S,
                                  check=False, process_group=0)
        except subprocess.TimeoutExpired as exc:
            raise PageUnavailable(f"the page did not render within {RENDER_TIMEOUT_S:.0f} s") from exc
    finally:
        os.close(fd)
    if done.returncode != 0 or not done.stdout.startswith(b"\x89PNG"):
        raise PageUnavailable("the page could not be rendered (a damaged PDF, or past the render's limits)",
                              details={"reason": done.stderr.decode("utf-8", "replace")[-200:].strip()})
    width, height = png_size(done.stdout)
    return PageImage(done.stdout, width, height)


def main() -> None:
    page, max_side, max_bytes, memory_mb = (int(a) for a in sys.argv[1:5])
    limit_self(memory_mb)
    try:
        png = render_png(sys.stdin.buffer.read(), page, max_side, max_bytes)
    except Exception as exc:  # the child's one boundary: its reason on stderr, a failing status
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
    sys.stdout.buffer.write(png)


if __name__ == "__main__":
    main()
