"""``stroidok eval``: relevance of the shipped ingest and default search on a judged set, side by side."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Console

from service.embedders.factory import build_embedder
from service.engine.gateway import build_client
from service.errors import ConfigError
from service.search.request.contract import OPERATORS, SEARCH_MODES
from service.search.request.schema import default_of

out = Console(soft_wrap=True)


def require_eval_extra() -> None:
    """``stroidok eval`` measures with ir-measures, an optional dependency (the ``eval`` extra)."""
    try:
        import ir_measures  # noqa: F401
    except ImportError as exc:
        raise ConfigError("stroidok eval needs the eval extra: pip install 'stroidok[eval]' (make setup "
                          "installs it with the dev tools)") from exc


def eval_command(
    ctx: typer.Context,
    corpus: Path = typer.Option(None, "--corpus", help="BEIR corpus.jsonl (passages)."),
    queries: Path = typer.Option(None, "--queries", help="BEIR queries.jsonl."),
    citations: Path = typer.Option(None, "--citations", help="Score check_citations and get_document(designation, "
                                   "clause) on the index --index names (built by `stroidok ingest`): a citation set "
                                   "(evaluation/sets/citations/citations.jsonl) or a judged clause set, read as "
                                   "citations of its clauses with their quotes (needs --documents)."),
    qrels: Path = typer.Option(None, "--qrels", help="BEIR qrels.tsv (default with a clause set as --answers: "
                                                    "each question's judged document)."),
    answers: Path = typer.Option(None, "--answers", help="Judged answers for answer@1/@5: a clause set (JSONL "
                                 "with quote, doc, clause, page, optional also pairs: a passage answers by the quote "
                                 "or as the doc's passage labelled the clause; "
                                 "evaluation/sets/construction/clauses.jsonl) or a SQuAD-style JSON (TyDi, XQuAD)."),
    phrasings: Path = typer.Option(None, "--phrasings", help="JSONL of phrasings per question: "
                                   "{\"_id\", \"queries\": [...]} adds them beside the user's words "
                                   "(evaluation/sets/construction/phrasings.jsonl); with a \"query\" the agent's own "
                                   "query replaces the user's words: as the agent asks (the dev clause set's)."),
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
    """Relevance of the product on a BEIR-format set: nDCG@10, Recall@5/10, MRR@10, P@5, success@5, latency.

    A call the engine fails (ENGINE_TIMEOUT, ENGINE_BUSY …) counts as a miss and in ``failed_calls``; a run
    whose every call fails stops with that error's code."""
    if citations is not None:
        citation_eval(ctx.obj, citations, documents, index, as_json)
        return
    if queries is None:
        raise typer.BadParameter("--queries is needed (or --citations)")
    require_eval_extra()
    from evaluation.answers import load_answers, qrels_of
    from evaluation.evaluate import (
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
                 f"{settings.embedder.provider}, "
                 f"BM25/dense {settings.index.bm25_weight}/{settings.index.dense_weight}, "
                 f"operator {(operator or default_of('operator')).upper()}; index built and searched in {seconds:.0f}s")
        out.print(format_table(results, title) + "\n", markup=False, highlight=False)


def citation_eval(base: object, path: Path, documents: Path | None, index: str | None, as_json: bool) -> None:
    """Citation checks scored per kind through the service's defaults on an index the ingest built."""
    from rich.progress import Progress

    from evaluation.citations import evaluate_citations, format_scores, load_citations, scores_json
    from evaluation.evaluate import eval_settings
    from evaluation.sets.citations.make_citations import judged_citations, load
    from service.caller.principal import stdio_principal
    from service.search.service import SearchService

    if index is None:
        raise typer.BadParameter("--citations needs --index: the alias of an index `stroidok ingest` built")
    rows = load_citations(path)
    if rows and "verdict" not in rows[0]:
        if documents is None:
            raise typer.BadParameter("a judged clause set as --citations needs --documents (the page JSON folder)")
        rows = judged_citations(rows, load(documents))
    settings = eval_settings(base, index)  # type: ignore[arg-type]
    service = SearchService(settings, build_client(settings), None)
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("citations", total=len(rows))
        scores = evaluate_citations(rows, service, stdio_principal(settings.server),
                                    lambda: progress.advance(task))
    if as_json:
        out.print_json(json.dumps(scores_json(scores), ensure_ascii=False))
    else:
        out.print(format_scores(scores), markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``stroidok eval`` (entry point group ``stroidok.commands``)."""
    app.command("eval")(eval_command)
