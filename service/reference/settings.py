"""The settings reference (docs/settings.md) as generated from ``service.settings``: one row per environment
variable, its type, default and meaning. A unit test keeps the page in step with the code.

    python -m service.reference.settings      # prints the table the page carries between its markers
"""

from __future__ import annotations

import enum
import re
from typing import Any

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from service.settings import Settings

#: defaults that depend on the machine, shown by what they are rather than by this machine's value
COMPUTED = "computed"


def env_names(prefix: str, name: str, info: FieldInfo) -> list[str]:
    """The environment variables a field is read from: its aliases where it has them, else prefix + NAME."""
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    if isinstance(alias, str):
        return [alias]
    return [f"{prefix}{name}".upper()]


def type_text(annotation: Any) -> str:
    """A field's type as a reader knows it: ``int``, ``Path | None``, ``list[str]``, ``on | off | auto``."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(str(member.value) for member in annotation)
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    text = re.sub(r"\b(?:[a-z_]\w*\.)+(?=[A-Za-z_])", "", text)  # typing., pathlib._local., collections.abc.
    text = re.sub(r"Literal\[([^\]]*)\]", lambda m: " \\| ".join(v.strip(" '\"") for v in m.group(1).split(",")), text)
    return text.replace("|", "\\|").replace("\\\\|", "\\|")


def default_text(info: FieldInfo) -> str:
    if info.default_factory is not None:
        return COMPUTED
    value = info.default
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, enum.Enum):
        value = value.value
    if value in ((), [], None, ""):
        return {(): "none", None: "none", "": "empty"}.get(value if not isinstance(value, list) else (), "none")
    return f"`{value}`"


def describe(info: FieldInfo) -> str:
    return " ".join((info.description or "").split()).replace("|", "\\|")


def group_rows(model: type[BaseSettings]) -> list[str]:
    prefix = str(model.model_config.get("env_prefix", ""))
    rows = []
    for name, info in model.model_fields.items():
        names = ", ".join(f"`{env}`" for env in env_names(prefix, name, info))
        rows.append(f"| {names} | {type_text(info.annotation)} | {default_text(info)} | {describe(info)} |")
    return rows


def settings_table() -> str:
    """Every setting of every concern, grouped by concern, in the order the code declares them."""
    lines: list[str] = []
    for concern, info in Settings.model_fields.items():
        model = info.annotation
        assert isinstance(model, type) and issubclass(model, BaseSettings)
        doc = " ".join((model.__doc__ or "").split())
        lines += [f"### {concern}", "", doc, "", "| variable | type | default | meaning |", "|---|---|---|---|",
                  *group_rows(model), ""]
    return "\n".join(lines).rstrip("\n")


if __name__ == "__main__":
    print(settings_table())
