"""``stroidok eval``: relevance of the product's own indexing and search, measured on BEIR-format sets.

A throwaway index is built through the product's index template and indexing path (chunking, the
configured embedder with its SIF fit, bulk writes); every query runs through ``SearchService`` exactly
as the MCP tool runs it; metrics come from ``ir_measures``. Results are documents (the service groups
chunks per document), so a corpus of passages is judged per passage and a corpus of whole documents
(``--documents DIR`` of page-level JSON) per document.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ir_measures
from ir_measures import RR, P, R, Success, nDCG
from loguru import logger
from opensearchpy import OpenSearch

from evaluation.answers import AnswerTally, Judged, Shown, answers, load_answers, qrels_of
from ingest.backfill import run_backfill
from ingest.chunk import chunk_blocks
from ingest.discover import SourceFile
from ingest.index import PreparedDocument
from ingest.parse.model import Block, ParsedDocument
from ingest.parse.repair import DocumentWords
from ingest.parse.text import page_blocks
from ingest.pipeline import index_prepared
from service.caller.principal import Principal
from service.embedders.base import Embedder
from service.engine.index_admin.apply import apply_all, drop_all
from service.errors import SearchError
from service.search.answer.budget import response_size
from service.search.answer.models import SearchResponse
from service.search.request.schema import eval_request
from service.search.service import SearchService
from service.settings import IndexSettings, Settings

MEASURES = [nDCG @ 10, R @ 5, R @ 10, RR @ 10, P @ 5, Success @ 5]
MEASURE_NAMES = {"nDCG@10": "nDCG@10", "R@5": "Recall@5", "R@10": "Recall@10", "RR@10": "MRR@10", "P@5": "P@5",
                 "Success@5": "success@5"}


@dataclass
class EvalDocument:
    """One retrievable unit: a passage (one page) or a whole document (many pages)."""

    id: str
    title: str
    pages: list[str]


@dataclass
class EvalSet:
    documents: list[EvalDocument]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    answers: dict[str, Judged] = field(default_factory=dict)
    #: further phrasings of a question, sent as the request's ``queries`` (what an agent adds in its own words)
    phrasings: dict[str, Phrasing] = field(default_factory=dict)


@dataclass
class ModeResult:
    mode: str
    metrics: dict[str, float]
    latency_p50_ms: float
    latency_p95_ms: float
    routes: dict[str, int] = field(default_factory=dict)
    answer_metrics: dict[str, float] = field(default_factory=dict)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@dataclass(frozen=True)
class Phrasing:
    """How an agent asks one question: its own ``query`` (None: the user's words stay the query) and the
    further phrasings it sends as ``queries``."""

    query: str | None
    queries: tuple[str, ...]


def row_id(row: dict[str, Any]) -> str:
    """A question's id in a JSONL row: ``_id`` (BEIR, ours) or ``id`` (the shared dev clause set)."""
    return str(row.get("_id", row.get("id")))


def load_phrasings(path: Path) -> dict[str, Phrasing]:
    """Phrasings per question: JSONL lines ``{"_id": …, "queries": [...]}`` (further phrasings beside the
    user's words) or ``{"id": …, "query": …, "queries": [...]}`` (the agent's own query: as the agent asks)."""
    return {row_id(row): Phrasing(str(row["query"]) if row.get("query") else None,
                                  tuple(str(q) for q in row.get("queries", []))) for row in read_jsonl(path)}


def phrased_request(question: str, phrasing: Phrasing | None, **overrides: Any) -> dict[str, Any]:
    """A default call's arguments as the question is asked: the agent's own query and its further phrasings
    (at most five, each within the contract's 500 characters) where given, else the user's words."""
    query = (phrasing.query if phrasing else None) or question
    further = [q[:500] for q in (phrasing.queries if phrasing else ()) if q.strip() and q != query][:5]
    return eval_request(query, **({"queries": further} if further else {}), **overrides)


def load_questions(path: Path) -> dict[str, str]:
    """Question texts by id: BEIR ``{"_id", "text"}`` or the dev clause set's ``{"id", "query"}``."""
    return {row_id(row): str(row.get("text") or row["query"]) for row in read_jsonl(path)}


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            query_id, doc_id, score = line.split("\t")[:3]
            qrels.setdefault(query_id, {})[doc_id] = int(float(score))
    return qrels


def load_beir(corpus: Path, queries: Path, qrels: Path) -> EvalSet:
    documents = [EvalDocument(str(d["_id"]), d.get("title") or "", [d["text"]]) for d in read_jsonl(corpus)]
    judged = load_qrels(qrels)
    asked = {q: text for q, text in load_questions(queries).items() if q in judged}
    return EvalSet(documents, asked, {q: judged[q] for q in asked})


def load_page_documents(directory: Path) -> list[EvalDocument]:
    """The construction corpus: one JSON per normative document, pages under ``pages``."""
    documents = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        documents.append(EvalDocument(path.stem, data.get("full_name") or path.stem,
                                      [p.get("page_content") or "" for p in data.get("pages", [])]))
    return documents


def distractor_passages(directory: Path, count: int, seed: int) -> list[EvalDocument]:
    """``count`` construction pages drawn with a fixed seed, each a passage of its own (never relevant)."""
    pages = [(doc.id, i, text) for doc in load_page_documents(directory) for i, text in enumerate(doc.pages)
             if len(text.strip()) > 200]
    chosen = random.Random(seed).sample(pages, min(count, len(pages)))
    return [EvalDocument(f"distractor:{doc}:{page}", doc, [text]) for doc, page, text in chosen]


def prepared(doc: EvalDocument, settings: Settings) -> PreparedDocument:
    """An eval document in the shape the ingest path writes (a synthetic source path gives its doc_id)."""
    now = datetime.now(UTC)
    source = SourceFile(Path("/eval") / file_name(doc.id), Path("/eval"), sum(map(len, doc.pages)), now, now)
    words = DocumentWords(doc.pages)
    blocks = [b for number, text in enumerate(doc.pages, 1) for b in page_blocks(text, number, words=words)] or \
        [Block(doc.title, 1)]
    parsed = ParsedDocument(blocks, len(doc.pages), "eval", doc.title or None)
    chunks = chunk_blocks(blocks, settings.ingest.chunk_chars, settings.ingest.chunk_overlap)
    return PreparedDocument(source, doc.id, parsed, chunks, ["public"])


def build_index(evalset: EvalSet, settings: Settings, client: OpenSearch, embedder: Embedder) -> dict[str, str]:
    """Index every document through the ingest's write path (``index_prepared``); returns engine doc_id → eval
    id."""
    documents = [prepared(doc, settings) for doc in evalset.documents]
    report = index_prepared(documents, settings, client, embedder)
    failed = [o for o in report.outcomes if o.status == "failed"]
    if failed:
        raise RuntimeError(f"{len(failed)} eval documents failed to index: {failed[0].reason}")
    return {item.doc_id: doc.id for item, doc in zip(documents, evalset.documents, strict=True)}


def run_mode(service: SearchService, evalset: EvalSet, ids: dict[str, str], mode: str,
             operator: str | None = None) -> ModeResult:
    """Every query as a default ``search_documents`` call in ``mode`` (and ``operator`` when given), with the
    engine's and this process's CPU per call; then every judged question no passage of the first five
    documents answered is asked again inside the first document (``inside_first``: within two calls)."""
    principal = Principal.of("eval", [])
    run: list[ir_measures.ScoredDoc] = []
    latencies: list[float] = []
    routes: dict[str, int] = {}
    tally = AnswerTally()
    missed: list[tuple[str, SearchResponse]] = []
    overrides: dict[str, Any] = {"search_mode": mode, **({"operator": operator} if operator else {})}
    engine_before, server_before = engine_cpu_ms(service.client), time.process_time()
    failed: list[str] = []
    for query_id, text in evalset.queries.items():
        began = time.perf_counter()
        response = asked(service, phrased_request(text, evalset.phrasings.get(query_id), **overrides), principal,
                         query_id)
        if response is None:
            failed.append(query_id)
            tally.questions += query_id in evalset.answers  # unanswered; no answer's size to count
            continue
        latencies.append((time.perf_counter() - began) * 1000)
        routes[response.meta.route_used] = routes.get(response.meta.route_used, 0) + 1
        run += [ir_measures.ScoredDoc(query_id, ids[r.id], 10.0 - rank) for rank, r in enumerate(response.results)]
        if query_id in evalset.answers and not tally.add(shown_passages(response, ids), evalset.answers[query_id],
                                                         response_size(response)) and response.results:
            missed.append((query_id, response))
    calls = max(1, len(evalset.queries))
    cost = {"engine_cpu_ms_per_call": round((engine_cpu_ms(service.client) - engine_before) / calls, 1),
            "server_cpu_ms_per_call": round((time.process_time() - server_before) * 1000 / calls, 1),
            "failed_calls": len(failed)}
    if failed and len(failed) == len(evalset.queries):
        raise SearchError(f"every call of the {mode} run failed (the first: {failed[0]})")
    for query_id, response in missed:
        inside = asked(service, phrased_request(evalset.queries[query_id], evalset.phrasings.get(query_id),
                                                **overrides, **inside_first(response)), principal, query_id)
        cost["failed_calls"] += inside is None
        tally.second += inside is not None and any(answers(s, evalset.answers[query_id])
                                                   for s in shown_passages(inside, ids) if s.rank == 0)
    qrels = [ir_measures.Qrel(q, d, s) for q, docs in evalset.qrels.items() for d, s in docs.items()]
    aggregate = ir_measures.calc_aggregate(MEASURES, qrels, run)
    metrics = {MEASURE_NAMES[str(m)]: round(float(v), 4) for m, v in aggregate.items()}
    latencies.sort()
    return ModeResult(mode, metrics, round(statistics.median(latencies), 1),
                      round(latencies[int(0.95 * (len(latencies) - 1))], 1), routes,
                      (tally.metrics() | cost) if tally.questions else cost)


def asked(service: SearchService, request: dict[str, Any], principal: Principal, query_id: str
          ) -> SearchResponse | None:
    """A call's answer; None where the engine failed it (a timeout, a busy queue): one such call is a miss the
    report counts (``failed_calls``), not a lost run."""
    try:
        return service.search(request, principal)
    except SearchError as error:
        logger.warning("{}: {} ({})", query_id, error.code, error)
        return None


def engine_cpu_ms(client: OpenSearch) -> float:
    """The engine's CPU so far (ms, summed over its nodes)."""
    nodes = client.nodes.stats(metric="process")["nodes"].values()
    return sum(float(n["process"]["cpu"]["total_in_millis"]) for n in nodes)


def inside_first(response: SearchResponse) -> dict[str, Any]:
    """The second call an agent makes when no passage answered: the same question inside the first document,
    with more passages (as the tool's description advises)."""
    return {"path": [response.results[0].file_path], "max_chunks": 10}


def shown_passages(response: SearchResponse, ids: dict[str, str]) -> list[Shown]:
    """The passages of an answer in reading order: each result's chunks, results in rank order, each with its
    document's eval id (``ids``: engine doc_id → eval id)."""
    return [Shown(rank, c.text, c.clause, c.clause_end, c.page_number, c.page_end, ids.get(r.id))
            for rank, r in enumerate(response.results) for c in r.context_chunks]


def file_name(eval_id: str) -> str:
    """The file an eval document is written to (its id, made a safe file name)."""
    return eval_id.replace("/", "_").replace("\0", "") + ".txt"


def ids_from_registry(client: OpenSearch, settings: Settings, names: dict[str, str]) -> dict[str, str]:
    """Engine doc_id → eval id, through each indexed file's name (``names``: file name → eval id)."""
    from ingest.index import load_registry

    registry = load_registry(client, settings.index)
    return {doc_id: names[Path(entry["file_path"]).name] for doc_id, entry in registry.items()
            if Path(entry["file_path"]).name in names}


def ingest_as_files(evalset: EvalSet, settings: Settings, client: OpenSearch, embedder: Embedder,
                    directory: Path) -> dict[str, str]:
    """Write each document as a UTF-8 TXT file (pages joined by form feeds, as ``pdftotext`` writes them)
    and ingest the folder exactly as ``stroidok ingest`` does: parser, repair, titles, chunking, vectors
    (for a slow embedder, text first and then the backfill, as the ingest command's default does)."""
    from ingest.pipeline import run_ingest
    from ingest.plan import IngestOptions, writes_vectors_later

    names = {file_name(doc.id): doc.id for doc in evalset.documents}
    for doc in evalset.documents:
        (directory / file_name(doc.id)).write_text("\f".join(doc.pages), encoding="utf-8")
    later = writes_vectors_later("auto", settings.embedder.provider)
    report = run_ingest(IngestOptions([directory], vectors_later=later), settings, client, embedder, quiet=True)
    failed = [o for o in report.outcomes if o.status == "failed"]
    if failed:
        raise RuntimeError(f"{len(failed)} eval documents failed to ingest: {failed[0].reason}")
    if later:
        filled = run_backfill(settings, client, embedder, quiet=False)
        logger.info("vectors backfilled: {}", filled.to_dict())
    return ids_from_registry(client, settings, names)


def reuse_index(evalset: EvalSet, settings: Settings, client: OpenSearch) -> dict[str, str] | None:
    """The id map of an index a previous ``--keep`` run built, with pipelines re-applied from the current
    settings; None when there is nothing to reuse."""
    if not client.indices.exists_alias(name=settings.index.alias):
        return None
    apply_all(client, settings.index)
    names = {file_name(doc.id): doc.id for doc in evalset.documents}
    return ids_from_registry(client, settings, names) or None


def evaluate(evalset: EvalSet, settings: Settings, client: OpenSearch, embedder: Embedder, modes: list[str],
             keep_index: bool = False, operator: str | None = None, reuse: bool = False,
             as_files: bool = False) -> list[ModeResult]:
    """Build a throwaway index (``settings.index.alias``), run every mode, drop the index unless kept.
    ``as_files``: documents are written as TXT files and ingested through ``stroidok ingest``'s path
    (whole documents); otherwise passages are indexed one chunk set each through the same chunker and
    bulk writer. With ``reuse``, an index kept by an earlier run with the same alias is searched again
    (for sweeps of query-time settings such as fusion weights)."""
    try:
        ids = reuse_index(evalset, settings, client) if reuse else None
        if reuse and not ids:
            logger.warning("--reuse: no kept index under the alias {} (several embedders suffix it: {}-e5 …); "
                           "building it", settings.index.alias, settings.index.alias)
        if not ids and as_files:
            with tempfile.TemporaryDirectory(prefix="stroidok-eval-") as directory:
                ids = ingest_as_files(evalset, settings, client, embedder, Path(directory))
        elif not ids:
            ids = build_index(evalset, settings, client, embedder)
        service = SearchService(settings, client, embedder)
        return [run_mode(service, evalset, ids, mode, operator) for mode in modes]
    finally:
        if not keep_index:
            drop_all(client, settings.index)


def eval_settings(base: Settings, alias: str | None, provider: str | None = None, suffix: bool = False) -> Settings:
    """Product settings for an eval run: own alias (suffixed by the embedder when several are compared),
    the given embedder provider, no cache, no rate limit, no query log."""
    alias = alias or f"eval-{uuid.uuid4().hex[:8]}"
    embedder = base.embedder.model_copy(update={"provider": provider}) if provider else base.embedder
    index = base.index.model_dump(exclude_unset=True) | {"alias": f"{alias}-{provider}" if suffix else alias}
    settings = Settings.model_validate({**base.model_dump(), "embedder": embedder.model_dump(),
                                        "index": IndexSettings.model_validate(index)})
    settings.search.cache_ttl_s = 0
    settings.search.rate_limit = "1000000/minute"
    settings.search.log_queries = False
    return settings


def format_table(results: list[ModeResult], title: str) -> str:
    names = list(MEASURE_NAMES.values())
    header = f"{'mode':<10}" + "".join(f"{n:>11}" for n in names) + f"{'p50 ms':>9}{'p95 ms':>9}"
    rows = [f"{r.mode:<10}" + "".join(f"{r.metrics[n]:>11.4f}" for n in names)
            + f"{r.latency_p50_ms:>9.1f}{r.latency_p95_ms:>9.1f}" for r in results]
    answered = [r for r in results if r.answer_metrics]
    if answered:
        keys = list(answered[0].answer_metrics)
        rows += ["", f"{'answers':<10}" + "".join(f"{k:>26}" for k in keys)]
        rows += [f"{r.mode:<10}" + "".join(f"{r.answer_metrics[k]:>26.4g}" for k in keys) for r in answered]
    return "\n".join([title, header, *rows])


@dataclass(frozen=True)
class KeptClauseSet:
    """A clause set's questions on an index a previous run kept: the service searching it, the engine's doc_id →
    eval id map, the questions and their judged answers (benchmarks that ask it question by question)."""

    service: SearchService
    ids: dict[str, str]
    questions: dict[str, str]
    answers: dict[str, Judged]


def open_kept_clause_set(alias: str, documents: Path, answers_path: Path, embedder: Embedder,
                         provider: str | None = None) -> KeptClauseSet:
    """The clause set of ``answers_path`` on the kept index ``alias`` built from ``documents``."""
    from service.engine.gateway import build_client
    from service.settings import Settings

    settings = eval_settings(Settings(), alias, provider)
    client = build_client(settings)
    answers = load_answers(answers_path)
    questions = load_questions(answers_path)
    ids = reuse_index(EvalSet(load_page_documents(documents), questions, qrels_of(answers), answers), settings, client)
    if not ids:
        raise SystemExit(f"no kept eval index under {alias}")
    return KeptClauseSet(SearchService(settings, client, embedder), ids, questions, answers)
