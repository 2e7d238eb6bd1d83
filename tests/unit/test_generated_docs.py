"""docs/settings.md, docs/errors.md and docs/cli.md carry their tables as the code generates them."""

from __future__ import annotations

from pathlib import Path

from service.reference.cli import reference
from service.reference.settings import settings_table
from service.settings import Settings

PAGE = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def test_the_page_carries_the_table_as_generated() -> None:
    page = PAGE.read_text(encoding="utf-8")
    embedded = page.split("<!-- settings:begin -->\n", 1)[1].split("\n<!-- settings:end -->", 1)[0]
    assert embedded == settings_table(), "regenerate with: python -m service.reference.settings"


def test_every_setting_has_a_row_under_its_variable() -> None:
    table = settings_table()
    for concern, info in Settings.model_fields.items():
        model = info.annotation
        assert isinstance(model, type)
        prefix = str(model.model_config.get("env_prefix", ""))  # type: ignore[attr-defined]
        for name, field in model.model_fields.items():  # type: ignore[attr-defined]
            if field.validation_alias is None:
                assert f"`{prefix}{name}`".upper() in table.upper(), f"{concern}.{name}"


def test_the_command_page_carries_the_reference_as_generated() -> None:
    page = (PAGE.parent / "cli.md").read_text(encoding="utf-8")
    embedded = page.split("<!-- cli:begin -->\n", 1)[1].split("\n<!-- cli:end -->", 1)[0]
    assert embedded == reference(), "regenerate with: python -m service.reference.cli"
    for command in ("search", "serve", "ingest", "embed", "eval", "engine up", "index migrate"):
        assert f"### `stroidok {command}`" in embedded


def test_every_setting_says_what_it_does() -> None:
    undescribed = [f"{concern}.{name}" for concern, info in Settings.model_fields.items()
                   for name, field in info.annotation.model_fields.items()  # type: ignore[union-attr]
                   if not " ".join((field.description or "").split())]
    assert undescribed == []


def test_the_error_page_carries_every_code_as_generated() -> None:
    from service.errors import error_classes, error_table, exit_code_table

    page = (PAGE.parent / "errors.md").read_text(encoding="utf-8")
    embedded = page.split("<!-- errors:begin -->\n", 1)[1].split("\n<!-- errors:end -->", 1)[0]
    assert embedded == error_table(), "regenerate with: python -m service.errors"
    exits = page.split("<!-- exit-codes:begin -->\n", 1)[1].split("\n<!-- exit-codes:end -->", 1)[0]
    assert exits == exit_code_table(), "regenerate with: python -m service.errors"
    codes = [cls.code for cls in error_classes() if "code" in vars(cls)]
    assert len(codes) == len(set(codes)), "every code names one error"
    kinds = [cls for cls in error_classes() if "code" not in vars(cls)]
    assert all(f"| `{cls.code}` | {cls.__name__} |" in embedded for cls in kinds), "a kind keeps its parent's code"
    assert all(cls.__doc__ for cls in error_classes()), "every error says what it means"
