"""All concerns together (``Settings``), built once at the entry point (``load_settings``), and each invalid
variable named in a CONFIG_ERROR."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsError

from service.errors import ConfigError
from service.settings.capabilities import capabilities_of
from service.settings.embedder import EmbedderSettings
from service.settings.engine import EngineSettings, OpenSearchSettings
from service.settings.index import IndexSettings
from service.settings.ingest import IngestSettings
from service.settings.search import SearchSettings
from service.settings.server import ServerSettings


class Settings(BaseModel):
    """All concerns together; the CLI builds this once and passes parts down."""

    engine: EngineSettings = Field(default_factory=EngineSettings)
    opensearch: OpenSearchSettings = Field(default_factory=OpenSearchSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    @model_validator(mode="after")
    def _index_follows_embedder(self) -> Settings:
        """Unless set explicitly, the index's vector dimension and fusion are the configured embedder's."""
        able = capabilities_of(self.embedder.provider)
        dimension = able.dimension or self.embedder.dimension
        derived: dict[str, object] = {**able.fusion, **({"embedding_dim": dimension} if dimension else {})}
        for name, value in derived.items():
            if name not in self.index.model_fields_set:
                setattr(self.index, name, value)
                self.index.model_fields_set.discard(name)  # still derived: a copy with another embedder re-derives
        return self

    @property
    def opensearch_url(self) -> str:
        return self.opensearch.resolved_url(self.engine)


def load_settings() -> Settings:
    """The settings from the environment; CONFIG_ERROR naming each invalid variable and its problem (never
    pydantic's traceback)."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = setting_problems(exc)
        raise ConfigError(f"invalid settings: {'; '.join(problems)}", details={"problems": problems}) from exc
    except SettingsError as exc:  # a value the environment source cannot even parse (JSON that is not)
        raise ConfigError(f"invalid settings: {unparsable_setting(exc)} cannot be parsed (JSON expected where the "
                          "setting is a list or a mapping: docs/settings.md)") from exc


def setting_problems(exc: ValidationError) -> list[str]:
    """Each complaint as ``VARIABLE: problem`` (the variable named by its concern's prefix)."""
    prefixes = {info.annotation.__name__: info.annotation.model_config.get("env_prefix", "")
                for info in Settings.model_fields.values() if isinstance(info.annotation, type)
                and issubclass(info.annotation, BaseSettings)}
    prefix = prefixes.get(exc.title, "")
    return [f"{prefix}{str(e['loc'][0]).upper() if e['loc'] else exc.title}: {e['msg']}"[:300] for e in exc.errors()]


def unparsable_setting(exc: SettingsError) -> str:
    """The variable whose value the environment source could not parse (each concern tried alone)."""
    field = re.search(r'field "(\w+)"', str(exc))
    for info in Settings.model_fields.values():
        concern = info.annotation
        if not (isinstance(concern, type) and issubclass(concern, BaseSettings)):
            continue
        try:
            concern()
        except SettingsError:
            return f"{concern.model_config.get('env_prefix', '')}{field[1].upper() if field else '?'}"
        except ValidationError:
            continue
    return str(exc)[:200]
