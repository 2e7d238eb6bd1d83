"""``stroidok index …``: the chunk index, its template and pipelines (init, migrate and model switch,
optimize, status)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import typer

from service.cli.app import index_app, out, state
from service.engine.gateway import build_client
from service.engine.index_admin.apply import apply_all, index_status
from service.engine.index_admin.maintenance import EmbedderSwitch, migrate, optimize
from service.errors import StroidokError


@index_app.command("init")
def index_init() -> None:
    """Apply the index template, search pipelines and aliased index (idempotent)."""
    changes = apply_all(build_client(state.settings), state.settings.index)
    for change in changes:
        out.print(f"{change.kind:<16} {change.name:<40} {change.action}")


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
