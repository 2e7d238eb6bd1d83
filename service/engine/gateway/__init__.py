"""The one door to the engine, by job: the client and its transport (``client``), the translation of every
engine failure into the product's typed errors (``errors``), bounded and
cancellable searches (``tasks``), bulk writes with typed item outcomes and scans (``bulk``). Nothing outside
this package imports opensearch-py's exceptions or helpers (ruff's banned-api rule)."""

from service.engine.gateway.bulk import ItemOutcome, bulk_outcomes, scan
from service.engine.gateway.client import (
    PRUNING_SETTING,
    BoundedConnection,
    FastJSONSerializer,
    TranslatingTransport,
    build_client,
    engine_hosts,
)
from service.engine.gateway.errors import (
    CREATE_BLOCKED_MESSAGE,
    DISK_FULL_MESSAGE,
    SHARD_RETRIES,
    engine_timeout,
    is_create_block,
    is_disk_block,
    translate,
    unless_missing,
)
from service.engine.gateway.tasks import (
    GRACE_S,
    RunningSearch,
    bounded_search,
    cancel_searches,
    long_searches,
    search_tasks,
)

__all__ = [
    "CREATE_BLOCKED_MESSAGE", "DISK_FULL_MESSAGE", "GRACE_S", "PRUNING_SETTING", "SHARD_RETRIES", "BoundedConnection",
    "FastJSONSerializer", "ItemOutcome", "RunningSearch", "TranslatingTransport", "bounded_search",
    "build_client", "bulk_outcomes", "cancel_searches", "engine_hosts", "engine_timeout",
    "is_create_block", "is_disk_block", "long_searches", "scan", "search_tasks",
    "translate", "unless_missing",
]
