"""The MCP server stands on the SDK's public API alone: no private attribute of an SDK object, no private
module, anywhere in the server's code (a minor release of ``mcp`` may change either without notice)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "service" / "server"


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def own_names(trees: list[ast.Module]) -> set[str]:
    """The private names the server's own code defines: its methods, and attributes it assigns."""
    names = {n.name for tree in trees for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    names |= {t.attr for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Assign | ast.AnnAssign)
              for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Attribute)}
    names |= {t.id for tree in trees for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
              for t in [n.target] if isinstance(t, ast.Name)}
    return {name for name in names if private(name)}


def other_libraries_bases(tree: ast.Module) -> set[str]:
    """Classes the module subclasses from libraries other than the SDK (their name-mangled hooks are theirs to
    keep: the rate limiter's storage, ``limits``)."""
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and not (n.module or "").startswith("mcp") for a in n.names}
    return {b.id for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for b in n.bases
            if isinstance(b, ast.Name) and b.id in imported}


def sdk_privates(source: str) -> list[str]:
    """Private attributes read off objects the server's code did not define, and private SDK modules imported."""
    trees = [ast.parse(source)]
    ours = own_names(trees)
    theirs = tuple(f"_{base}__" for base in other_libraries_bases(trees[0]))
    found = [f"attribute {n.attr}" for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Attribute)
             and private(n.attr) and n.attr not in ours and not (theirs and n.attr.startswith(theirs))]
    found += [f"module {n.module}" for tree in trees for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
              and n.module and n.module.split(".")[0].startswith("mcp") and any(map(private, n.module.split(".")))]
    return found


@pytest.mark.parametrize("path", sorted(SERVER.glob("*.py")), ids=lambda p: p.name)
def test_the_server_uses_no_private_part_of_the_sdk(path: Path) -> None:
    assert sdk_privates(path.read_text(encoding="utf-8")) == []


def test_the_check_finds_what_the_server_once_used() -> None:
    old = ("class ProductServer(MCPServer):\n"
           "    def __init__(self):\n"
           "        self._lowlevel_server._request_handlers.pop('prompts/list', None)\n"
           "    def publish(self):\n"
           "        return self._tool_manager.list_tools()\n"
           "from mcp.server._otel import x\n")
    assert sorted(sdk_privates(old)) == ["attribute _lowlevel_server", "attribute _request_handlers",
                                         "attribute _tool_manager", "module mcp.server._otel"]


def test_a_mangled_hook_of_an_sdk_class_is_still_found() -> None:
    source = ("from mcp.server.lowlevel import Server\n"
              "class ProductServer(Server):\n"
              "    def go(self):\n"
              "        self._Server__handlers()\n")
    assert sdk_privates(source) == ["attribute _Server__handlers"]
