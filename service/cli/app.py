"""The ``stroidok`` Typer app: its command groups, the console, the settings built once per run, and the
search service as the CLI runs it. Logs go to stderr (stdout is for results, and for MCP under ``serve``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import typer
from loguru import logger
from rich.console import Console

from service.engine.gateway import build_client
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
