"""The ``stroidok`` command. Subcommands parse flags and delegate; they hold no logic. Each group lives in its
module (``engine_commands``, ``index_commands``, ``search_commands``), registered on import in this order;
``serve``, ``stats`` and ``mcp-config`` are here, with the entry point."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console

from service.cli import engine_commands, index_commands, search_commands  # noqa: F401  (they register their commands)
from service.cli.app import app, out, state
from service.engine.gateway import build_client
from service.errors import StroidokError


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
