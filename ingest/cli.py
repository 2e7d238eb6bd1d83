"""``stroidok ingest``: flags are parsed and checked here, the work happens in ``ingest.pipeline``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console

from ingest.index import load_registry
from ingest.pipeline import IngestOptions, run_ingest
from ingest.report import print_report
from service.embedders.factory import build_embedder
from service.opensearch import build_client
from service.settings import Settings

out = Console(soft_wrap=True)


def ingest_command(
    ctx: typer.Context,
    paths: list[str] = typer.Argument(..., help="Folders or files to ingest; `status` shows what is indexed."),
    include: list[str] = typer.Option([], "--include", help="Glob on the relative path or name (repeatable)."),
    exclude: list[str] = typer.Option([], "--exclude", help="Glob to leave out (repeatable)."),
    batch_size: int = typer.Option(None, "--batch-size", min=1, max=10000, help="Chunks per bulk request."),
    workers: int = typer.Option(None, "--workers", min=1, max=64, help="Parse processes."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would happen; change nothing."),
    force: bool = typer.Option(False, "--force", help="Re-index unchanged files too."),
    ocr: str = typer.Option("auto", "--ocr", help="auto | never | always"),
    pdf_parser: str = typer.Option(None, "--pdf-parser", help="pdfium (default) | unstructured"),
    encoding: str = typer.Option(None, "--encoding", help="Text encoding of TXT/CSV files when known."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report on stdout."),
) -> None:
    """Ingest folders of PDF/DOCX/XLSX/TXT/... into the index; report every file; exit 1 if any failed."""
    settings: Settings = ctx.obj
    if paths == ["status"] and not Path("status").exists():
        show_status(settings, as_json)
        return
    if ocr not in ("auto", "never", "always"):
        raise typer.BadParameter("--ocr must be auto, never or always")
    if pdf_parser not in (None, "pdfium", "unstructured"):
        raise typer.BadParameter("--pdf-parser must be pdfium or unstructured")
    options = IngestOptions([Path(p) for p in paths], include, exclude, batch_size, workers, dry_run, force,
                            ocr, pdf_parser, encoding)  # type: ignore[arg-type]
    report = run_ingest(options, settings, build_client(settings), build_embedder(settings.embedder),
                        quiet=as_json)
    print_report(report, as_json)
    if report.failed:
        raise typer.Exit(1)


def show_status(settings: Settings, as_json: bool) -> None:
    """What the registry says: files and chunks by type, OCR pages, last ingest time."""
    entries = list(load_registry(build_client(settings), settings.index).values())
    summary = {
        "files": len(entries),
        "chunks": sum(e.get("chunk_count", 0) for e in entries),
        "pages": sum(e.get("page_count", 0) for e in entries),
        "ocr_pages": sum(e.get("ocr_pages", 0) for e in entries),
        "by_type": dict(Counter(e.get("file_type") for e in entries)),
        "roots": sorted({e.get("root") for e in entries}),
        "last_indexed_at": max((e.get("indexed_at", "") for e in entries), default=None),
    }
    if as_json:
        out.print_json(json.dumps(summary, ensure_ascii=False))
        return
    out.print(f"{summary['files']} files, {summary['chunks']} chunks, {summary['pages']} pages "
              f"({summary['ocr_pages']} OCR), last ingest {summary['last_indexed_at']}", highlight=False)
    out.print("by type: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["by_type"].items())), highlight=False)
    for root in summary["roots"]:
        out.print(f"root: {root}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Entry point (``stroidok.commands``): add ``stroidok ingest`` to the main command."""
    app.command("ingest")(ingest_command)
