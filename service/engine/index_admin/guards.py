"""Cluster settings the product's searches depend on, checked on any cluster (managed or not) by
``stroidok index init`` and ``index status``, and set where the caller is allowed to.

The engine's dynamic pruning of cardinality aggregations loops without end under a ``hybrid`` query on some
segments (OpenSearch issue 22582), on a core, ignoring cancellation; only a node restart clears it. The
product's own requests never put a cardinality where pruning runs (``service.search.dsl.build``), so this guards
the cluster against every other client's hybrid request too.
"""

from __future__ import annotations

from dataclasses import dataclass

from opensearchpy import OpenSearch

from service.engine.gateway import PRUNING_SETTING
from service.engine.launcher.status import cluster_settings
from service.errors import AccessRefused

OPERATOR_HINT = (f'set it to 0 (PUT _cluster/settings {{"persistent": {{"{PRUNING_SETTING}": 0}}}}): with it on, a '
                 "hybrid query with a top-level cardinality aggregation can loop without end inside the engine "
                 "(OpenSearch issue 22582); this product's own requests avoid that shape")


@dataclass(frozen=True)
class PruningState:
    """The cluster's cardinality-pruning threshold (0: off) and whether this call turned it off."""

    threshold: int
    changed: bool = False
    refused: bool = False

    @property
    def notice(self) -> str | None:
        if self.threshold == 0:
            return None
        why = "this caller may not change cluster settings: " if self.refused else ""
        return f"the cluster's {PRUNING_SETTING} is {self.threshold}; {why}{OPERATOR_HINT}"


def read_pruning(client: OpenSearch) -> int:
    """The threshold in force (persistent or transient over the node's own or default value)."""
    return int(cluster_settings(client).get(PRUNING_SETTING, 100))


def turn_off_pruning(client: OpenSearch) -> PruningState:
    """Turn the pruning off as a persistent cluster setting, unless it is off already; a cluster that refuses
    (no right to change cluster settings) is left as it is, with the setting the operator must make."""
    if (threshold := read_pruning(client)) == 0:
        return PruningState(0)
    try:
        client.cluster.put_settings(body={"persistent": {PRUNING_SETTING: 0}})
    except AccessRefused:
        return PruningState(threshold, refused=True)
    return PruningState(read_pruning(client), changed=True)  # a transient value may still override it
