"""One writer per index: an ingest holds a lease stored in the engine (the alias's meta index), so two runs —
a cron job and a person, or two machines given the same ``--shard`` — never write the same documents at once.

A lease names its holder (host, process id, a random tag): a holder that died on this very host (its process is
gone: ``kill -9``, a crash) is recognised at once and its lease taken over; one on another host is taken over
once its lease expires. A lease names its scope: ``all`` for a whole run, ``shard-i-of-n`` for a ``--shard`` run, so
the shards of one run proceed together while a whole run and any shard run exclude each other. The holder renews it
every ``ttl / 3`` seconds; a holder that dies stops renewing, and its lease is taken over once expired. Every write
is a real-time operation on one document id with optimistic concurrency (``if_seq_no``), so two claimants
cannot both win.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from loguru import logger
from opensearchpy import OpenSearch

from ingest.discover import Shard
from service.errors import IngestRunning, StroidokError, VersionConflict
from service.settings import IndexSettings

KIND = "ingest_lease"
TTL_S = 60.0


def scope_of(shard: Shard | None) -> str:
    return "all" if shard is None else f"shard-{shard.number}-of-{shard.count}"


def lease_id(scope: str) -> str:
    return f"{KIND}:{scope}"


def overlaps(scope: str, other: str) -> bool:
    """Whether two scopes cover a common document: the whole run covers every shard."""
    return scope == other or "all" in (scope, other)


@dataclass
class Lease:
    """A held lease; ``release`` (or the context manager's exit) gives it up."""

    client: OpenSearch
    settings: IndexSettings
    scope: str
    holder: str
    seq_no: int
    primary_term: int
    ttl_s: float = TTL_S
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Lease:
        self._thread = threading.Thread(target=self._renew_until_stopped, name="ingest-lease", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _renew_until_stopped(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            try:
                self._write(self.seq_no, self.primary_term)
            except (StroidokError, OSError) as exc:  # the next renewal tries again
                logger.warning("could not renew the ingest lease on {}: {}", self.settings.alias, exc)

    def _write(self, seq_no: int | None, primary_term: int | None) -> None:
        result = self.client.index(index=self.settings.meta_index, id=lease_id(self.scope), refresh=True,
                                   body=lease_body(self.scope, self.holder, self.ttl_s),
                                   params={"if_seq_no": seq_no, "if_primary_term": primary_term})
        self.seq_no, self.primary_term = int(result["_seq_no"]), int(result["_primary_term"])

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        try:
            self.client.delete(index=self.settings.meta_index, id=lease_id(self.scope), refresh=True,
                               params={"if_seq_no": self.seq_no, "if_primary_term": self.primary_term})
        except StroidokError as exc:  # taken over after it expired, or the engine is down
            logger.warning("ingest lease on {} not released ({}); it expires by itself", self.settings.alias, exc)


def lease_body(scope: str, holder: str, ttl_s: float) -> dict[str, Any]:
    now = time.time()
    return {"kind": KIND, "scope": scope, "holder": holder,
            "updated_at": datetime.fromtimestamp(now, UTC).isoformat(),
            "expires_at": datetime.fromtimestamp(now + ttl_s, UTC).isoformat()}


def new_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def acquire(client: OpenSearch, settings: IndexSettings, shard: Shard | None, ttl_s: float = TTL_S) -> Lease:
    """Take the index's lease for this run's scope, or raise ``IngestRunning`` naming who holds it."""
    scope, holder = scope_of(shard), new_holder()
    lease = _claim(client, settings, scope, holder, ttl_s)
    rivals = _live_overlapping(client, settings, scope)
    if rivals:
        lease.release()
        raise _running(settings, rivals[0])
    return lease


def _claim(client: OpenSearch, settings: IndexSettings, scope: str, holder: str, ttl_s: float) -> Lease:
    """Create the lease document, or take it over when its holder let it expire."""
    doc_id = lease_id(scope)
    body = lease_body(scope, holder, ttl_s)
    try:
        result = client.index(index=settings.meta_index, id=doc_id, body=body, refresh=True, op_type="create")
    except VersionConflict:
        found = client.get(index=settings.meta_index, id=doc_id)
        if is_live(found["_source"]):
            raise _running(settings, found["_source"]) from None
        try:  # expired: take it over, unless another claimant did so first
            result = client.index(index=settings.meta_index, id=doc_id, body=body, refresh=True,
                                  params={"if_seq_no": found["_seq_no"], "if_primary_term": found["_primary_term"]})
        except VersionConflict:
            raise _running(settings, client.get(index=settings.meta_index, id=doc_id)["_source"]) from None
        logger.warning("took over the ingest lease of {} (its holder is gone or stopped renewing)",
                       found["_source"].get("holder"))
    return Lease(client, settings, scope, holder, int(result["_seq_no"]), int(result["_primary_term"]), ttl_s)


def _live_overlapping(client: OpenSearch, settings: IndexSettings, scope: str) -> list[dict[str, Any]]:
    """Unexpired leases of other scopes that cover documents this scope covers."""
    hits = client.search(index=settings.meta_index, body={"size": 100, "query": {"bool": {
        "filter": [{"term": {"kind": KIND}}, {"range": {"expires_at": {"gt": "now"}}}],
        "must_not": [{"ids": {"values": [lease_id(scope)]}}]}}})["hits"]["hits"]
    return [h["_source"] for h in hits if overlaps(scope, str(h["_source"].get("scope"))) and is_live(h["_source"])]


def is_live(source: dict[str, Any]) -> bool:
    """A lease holds until it expires, unless its holder ran on this host and its process is gone."""
    return expires_at(source) > time.time() and not holder_gone(str(source.get("holder", "")))


def holder_gone(holder: str) -> bool:
    """Whether ``host:pid:tag`` names a process of this host that no longer runs."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def expires_at(source: dict[str, Any]) -> float:
    try:
        return datetime.fromisoformat(str(source["expires_at"])).timestamp()
    except (KeyError, ValueError):
        return 0.0


def _running(settings: IndexSettings, source: dict[str, Any]) -> IngestRunning:
    left = max(0, round(expires_at(source) - time.time()))
    return IngestRunning(
        f"another ingest is writing {settings.alias} ({source.get('scope')}, held by {source.get('holder')}); "
        f"wait for it to finish, or — if its process is gone — for its lease to expire in {left} s",
        details={"holder": source.get("holder"), "scope": source.get("scope"), "expires_in_s": left})
