"""Ingest throughput on real construction documents rendered as PDF, side by side in one run.

1. Parse stage: pypdfium2 vs unstructured ``fast`` on the same PDFs (pages/s) — picks the default.
2. The product's ingest (worker processes, batched embeddings, streaming_bulk) into a fresh index:
   pages/s, chunks/s and the parse / embed / index split.
3. A naive loop over the same files: parse in-process, embed one chunk at a time, one index request per
   chunk. Ratio = naive wall time / product wall time.

Run: .venv/bin/python -m benchmarks.ingest_bench --pages 500   (needs a running engine: make demo)
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path
from typing import Literal

from opensearchpy import OpenSearch

from evaluation.sample import DEFAULT_SHARED, list_standards, load_standard, render_pdf
from ingest.chunk import chunk_blocks
from ingest.parse import ParseOptions, parse_file
from ingest.parse.pdf import PdfOptions
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from service.embedders.base import Embedder
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.engine.index_admin.apply import apply_all, drop_all
from service.settings import IndexSettings, Settings


def render_corpus(shared: Path, out: Path, min_pages: int) -> tuple[list[Path], int]:
    files, pages = [], 0
    for name in list_standards(shared):
        if pages >= min_pages:
            break
        std = load_standard(shared, name)
        if len(std["pages"]) > 120:
            continue
        files.append(render_pdf([p["page_content"] for p in std["pages"]], out / f"{name}.pdf", std["full_name"]))
        pages += len(std["pages"])
    return files, pages


def parse_rate(files: list[Path], parser: Literal["pdfium", "unstructured"]) -> tuple[float, int]:
    began, pages = time.perf_counter(), 0
    for path in files:
        pages += parse_file(path, ParseOptions(PdfOptions(parser=parser, ocr="never"))).page_count
    return pages / (time.perf_counter() - began), pages


def naive_ingest(files: list[Path], settings: Settings, client: OpenSearch, embedder: Embedder,
                 ) -> tuple[float, int]:
    began, chunks = time.perf_counter(), 0
    for path in files:
        parsed = parse_file(path, ParseOptions(PdfOptions(ocr="auto")))
        for chunk in chunk_blocks(parsed.blocks, settings.ingest.chunk_chars, settings.ingest.chunk_overlap):
            vector = embedder.embed_documents([chunk.text])[0]
            body = {"text": chunk.text, "page_number": chunk.page, "doc_id": path.stem, "chunk_index": chunk.index}
            if vector.any():
                body["embedding"] = vector.tolist()
            client.index(index=settings.index.alias, id=f"{path.stem}:{chunk.index}", body=body)
            chunks += 1
    client.indices.refresh(index=settings.index.alias)
    return time.perf_counter() - began, chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--parse-sample-pages", type=int, default=100, help="Pages for the parser comparison.")
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    args = parser.parse_args()
    base = Settings()
    client = build_client(base)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files, pages = render_corpus(args.shared, root, args.pages)
        print(f"corpus: {len(files)} PDFs, {pages} pages rendered from {args.shared / 'construction_ru'}")
        sample, sample_pages = [], 0
        for f in files:
            if sample_pages >= args.parse_sample_pages:
                break
            sample.append(f)
            sample_pages += parse_file(f, ParseOptions(PdfOptions(ocr="never"))).page_count
        pdfium, _ = parse_rate(sample, "pdfium")
        unstructured, _ = parse_rate(sample, "unstructured")
        print(f"parse only, {sample_pages} pages, 1 process: pdfium {pdfium:.1f} pages/s, unstructured fast "
              f"{unstructured:.1f} pages/s, ratio {pdfium / unstructured:.1f}x")
        product = base.model_copy(update={"index": IndexSettings(alias=f"bench-{uuid.uuid4().hex[:8]}")})
        naive = base.model_copy(update={"index": IndexSettings(alias=f"bench-{uuid.uuid4().hex[:8]}")})
        try:
            embedder = build_embedder(base.embedder)
            report = run_ingest(IngestOptions([root]), product, client, embedder, quiet=True)
            t = report.totals()
            print(f"product ingest: {t['wall_s']:.1f}s wall, {t['pages'] / t['wall_s']:.1f} pages/s, "
                  f"{t['chunks'] / t['wall_s']:.1f} chunks/s ({t['chunks']} chunks, {product.ingest.workers} workers); "
                  f"parse {t['parse_s']:.1f}s (worker time), embed {t['embed_s']:.1f}s, index {t['index_s']:.1f}s")
            apply_all(client, naive.index)
            naive_s, naive_chunks = naive_ingest(files, naive, client, embedder)
            print(f"naive loop: {naive_s:.1f}s wall, {pages / naive_s:.1f} pages/s, {naive_chunks / naive_s:.1f} "
                  f"chunks/s, one request per chunk")
            print(f"ratio naive/product wall time: {naive_s / t['wall_s']:.1f}x")
        finally:
            for settings in (product, naive):
                drop_all(client, settings.index)


if __name__ == "__main__":
    main()
