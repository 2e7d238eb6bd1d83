"""The tools on the command line, with the MCP tools' parameters: ``search`` (its options generated from the
contract), ``cite``, ``document``, ``page``."""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from service.cli.app import app, cli_service, out, print_reply, state
from service.engine.gateway import build_client
from service.errors import InvalidQuery, StroidokError
from service.files import write_replacing
from service.search.request.schema import SHORT_FLAGS, cli_flag, default_of, parameter_schemas, provided
from service.settings import Settings

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
