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


#: each package of ``service/`` and the packages it may not import (arrows point down: cli, server → search →
#: usage, caller, engine, embedders → settings, errors; nothing below looks up)
FORBIDDEN = {
    "caller": {"server", "search", "usage", "engine", "cli", "embedders"},
    "embedders": {"server", "search", "usage", "caller", "engine", "cli"},
    "engine": {"server", "search", "usage", "caller", "cli"},
    "search": {"server", "cli"},
    "usage": {"server", "search", "cli", "caller"},
}
#: the ground floor: settings by concern, built on nothing of ``service`` but the error tree
GROUND = {"settings", "errors"}
#: inside search, by job: the request, the engine's query, the answer and the citations never reach up to a
#: tool's module or the facade (nor to the engine reads, the cache or the lookups by id they stand under)
ABOVE_JOBS = {"search.tools", "search.service", "search.documents", "search.reads", "search.cache"}
SEARCH_FORBIDDEN = {
    "request": ABOVE_JOBS | {"search.dsl", "search.vectors"},
    "dsl": ABOVE_JOBS,
    "answer": ABOVE_JOBS | {"search.citations"},
    "citations": ABOVE_JOBS | {"search.request"},
    "tools": {"search.service"},
}


def rooms(module: str) -> set[str]:
    """The package of ``service`` a module import reaches, and inside search its job package too."""
    parts = module.split(".")
    if parts[:1] != ["service"] or len(parts) < 2:
        return set()
    return {parts[1]} | ({f"search.{parts[2]}"} if parts[1] == "search" and len(parts) > 2 else set())


def offenders(folder: Path, forbidden: set[str]) -> dict[str, list[str]]:
    found = {str(p.relative_to(SERVICE)): sorted(m for m in imported_modules(p) if rooms(m) & forbidden)
             for p in folder.rglob("*.py")}
    return {p: m for p, m in found.items() if m}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_lower_package_imports_nothing_above_it(package: str) -> None:
    assert offenders(SERVICE / package, FORBIDDEN[package]) == {}


def test_the_settings_are_the_ground_floor() -> None:
    above = {p.name.removesuffix(".py") for p in SERVICE.iterdir() if p.name != "__pycache__"} - GROUND
    assert offenders(SERVICE / "settings", above) == {}


@pytest.mark.parametrize("job", sorted(SEARCH_FORBIDDEN))
def test_a_search_job_reaches_no_tool_nor_the_facade(job: str) -> None:
    assert offenders(SERVICE / "search" / job, SEARCH_FORBIDDEN[job]) == {}


def test_every_package_says_its_job() -> None:
    packages = [p for p in [*SERVICE.rglob("__init__.py"), *(REPO / "ingest").rglob("__init__.py")]]
    silent = [str(p.parent.relative_to(REPO)) for p in packages if not ast.get_docstring(ast.parse(p.read_text()))]
    assert silent == []


@pytest.mark.parametrize("package", ["service", "ingest"])
def test_no_module_is_over_400_lines(package: str) -> None:
    long = {str(p.relative_to(REPO)): n for p in (REPO / package).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}
