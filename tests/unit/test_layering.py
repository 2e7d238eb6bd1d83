"""The search package stands alone: nothing in ``service/`` imports ``ingest/`` (ingest's commands and its model
switch filler come in through entry points), so a search-only install works."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.documents import REPO

SERVICE = REPO / "service"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}


def test_no_module_of_the_search_package_imports_the_ingest_package() -> None:
    offenders = {str(p.relative_to(SERVICE)): sorted(m for m in imported_modules(p) if m.split(".")[0] == "ingest")
                 for p in SERVICE.rglob("*.py")}
    assert {p: m for p, m in offenders.items() if m} == {}


def test_the_model_switch_filler_is_found_through_its_entry_point() -> None:
    from service.cli.index_commands import model_switch_filler

    assert model_switch_filler().__module__ == "ingest.backfill"


#: each package of ``service/`` and the packages it may not import (arrows point down: server → search →
#: usage, caller, engine; nothing below looks up)
FORBIDDEN = {
    "caller": {"server", "search", "usage", "engine", "cli"},
    "engine": {"server", "search", "usage", "caller", "cli"},
    "search": {"server", "cli"},
    "usage": {"server", "search", "cli"},
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_lower_package_imports_nothing_above_it(package: str) -> None:
    offenders = {str(p.relative_to(SERVICE)): sorted(m for m in imported_modules(p)
                                                     if m.split(".")[:1] == ["service"]
                                                     and m.split(".")[1:2] and m.split(".")[1] in FORBIDDEN[package])
                 for p in (SERVICE / package).rglob("*.py")}
    assert {p: m for p, m in offenders.items() if m} == {}
