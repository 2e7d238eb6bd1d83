"""The ``stroidok`` command. Subcommands parse flags and delegate; they hold no logic.

Logs go to stderr (stdout is for results, and for the MCP protocol under ``serve``).
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer
from loguru import logger
from rich.console import Console
from rich.table import Table

from service.engine.gateway import build_client
from service.engine.index_admin.apply import apply_all, index_status
from service.engine.index_admin.maintenance import EmbedderSwitch, migrate, optimize
from service.engine.launcher.process import EngineCluster, EngineProcess, log_tail
from service.engine.launcher.status import read_status
from service.errors import InvalidQuery, StroidokError
from service.files import write_replacing
from service.search.request.schema import SHORT_FLAGS, cli_flag, default_of, parameter_schemas, provided
from service.settings import Settings, load_settings

app = typer.Typer(
    help="StroiDok search: Russian construction documents on OpenSearch.", no_args_is_help=True,
    pretty_exceptions_enable=False,
)
engine_app = typer.Typer(help="The managed local OpenSearch node.", no_args_is_help=True)
index_app = typer.Typer(help="The chunk index, its template and search pipelines.", no_args_is_help=True)
app.add_typer(engine_app, name="engine")
app.add_typer(index_app, name="index")

out = Console()


class State:
    settings: Settings


state = State()


@app.callback()
def _root(ctx: typer.Context, verbose: bool = typer.Option(False, "--verbose", "-v",
                                                           help="Debug logging on stderr.")) -> None:
    logger.remove()
    logger.add(sys.stderr, level="DEBUG" if verbose else "INFO", format="{time:HH:mm:ss} {level:<7} {message}")
    if verbose:
        os.environ["STROIDOK_VERBOSE"] = "1"  # parse workers show their libraries' warnings too
    state.settings = load_settings()
    ctx.obj = state.settings


@engine_app.command("install")
def engine_install() -> None:
    """Find Java 21+, download and assemble OpenSearch with k-NN and neural-search (cached)."""
    jdk, install_dir = EngineProcess(state.settings.engine).install()
    out.print(f"OpenSearch {state.settings.engine.version} ready in {install_dir} (Java {jdk.major} at {jdk.home})")


@engine_app.command("up")
def engine_up(nodes: int = typer.Option(None, "--nodes", min=1, max=9, help="A local cluster of this many nodes "
                                        "on consecutive ports (replicas on other nodes: it survives losing one).")
              ) -> None:
    """Start the node (or the cluster) on loopback (idempotent) and wait until it serves every shard."""
    engine = state.settings.engine
    count = nodes or engine.nodes
    if count > 1:
        results = EngineCluster(engine.model_copy(update={"nodes": count})).up()
        for result in results:
            verb = "started" if result.started else "already running"
            out.print(f"OpenSearch node {verb} at {result.url} (pid {result.pid})")
        out.print(f"cluster of {count} nodes green after {results[0].seconds:.1f}s; clients use every node "
                  f"(OPENSEARCH_URL={','.join(r.url for r in results)})")
        return
    result = EngineProcess(engine).up()
    verb = "started" if result.started else "already running"
    out.print(f"OpenSearch {verb} at {result.url} (pid {result.pid}), {result.status} after {result.seconds:.1f}s")


@engine_app.command("down")
def engine_down() -> None:
    """Stop the node or cluster this tool started (never another one)."""
    engine = state.settings.engine
    cluster = EngineCluster.recorded(engine)
    pids = cluster.down() if cluster else []
    if (pid := EngineProcess(engine).down()) is not None:
        pids.append(pid)
    if not pids:
        out.print("no managed OpenSearch node was running")
        return
    out.print(f"OpenSearch (pid{'s' if len(pids) > 1 else ''} {', '.join(map(str, pids))}) stopped")


@engine_app.command("status")
def engine_status(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Version, plugins, health, heap, indexes and doc counts of the configured node."""
    settings = state.settings
    status = read_status(build_client(settings), settings.opensearch_url, settings.search.timeout_s)
    if as_json:
        out.print_json(json.dumps({**asdict(status), "disk": {**asdict(status.disk), "summary": status.disk.summary}}))
        return
    out.print(f"[bold]{status.url}[/] OpenSearch {status.version}, cluster {status.cluster_status}, "
              f"heap {status.heap_used_mb}/{status.heap_max_mb} MB")
    nodes = Table("node", "address", "roles", "heap", "manager")
    for node in status.nodes:
        nodes.add_row(node.name, node.address, node.roles, f"{node.heap_percent}%", "*" if node.manager else "")
    out.print(nodes)
    out.print("plugins: " + ", ".join(status.plugins))
    out.print(status.disk.summary)
    out.print(f"searches running longer than {settings.search.timeout_s:g} s: {len(status.long_searches) or 'none'}")
    if status.long_searches:
        running = Table("task", "running", "opaque id", "cancellable", "request")
        for search in status.long_searches:
            running.add_row(search.task, f"{search.running_s:.0f} s", search.opaque_id or "", str(search.cancellable),
                            search.description[:120])
        out.print(running)
    table = Table("index", "health", "docs", "size")
    for index in status.indexes:
        table.add_row(index.name, index.health, str(index.docs), index.size)
    out.print(table)


@engine_app.command("logs")
def engine_logs(lines: int = typer.Option(50, "--lines", "-n", min=1, max=10000)) -> None:
    """The last lines of the managed node's console log."""
    for line in log_tail(EngineProcess(state.settings.engine).paths, lines):
        out.print(line, markup=False, highlight=False)


@index_app.command("init")
def index_init() -> None:
    """Apply the index template, search pipelines and aliased index (idempotent)."""
    changes = apply_all(build_client(state.settings), state.settings.index)
    for change in changes:
        out.print(f"{change.kind:<16} {change.name:<40} {change.action}")


#: list parameters whose values are choices (never contain commas), so "pdf,docx" means two
#: the contract's parameters and their published schemas, read once
PARAMETERS = parameter_schemas()
SPLIT_AT_COMMAS = frozenset(name for name, schema in PARAMETERS.items() if schema.get("items", {}).get("enum"))


def contract_option(name: str, schema: dict[str, Any]) -> inspect.Parameter:
    """A CLI option for one contract parameter. Values stay text: the service validates them, so a bad
    value is the same ``INVALID_QUERY`` here as over MCP."""
    flags = [cli_flag(name), *([SHORT_FLAGS[name]] if name in SHORT_FLAGS else [])]
    enum = schema.get("enum") or schema.get("items", {}).get("enum")
    help_text = schema.get("description", "") + (f" One of: {', '.join(enum)}." if enum else "")
    if name == "query":
        return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str,
                                 default=typer.Argument(..., help=help_text))
    if schema.get("type") == "boolean":
        flags = [f"{flags[0]}/--no-{flags[0][2:]}"]
        option = typer.Option(default_of(name), *flags, help=help_text)
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=option)
    if schema.get("type") == "array":
        option = typer.Option(None, *flags, help=help_text + " Repeat the option" + (
            ", or separate values with commas." if enum else " for each value."))
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=list[str] | None, default=option)
    if name == "date_range":
        help_text += " On the command line: FROM..TO, either end may be empty (2020-01-01.., ..2024-12-31)."
    default = default_of(name)
    shown = None if default is inspect.Parameter.empty or default is None else str(default)
    option = typer.Option(shown, *flags, help=help_text)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=str | None, default=option)


def cli_arguments(values: dict[str, Any]) -> dict[str, Any]:
    """CLI option values → contract arguments: lists of choices split at commas, FROM..TO as a date range."""
    arguments: dict[str, Any] = {}
    for name, value in provided(values).items():
        if isinstance(value, list) and name in SPLIT_AT_COMMAS:
            value = [part.strip() for item in value for part in item.split(",") if part.strip()]
        elif name == "date_range":
            start, sep, end = value.partition("..")
            value = {"from": start.strip() or None, "to": end.strip() or None} if sep else value
        arguments[name] = as_published_type(value, PARAMETER_TYPES.get(name))
    return arguments


#: each parameter's JSON type as published ("integer", "number", …; the non-null one of an optional)
PARAMETER_TYPES = {name: next((s.get("type") for s in schema.get("anyOf", [schema]) if s.get("type") != "null"), None)
                   for name, schema in PARAMETERS.items()}


def as_published_type(value: Any, kind: str | None) -> Any:
    """A number typed on the command line as the number the contract takes (the contract is strict: "5" is
    not an integer); text that is not one stays text, for the contract to refuse with the field's name."""
    if not isinstance(value, str):
        return value
    try:
        return int(value) if kind == "integer" else float(value) if kind == "number" else value
    except ValueError:
        return value


def search_cmd(fmt: str = "text", **values: Any) -> None:
    """Search the index as a person would: the MCP tool's parameters and service, results on stdout."""
    from service.caller.principal import stdio_principal
    from service.embedders.factory import build_embedder
    from service.search.answer.budget import dumped
    from service.search.answer.render import render_markdown, render_text
    from service.search.service import SearchService

    if fmt not in ("text", "json", "markdown"):
        raise typer.BadParameter("--format must be text, json or markdown")
    settings = state.settings
    service = SearchService(settings, build_client(settings), build_embedder(settings.embedder))
    response = service.search(cli_arguments(values), stdio_principal(settings.server), "cli")
    if fmt == "json":
        out.print_json(dumped(response))
    else:
        Console(soft_wrap=True).print(render_text(response) if fmt == "text" else render_markdown(response),
                                      markup=False, highlight=False)


search_cmd.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
    *(contract_option(name, schema) for name, schema in PARAMETERS.items()),
    inspect.Parameter("fmt", inspect.Parameter.KEYWORD_ONLY, annotation=str,
                      default=typer.Option("text", "--format", "-f", help="text | json | markdown")),
])
app.command("search")(search_cmd)


def cli_service() -> Any:
    """The search service as the CLI runs it (stdio's principal), and that principal."""
    from service.caller.principal import stdio_principal
    from service.embedders.factory import build_embedder
    from service.search.service import SearchService

    settings = state.settings
    return (SearchService(settings, build_client(settings), build_embedder(settings.embedder)),
            stdio_principal(settings.server))


def print_reply(reply: Any, fmt: str, render: Callable[[Any], str]) -> None:
    from service.search.answer.budget import dumped

    if fmt == "json":
        out.print_json(dumped(reply))
    else:
        Console(soft_wrap=True).print(render(reply), markup=False, highlight=False)


@app.command("cite")
def cite_cmd(text: str = typer.Argument(None, help="The text whose citations to check (a draft answer, a list); "
                                        "- reads it from stdin."),
             file: Path = typer.Option(None, "--file", help="Check every citation of a whole document instead "
                                       "(PDF, DOCX, XLSX, TXT, read as the ingest reads it): each with its page and "
                                       "line, and a summary by verdict."),
             document_id: str = typer.Option(None, "--document-id", help="Check every citation of an indexed "
                                             "document (a result id) instead, each with its page and line."),
             fmt: str = typer.Option("text", "--format", "-f", help="text | json | markdown")) -> None:
    """Check every norm citation in a text against the archive (the MCP tool check_citations): found,
    clause_not_found, superseded, edition_not_found, document_not_found or ambiguous, and stated values."""
    from service.search.answer.render import render_citations, render_document_citations

    whole = file is not None or document_id is not None
    if fmt not in ("text", "json", "markdown") or (fmt == "markdown" and not whole):
        raise typer.BadParameter("--format must be text or json (markdown: a document checked whole)")
    if sum(given is not None for given in (text, file, document_id)) != 1:
        raise typer.BadParameter("give a text, --file or --document-id, one of them")
    service, principal = cli_service()
    if document_id is not None:
        reply = service.check_citations({"document_id": document_id}, principal, "cli")
        print_reply(reply, fmt, lambda r: render_document_citations(r, markdown=fmt == "markdown"))
        return
    if file is None:
        given = sys.stdin.read() if text == "-" else text
        print_reply(service.check_citations({"text": given}, principal, "cli"), fmt, render_citations)
        return
    pages = document_reader()(file, state.settings)
    with citation_progress() as progress:
        reply = service.check_pages(file.name, pages, principal, "cli", progress)
    print_reply(reply, fmt, lambda r: render_document_citations(r, markdown=fmt == "markdown"))


def document_reader() -> Callable[[Path, Settings], list[tuple[int, str]]]:
    """The reader of a document's pages, contributed by the ingest package (entry point group
    ``stroidok.document_reader``: its parsers and bounds); a search-only install cannot read files."""
    from importlib.metadata import entry_points

    found = list(entry_points(group="stroidok.document_reader"))
    if not found:
        raise StroidokError("checking a file's citations reads it with the ingest package's parsers, which are not "
                            "installed here")
    reader: Callable[[Path, Settings], list[tuple[int, str]]] = found[0].load()
    return reader


@contextmanager
def citation_progress() -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar of citations checked, on a terminal's stderr; nothing elsewhere."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("checking citations"), BarColumn(), MofNCompleteColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("citations", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


@app.command("document")
def document_cmd(result_id: str = typer.Argument(None, metavar="[ID]", help="A result id or chunk_id."),
                 designation: str = typer.Option(None, "--designation", "-d", help="Open by designation instead "
                                                 "of an id: «СП 1.13130.2020»; without an edition the current one."),
                 clause: str = typer.Option(None, "--clause", "-c", help="Open this clause: «4.2.19», «Таблица 4»."),
                 query: str = typer.Option(None, "--query", "-q", help="The document's best passages for this "
                                           "question (with an id)."),
                 compare: bool = typer.Option(False, "--compare", help="The clause in every edition held."),
                 fmt: str = typer.Option("text", "--format", "-f", help="text | json")) -> None:
    """Open a document (the MCP tool get_document): by id or chunk_id, or by designation and clause."""
    from service.search.answer.render import render_document

    if fmt not in ("text", "json"):
        raise typer.BadParameter("--format must be text or json")
    service, principal = cli_service()
    print_reply(service.get_document(result_id, principal, "cli", clause, query, designation=designation,
                                     compare=compare or None), fmt, render_document)


@app.command("page")
def page_cmd(result_id: str = typer.Argument(..., metavar="ID", help="A result id or chunk_id of a PDF."),
             page: int = typer.Option(..., "--page", "-p", min=1, help="The page, as page_number gives it."),
             output: Path = typer.Option(..., "--out", "-o", help="Where to write the PNG.")) -> None:
    """A PDF page as an image (the MCP tool get_page_image): the PNG to --out, what it is on stdout."""
    service, principal = cli_service()
    reply = service.get_page_image({"id": result_id, "page": page}, principal, "cli")
    try:
        write_replacing(output, reply.png)
    except OSError as exc:
        raise InvalidQuery(f"--out {output}: {exc.strerror or exc}", details={"out": str(output)}) from exc
    out.print_json(json.dumps({**reply.model_dump(exclude={"png"}, exclude_none=True), "out": str(output)},
                              ensure_ascii=False))


@app.command("serve")
def serve_cmd(http: int = typer.Option(None, "--http", help="Serve streamable HTTP on this port "
                                                              "instead of stdio."),
              workers: int = typer.Option(1, "--workers", min=1, max=64, help="HTTP worker processes (share "
                                          "cache and rate limits through STROIDOK_REDIS_URL)."),
              allow_open: bool = typer.Option(False, "--allow-open", help="Serve a non-loopback address without "
                                              "tokens (every caller gets STROIDOK_SERVER_GROUPS).")) -> None:
    """The MCP server: stdio for Claude Code (default), or streamable HTTP (HTTPS with the TLS settings)."""
    from service.server.http import run

    if workers > 1 and http is None:
        raise typer.BadParameter("--workers needs --http", param_hint="--workers")
    if allow_open:
        state.settings.server.allow_open = True
    run(state.settings, http, workers)


@app.command("stats")
def stats_cmd(since: str = typer.Option("7d", "--since", help="Entries of the last 7d, 24h, 30m …"),
              top: int = typer.Option(10, "--top", min=1, max=100, help="Frequent and empty queries listed."),
              as_json: bool = typer.Option(False, "--json"),
              prune: bool = typer.Option(False, "--prune", help="First delete the entries past "
                                         "STROIDOK_SEARCH_LOG_RETENTION_DAYS.")) -> None:
    """Usage, speed, errors and what agents opened, from the query log (the engine's aggregations); only the
    calls of callers whose access groups are all this one's (STROIDOK_SERVER_GROUPS) are counted."""
    from service.caller.principal import stdio_principal
    from service.usage.stats import format_stats, prune_log, read_stats

    settings, client = state.settings, build_client(state.settings)
    if prune:
        deleted = prune_log(client, settings.index.queries_index, settings.search.log_retention_days)
        Console(stderr=True).print(f"{deleted} entries older than {settings.search.log_retention_days} days deleted")
    principal = stdio_principal(settings.server)
    stats = read_stats(client, settings.index.queries_index, since, list(principal.groups), top)
    if as_json:
        out.print_json(json.dumps(stats.to_dict(), ensure_ascii=False))
    else:
        out.print(format_stats(stats), markup=False, highlight=False)


@app.command("mcp-config")
def mcp_config() -> None:
    """Print an MCP server entry for Claude Code with this installation's absolute path, for any project:
    paste it into that project's .mcp.json (or pass the server's entry to `claude mcp add-json stroidok`).
    ``alwaysLoad`` keeps the tools in the model's view instead of behind Claude Code's tool search."""
    command = Path(sys.executable).parent / "stroidok"
    entry = {"mcpServers": {"stroidok": {"type": "stdio", "alwaysLoad": True, "command": str(command),
                                         "args": ["serve"],
                                         "env": {"DO_NOT_TRACK": "1", "UNSTRUCTURED_DISABLE_NOTICE": "1"}}}}
    print(json.dumps(entry, indent=2))


@index_app.command("migrate")
def index_migrate(
    workers: int = typer.Option(1, "--workers", min=1, max=64, help="Model switch: batches embedded at once."),
) -> None:
    """Rebuild the index from the current template (reindex + atomic alias switch), no downtime. When the
    configured embedder differs from the index's, this is a model switch: the new index is filled with the
    new vectors (resumable: run again after a stop) while the old one keeps serving."""
    from service.embedders.factory import build_embedder
    from service.engine.index_meta import read_embedder_meta, same_embedder

    settings, client = state.settings, build_client(state.settings)
    switch = None
    if (meta := read_embedder_meta(client, settings.index)) is not None:
        embedder = build_embedder(settings.embedder)
        if not same_embedder(meta, embedder):
            out.print(f"model switch: {meta.get('provider')}:{meta.get('model')} -> {embedder.identity.provider}:"
                      f"{embedder.identity.model}", markup=False, highlight=False)
            fill = model_switch_filler()(settings, client, embedder, workers)
            switch = EmbedderSwitch(lambda index: print_backfill(fill(index)))
    old, new, count = migrate(client, settings.index, switch=switch, drop_units=settings.embedder.unit_vectors == "off")
    out.print(f"{settings.index.alias}: {old} -> {new}, {count} chunks", markup=False, highlight=False)


def model_switch_filler() -> Callable[..., Callable[[str], Any]]:
    """The filler of a model switch's new index, contributed by the ingest package (entry point group
    ``stroidok.model_switch``); a search-only install cannot switch models."""
    from importlib.metadata import entry_points

    found = list(entry_points(group="stroidok.model_switch"))
    if not found:
        raise StroidokError("a model switch fills the new index with the ingest package's backfill, which is not "
                            "installed here")
    filler: Callable[..., Callable[[str], Any]] = found[0].load()
    return filler


def print_backfill(report: Any) -> None:
    out.print(report.line(), markup=False, highlight=False)


@index_app.command("optimize")
def index_optimize() -> None:
    """Merge the chunk index's segments (faster searches after a large ingest; an ingest that wrote a
    large share of the index does this by itself)."""
    before, after = optimize(build_client(state.settings), state.settings.index)
    out.print(f"{state.settings.index.alias}: {before} segments merged into {after}")


@index_app.command("status")
def index_status_cmd(as_json: bool = typer.Option(False, "--json")) -> None:
    """Check the engine's template, pipelines and index against index_templates/ and settings."""
    status = index_status(build_client(state.settings), state.settings.index)
    if as_json:
        out.print_json(json.dumps({**asdict(status), "ok": status.ok}))
    else:
        out.print(f"alias {status.alias} -> {status.concrete_index} ({status.doc_count} chunks), "
                  f"vector dim {status.embedding_dim}"
                  + (f", {status.pending_vectors} chunks waiting for vectors (`stroidok embed`)"
                     if status.pending_vectors else ""))
        for problem in status.problems:
            out.print(f"[red]problem:[/] {problem}")
        for notice in status.notices:
            out.print(f"[yellow]notice:[/] {notice}")
        out.print("[green]ok[/]" if status.ok else "[red]not ok[/]")
    if not status.ok:
        raise typer.Exit(1)


_PLUGINS: list[str] = []


def load_plugins() -> None:
    """Commands contributed by other packages (``ingest`` adds ``stroidok ingest``) through the
    ``stroidok.commands`` entry-point group, so this package never imports them directly; once."""
    from importlib.metadata import entry_points

    for entry in entry_points(group="stroidok.commands"):
        if entry.name not in _PLUGINS:
            entry.load()(app)
            _PLUGINS.append(entry.name)


def main() -> None:
    """Entry point: product errors become one clear stderr message and exit code 2, never a traceback."""
    load_plugins()
    try:
        app()
    except StroidokError as exc:
        err = Console(stderr=True)
        err.print(f"[bold red]error {exc.code}:[/] {exc.message}", highlight=False)
        for key, value in exc.details.items():
            if isinstance(value, list):
                err.print(f"  {key}:", highlight=False)
                for item in value:
                    err.print(f"    {item}", markup=False, highlight=False)
            else:
                err.print(f"  {key}: {value}", markup=False, highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
