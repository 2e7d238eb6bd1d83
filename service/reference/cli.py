"""The command reference (docs/cli.md) as generated from the CLI itself: every command with its synopsis,
what it does, and its options. A unit test keeps the page in step with the code.

    python -m service.reference.cli      # prints what the page carries between its markers
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

from service.cli.app import app
from service.cli.commands import load_plugins

#: typer's click objects (it carries its own click): commands, groups, contexts and parameters, used by their
#: public attributes alone
Command = Any


def commands(group: Command, ctx: Any) -> Iterator[tuple[Command, Any]]:
    """Every leaf command below ``group``, depth first, in the order the CLI lists them."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = command.context_class(command, info_name=name, parent=ctx)
        if hasattr(command, "list_commands"):
            yield from commands(command, sub)
        else:
            yield command, sub


def option_row(param: Any) -> str:
    """One option or argument: its names, what it takes, its default, its help."""
    names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
    if param.param_type_name == "argument":
        names = f"`{(param.metavar or param.name).upper()}`"
    annotation = param.type_descriptor.annotation
    kind = "flag" if getattr(param, "is_flag", False) else getattr(annotation, "__name__", str(annotation))
    kind = kind.replace("pathlib.", "").replace("typing.", "")
    default = param.default if param.default not in (None, (), [], False) and not callable(param.default) else ""
    text = " ".join((getattr(param, "help", None) or "").split()).replace("|", "\\|")
    return f"| {names} | {kind} | {f'`{default}`' if default != '' else ''} | {text} |"


def reference() -> str:
    """The whole reference: a section per command."""
    load_plugins()
    root = typer.main.get_command(app)
    lines: list[str] = []
    for command, ctx in commands(root, root.context_class(root, info_name="stroidok")):
        path = ctx.command_path
        lines += [f"### `{path}`", "", f"    {path} {' '.join(command.collect_usage_pieces(ctx))}", ""]
        if command.help:
            lines += [" ".join(command.help.split("\b")).strip(), ""]
        params = [p for p in command.get_params(ctx) if p.name != "help"]
        if params:
            lines += ["| option | takes | default | meaning |", "|---|---|---|---|", *map(option_row, params), ""]
    return "\n".join(lines).rstrip("\n")


if __name__ == "__main__":
    print(reference())
