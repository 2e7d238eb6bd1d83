"""``stroidok ingest``: flags are parsed and checked here, the work happens in ``ingest.pipeline``."""

from __future__ import annotations

import json
import signal
import time
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
from ingest.plan import IngestOptions
from ingest.report import compact_pages, print_report
from ingest.signals import Interrupted
from service.embedders.base import Embedder
from service.embedders.capabilities import capabilities_of
from service.embedders.factory import build_embedder
from service.opensearch import build_client
from service.query.contract import OPERATORS, SEARCH_MODES, default_of
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
    later = mode == "later" or (mode == "auto" and capabilities_of(settings.embedder.provider).text_first)
    options = IngestOptions([Path(p) for p in paths], include, exclude, batch_size, workers, dry_run, force,
                            ocr, pdf_parser, encoding, partition, later)  # type: ignore[arg-type]
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


def eval_command(
    ctx: typer.Context,
    corpus: Path = typer.Option(None, "--corpus", help="BEIR corpus.jsonl (passages)."),
    queries: Path = typer.Option(..., "--queries", help="BEIR queries.jsonl."),
    qrels: Path = typer.Option(None, "--qrels", help="BEIR qrels.tsv (default with a clause set as --answers: "
                                                    "each question's judged document)."),
    answers: Path = typer.Option(None, "--answers", help="Judged answers for answer@1/@5: a clause set (JSONL "
                                 "with quote, doc, clause, page: eval/construction/clauses.jsonl) or a SQuAD-style "
                                 "JSON (TyDi, XQuAD)."),
    phrasings: Path = typer.Option(None, "--phrasings", help="JSONL of phrasings per question: "
                                   "{\"_id\", \"queries\": [...]} adds them beside the user's words "
                                   "(eval/construction/phrasings.jsonl); with a \"query\" the agent's own query "
                                   "replaces the user's words: as the agent asks (the dev clause set's)."),
    documents: Path = typer.Option(None, "--documents", help="Folder of page-level JSON documents "
                                                            "(document-level judging) instead of --corpus."),
    distractors: int = typer.Option(0, "--distractors", help="Add N construction pages as distractors."),
    distractor_dir: Path = typer.Option(None, "--distractor-dir", help="Page-level JSON folder for distractors."),
    seed: int = typer.Option(13, "--seed"),
    mode: str = typer.Option("all", "--mode", help=" | ".join((*SEARCH_MODES, "all"))),
    operator: str = typer.Option(None, "--operator", help=" | ".join(OPERATORS) + " (default: the search "
                                 "default, so the figures are those of a default call)"),
    index: str = typer.Option(None, "--index", help="Alias of the throwaway index (default: random; with "
                              "several embedders, suffixed by each)."),
    embedders: str = typer.Option(None, "--embedder", help="Comma-separated providers to compare side by side, "
                                  "e.g. navec,e5,http (default: the configured one); each builds its own index."),
    keep: bool = typer.Option(False, "--keep", help="Keep the index afterwards."),
    reuse: bool = typer.Option(False, "--reuse", help="Search an index kept by an earlier --keep run "
                                                      "(query-time sweeps); implies --keep."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Relevance of the product on a BEIR-format set: nDCG@10, Recall@5/10, MRR@10, P@5, success@5, latency."""
    from ingest.answers import load_answers, qrels_of
    from ingest.evaluate import (
        EvalSet,
        distractor_passages,
        eval_settings,
        evaluate,
        format_table,
        load_beir,
        load_page_documents,
        load_phrasings,
        load_qrels,
        load_questions,
    )

    if (corpus is None) == (documents is None):
        raise typer.BadParameter("give exactly one of --corpus or --documents")
    if mode not in (*SEARCH_MODES, "all"):
        raise typer.BadParameter(f"--mode must be one of {', '.join(SEARCH_MODES)} or all")
    if operator is not None and operator not in OPERATORS:
        raise typer.BadParameter(f"--operator must be one of {', '.join(OPERATORS)}")
    if distractors and distractor_dir is None:
        raise typer.BadParameter("--distractors needs --distractor-dir")
    judged_answers = load_answers(answers) if answers is not None else {}
    if qrels is None and not any(j.document for j in judged_answers.values()):
        raise typer.BadParameter("--qrels is needed unless --answers is a clause set naming each document")
    if corpus is not None:
        evalset = load_beir(corpus, queries, qrels)
    else:
        judged = load_qrels(qrels) if qrels is not None else qrels_of(judged_answers)
        asked = {q: text for q, text in load_questions(queries).items() if q in judged}
        evalset = EvalSet(load_page_documents(documents), asked, {q: judged[q] for q in asked})
    evalset.answers = {q: a for q, a in judged_answers.items() if q in evalset.queries}
    if phrasings is not None:
        evalset.phrasings = {q: p for q, p in load_phrasings(phrasings).items() if q in evalset.queries}
    if distractors:
        evalset.documents += distractor_passages(distractor_dir, distractors, seed)
    modes = list(SEARCH_MODES) if mode == "all" else [mode]
    providers = [p.strip() for p in embedders.split(",") if p.strip()] if embedders else [None]
    table = []
    for provider in providers:
        settings = eval_settings(ctx.obj, index, provider, suffix=len(providers) > 1)
        began = time.perf_counter()
        results = evaluate(evalset, settings, build_client(settings), build_embedder(settings.embedder), modes,
                           keep or reuse, operator.upper() if operator else None, reuse,
                           as_files=documents is not None)
        table.append((settings, results, time.perf_counter() - began))
    if as_json:
        from dataclasses import asdict

        out.print_json(json.dumps([{"embedder": s.embedder.provider, "seconds": round(t, 1),
                                    "results": [asdict(r) for r in results]} for s, results, t in table]))
        return
    for settings, results, seconds in table:
        title = (f"{len(evalset.documents)} documents, {len(evalset.queries)} queries, embedder "
                 f"{settings.embedder.provider}, BM25/dense {settings.index.bm25_weight}/{settings.index.dense_weight}, "
                 f"operator {(operator or default_of('operator')).upper()}; index built and searched in {seconds:.0f}s")
        out.print(format_table(results, title) + "\n", markup=False, highlight=False)


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
    app.command("eval")(eval_command)
    app.command("embed")(embed_command)
