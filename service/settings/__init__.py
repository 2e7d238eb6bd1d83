"""Configuration by concern: one pydantic-settings class per concern (a module each), the root ``Settings`` built
once at the entry point and passed down. This package is the ground floor: it imports nothing else of
``service`` but the error tree.

Every variable carries the ``STROIDOK_`` prefix, except the conventional Java locations
(``OPENSEARCH_JAVA_HOME``, ``JAVA_HOME``) and ``OPENSEARCH_URL``, which other tools set too.
"""

from service.settings.embedder import EmbedderSettings
from service.settings.engine import OPENSEARCH_VERSION, EngineSettings, OpenSearchSettings
from service.settings.index import IndexSettings
from service.settings.ingest import IngestSettings
from service.settings.root import Settings, load_settings, setting_problems, unparsable_setting
from service.settings.search import DEFAULT_TEXT_FIELDS, SearchSettings
from service.settings.server import ServerSettings, machine_memory_mb

__all__ = ["DEFAULT_TEXT_FIELDS", "OPENSEARCH_VERSION", "EmbedderSettings", "EngineSettings", "IndexSettings",
           "IngestSettings", "OpenSearchSettings", "SearchSettings", "ServerSettings", "Settings", "load_settings",
           "machine_memory_mb", "setting_problems", "unparsable_setting"]
