"""A long scanned PDF through the shipped ingest: pages per second, and that the run reports progress and finishes.

The PDF is assembled from the real scan pages of ``../shared/data/real_files/office_and_scans/`` (no text layer:
every page goes through OCR), cycled to ``--pages`` pages, then ingested with ``stroidok ingest`` and its
defaults into its own index, as a user runs it::

    python -m benchmarks.long_scan --pages 600 [--index long-scan] [--keep]

Prints the run's wall time, its outcome and pages a second; the output goes to benchmarks/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCANS = Path(__file__).resolve().parents[2] / "shared" / "data" / "real_files" / "office_and_scans"
SCAN_FILES = ("with_applications.pdf", "tz_scan_1page.pdf")


def build_long_scan(target: Path, pages: int, sources: Path = SCANS) -> Path:
    """``pages`` scan pages copied, in turn, from the real scans (image-only pages, as an archive's old norms)."""
    import pypdfium2 as pdfium

    originals = [pdfium.PdfDocument(str(sources / name)) for name in SCAN_FILES]
    order = [(i, p) for i, doc in enumerate(originals) for p in range(len(doc))]
    out = pdfium.PdfDocument.new()
    for n in range(pages):
        source, page = order[n % len(order)]
        out.import_pages(originals[source], [page])
    out.save(str(target))
    return target


def drop_index(alias: str) -> None:
    """The benchmark's index and its companions (registry, query log) removed."""
    from service.engine.gateway import build_client
    from service.settings import Settings

    client = build_client(Settings())
    client.indices.delete(index=f"{alias}*", params={"expand_wildcards": "all"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=600)
    parser.add_argument("--index", default="long-scan")
    parser.add_argument("--keep", action="store_true", help="keep the index afterwards")
    args = parser.parse_args()
    if not SCANS.is_dir():
        sys.exit(f"skipped: {SCANS} is absent (the shared data)")
    with tempfile.TemporaryDirectory(prefix="long-scan-") as folder:
        os.chmod(folder, 0o755)
        build_long_scan(Path(folder) / f"long-scan-{args.pages}.pdf", args.pages)
        env = {**os.environ, "STROIDOK_INDEX_ALIAS": args.index}
        stroidok = str(Path(sys.executable).with_name("stroidok"))
        began = time.monotonic()
        done = subprocess.run([stroidok, "ingest", folder, "--json"], env=env, capture_output=True, text=True)
        wall = time.monotonic() - began
        progress = [line for line in done.stderr.splitlines() if "page" in line]
        report = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
        print(f"pages {args.pages}  exit {done.returncode}  wall {wall:.0f}s  {args.pages / wall:.2f} pages/s")
        print(f"outcomes: {json.dumps(report.get('files', report), ensure_ascii=False)[:600]}")
        print(f"progress lines on stderr: {len(progress)}; last: {progress[-1] if progress else '-'}")
        if done.returncode:
            print(done.stderr[-2000:])
        if not args.keep:
            drop_index(args.index)


if __name__ == "__main__":
    main()
