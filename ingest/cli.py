"""``stroidok ingest``: flags are parsed and checked here, the work happens in ``ingest.pipeline``."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn, cast

import typer
from opensearchpy import OpenSearch
from rich.console import Console

from ingest.backfill import BackfillOptions
from ingest.discover import Shard
from ingest.index import load_registry
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions, writes_vectors_later
from ingest.report import compact_pages, print_report
from service.embedders.base import Embedder
from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.errors import Interrupted
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
    access_rules_changed: bool = typer.Option(False, "--access-rules-changed", help="Re-decide every document's "
                                              "access groups by this run's rules when they are not the ones the "
                                              "index was built with (otherwise such a run is refused)."),
    shard: str = typer.Option(None, "--shard", help="K/N: only the K-th of N stable partitions of the files, so "
                              "N machines (same archive path) fill one index at once."),
    vectors: str = typer.Option(None, "--vectors", help="now | later | auto (default: STROIDOK_INGEST_VECTORS, "
                                "auto): later indexes text first, `stroidok embed` adds the vectors."),
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
    try:
        partition = Shard.parse(shard) if shard is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--shard") from None
    mode = vectors or settings.ingest.vectors
    if mode not in ("now", "later", "auto"):
        raise typer.BadParameter("--vectors must be now, later or auto")
    later = writes_vectors_later(mode, settings.embedder.provider)
    options = IngestOptions([Path(p) for p in paths], include, exclude, batch_size, workers, dry_run, force,
                            ocr, pdf_parser, encoding, partition, later,  # type: ignore[arg-type]
                            access_rules_changed)
    client, embedder = build_client(settings), build_embedder(settings.embedder)
    try:
        report = run_ingest(options, settings, client, embedder, quiet=as_json)
    except (Interrupted, KeyboardInterrupt) as exc:
        stopped(exc, "the ingest was stopped ({}); files already reported as indexed are searchable, nothing "
                     "half-written is marked done; run the same command again to finish")
    print_report(report, as_json)
    if later and mode == "auto" and not dry_run:
        backfill_and_report(settings, client, embedder, BackfillOptions(), as_json)
    elif later and not dry_run:
        Console(stderr=True).print("text indexed; vectors are added by `stroidok embed` (search works meanwhile: "
                                   "BM25 finds every chunk)", markup=False, highlight=False)
    if report.failed:
        raise typer.Exit(1)


def stopped(exc: BaseException, message: str) -> NoReturn:
    """Ctrl-C or SIGTERM: say what is kept and exit 128 + signal."""
    signum = exc.details.get("signal", signal.SIGINT) if isinstance(exc, Interrupted) else signal.SIGINT
    Console(stderr=True, soft_wrap=True).print(f"error INTERRUPTED: {message.format(signal.Signals(signum).name)}",
                                               markup=False, highlight=False)
    raise typer.Exit(128 + int(signum)) from None


def backfill_and_report(settings: Settings, client: OpenSearch, embedder: Embedder, options: BackfillOptions,
                        as_json: bool) -> None:
    """Run the vector backfill and print its report; exit 1 when chunks failed."""
    from ingest.backfill import run_backfill

    try:
        report = run_backfill(settings, client, embedder, options, quiet=as_json)
    except (Interrupted, KeyboardInterrupt) as exc:
        stopped(exc, "embedding was stopped ({}); every vector written is kept, `stroidok embed` goes on "
                     "with the chunks still pending")
    data = report.to_dict()
    if as_json:
        out.print_json(json.dumps({"embed": data}, ensure_ascii=False))
    else:
        out.print(report.line(), markup=False, highlight=False)
        for error in data["errors"]:
            out.print(f"failed: {error}", markup=False, highlight=False)
    if report.failed:
        raise typer.Exit(1)


def embed_command(
    ctx: typer.Context,
    workers: int = typer.Option(1, "--workers", min=1, max=64, help="Batches embedded at once (threads). e5: keep "
                                "workers x STROIDOK_EMBEDDER_THREADS at the core count; http: the server's "
                                "parallelism."),
    batch_size: int = typer.Option(32, "--batch-size", min=1, max=4096, help="Chunks per batch."),
    limit: int = typer.Option(None, "--limit", min=1, help="Stop after this many chunks (rerun to go on)."),
    index: str = typer.Option(None, "--index", help="A physical index instead of the alias's (a model switch "
                              "in progress is filled by `stroidok index migrate`)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report on stdout."),
) -> None:
    """Add the vectors of chunks indexed text first (`ingest --vectors later`): resumable, progress with ETA."""
    settings: Settings = ctx.obj
    backfill_and_report(settings, build_client(settings), build_embedder(settings.embedder),
                        BackfillOptions(index=index, workers=workers, batch_size=batch_size, limit=limit), as_json)


def show_status(settings: Settings, as_json: bool) -> None:
    """What the registry says: files and chunks by type, OCR and repaired pages, documents with unread pages,
    last ingest time."""
    entries = [e for e in load_registry(build_client(settings), settings.index).values() if e.get("content_hash")]
    summary = {
        "files": len(entries),
        "chunks": sum(e.get("chunk_count", 0) for e in entries),
        "pages": sum(e.get("page_count", 0) for e in entries),
        "ocr_pages": sum(e.get("ocr_pages", 0) for e in entries),
        "repaired_pages": sum(e.get("repaired_pages") or 0 for e in entries),
        "unread": sorted(({"file_path": e.get("file_path"), "pages": e.get("page_count"),
                           "unread_pages": e["unread_pages"]} for e in entries if e.get("unread_pages")),
                         key=lambda u: str(u["file_path"])),
        "by_type": dict(Counter(e.get("file_type") for e in entries)),
        "roots": sorted({str(e.get("root")) for e in entries}),
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
    if summary["repaired_pages"]:
        out.print(f"{summary['repaired_pages']} pages with a broken text layer repaired", highlight=False)
    unread = cast(list[dict[str, Any]], summary["unread"])
    if unread:
        out.print(f"{len(unread)} documents with unread pages (neither their text layer nor OCR reads as language):",
                  highlight=False)
    for entry in unread:
        out.print(f"  {compact_pages(entry['unread_pages'])} of {entry['pages']} pages  {entry['file_path']}",
                  markup=False, highlight=False)


def titles_command(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report on stdout."),
    show: int = typer.Option(50, "--show", min=0, help="Imperfect titles listed."),
) -> None:
    """Check every indexed document's title: bare designation, split letters, boilerplate, implausible length."""
    from ingest.index import first_chunks
    from ingest.parse.titles import TITLE_PROBLEMS, title_problems

    settings: Settings = ctx.obj
    docs = first_chunks(build_client(settings), settings.index, ["doc_id", "title", "designation"])
    flagged = [(d, problems) for d in docs if (problems := title_problems(d.get("title"), d.get("designation")))]
    counts = Counter(p for _, problems in flagged for p in problems)
    if as_json:
        out.print_json(json.dumps({"documents": len(docs), "imperfect": len(flagged),
                                   "problems": {p: counts[p] for p in TITLE_PROBLEMS},
                                   "titles": [{"id": d["doc_id"], "title": d.get("title"), "problems": problems}
                                              for d, problems in flagged]}, ensure_ascii=False))
        return
    out.print(f"{len(docs)} documents, {len(flagged)} imperfect titles ({len(flagged) / max(1, len(docs)):.1%}): "
              + ", ".join(f"{p} {counts[p]}" for p in TITLE_PROBLEMS), markup=False, highlight=False)
    for d, problems in sorted(flagged, key=lambda t: t[0].get("title") or "")[:show]:
        out.print(f"  {','.join(problems):<24} {d.get('title')}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Entry point (``stroidok.commands``): add ``stroidok ingest``, ``eval``, ``embed`` and ``titles``."""
    app.command("titles")(titles_command)
    app.command("ingest")(ingest_command)
    app.command("embed")(embed_command)
