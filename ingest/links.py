"""Links across the archive, settled after every ingest run: which edition replaces which, and titles the archive
agrees on.

Each document's registry entry keeps what its own text says (its designation, parsed title, what it replaces,
the names its references section gives the documents it cites). From all of them, ``plan_links`` decides — a
pure function — each document's ``superseded_by`` (the newest document of its family, or one that says it
replaces it) and, when its own title is imperfect (``title_problems``), the name most documents citing it give
it. A document lends another only what every reader of the receiving document may read (``may_lend``): a name
from a restricted document's references never titles a public one, a restricted newer edition never marks a
public one as replaced (nor hides it from ``current_only``). ``settle_links`` writes the differences into every
chunk of the documents concerned, so a newer edition or a citing document ingested later marks or names an
earlier document without re-parsing it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from loguru import logger
from opensearchpy import OpenSearch

from ingest.index import first_chunks, load_registry
from ingest.parse.titles import title_problems
from service.caller.principal import PUBLIC
from service.search.citations.designations import parse_designation
from service.settings import IndexSettings

_UPDATE_SCRIPT = """
ctx._source.title = params.title;
if (params.superseded_by == null) {
  ctx._source.remove('superseded_by'); ctx._source.remove('superseded_by_designation');
} else {
  ctx._source.superseded_by = params.superseded_by;
  ctx._source.superseded_by_designation = params.superseded_by_designation;
}
"""


@dataclass(frozen=True)
class Entry:
    """What a document's own text says, as its registry entry keeps it."""

    doc_id: str
    designation: str | None
    title: str
    replaces: tuple[str, ...] = ()
    cited_names: tuple[tuple[str, str], ...] = ()
    groups: frozenset[str] = frozenset({PUBLIC})

    @classmethod
    def of(cls, doc_id: str, source: dict[str, Any]) -> Entry:
        return cls(doc_id, source.get("designation"), source.get("parsed_title") or "",
                   tuple(source.get("replaces") or ()), tuple((source.get("cited_names") or {}).items()),
                   frozenset(source.get("access_groups") or ()))


def may_lend(source: frozenset[str], receiver: frozenset[str]) -> bool:
    """Every reader of a document of groups ``receiver`` may read one of groups ``source``. Every reader holds
    ``public``; a reader holding any one group of a document reads it. So: the source is public, or the receiver
    is not public and each of its groups is one of the source's. A document without groups (none readable)
    lends nothing and is lent anything."""
    return PUBLIC in source or (PUBLIC not in receiver and receiver <= source)


@dataclass(frozen=True)
class Links:
    """What a document's chunks should carry of the archive's links."""

    title: str
    superseded_by: str | None = None
    superseded_by_designation: str | None = None


@dataclass(frozen=True)
class Archive:
    """The entries indexed once: the names cited for each designation and family, the documents of each family,
    and who says they replace what (so each document's links are looked up, not searched for among all)."""

    by_designation: dict[str, list[tuple[str, Entry]]]
    by_family: dict[str, list[tuple[str, Entry]]]
    members: dict[str, list[Entry]]
    replacers: dict[str | tuple[str, int], list[Entry]]
    position: dict[str, int]

    @classmethod
    def of(cls, entries: list[Entry]) -> Archive:
        by_designation: dict[str, list[tuple[str, Entry]]] = {}
        by_family: dict[str, list[tuple[str, Entry]]] = {}
        members: dict[str, list[Entry]] = {}
        replacers: dict[str | tuple[str, int], list[Entry]] = {}
        for entry in entries:
            for cited, name in entry.cited_names:
                if name and not title_problems(name, None):
                    by_designation.setdefault(cited, []).append((name, entry))
                    by_family.setdefault(parse_designation(cited).family, []).append((name, entry))
            if entry.designation:
                members.setdefault(parse_designation(entry.designation).family, []).append(entry)
            for said in entry.replaces:
                replaced = parse_designation(said)
                replacers.setdefault(said, []).append(entry)
                if replaced.edition is not None:
                    replacers.setdefault((replaced.family, replaced.edition), []).append(entry)
        return cls(by_designation, by_family, members, replacers, {e.doc_id: i for i, e in enumerate(entries)})

    def name_for(self, entry: Entry) -> str | None:
        """The name the archive's references give ``entry``'s designation (that edition first, then any
        edition of its family), the most frequent; its own references never count (they cite others), nor those
        of a document some reader of ``entry`` may not read."""
        if not entry.designation:
            return None
        ranked = (self._names(self.by_designation.get(entry.designation, []), entry)
                  or self._names(self.by_family.get(parse_designation(entry.designation).family, []), entry))
        return max(ranked, key=lambda n: (ranked[n], len(n))) if ranked else None

    @staticmethod
    def _names(given: list[tuple[str, Entry]], receiver: Entry) -> Counter[str]:
        return Counter(name for name, source in given if may_lend(source.groups, receiver.groups))

    def successor(self, entry: Entry) -> Entry | None:
        """The newest document that replaces ``entry``: one that says so («Взамен», «Актуализированная
        редакция»: the same designation, or its family and edition), or a later edition of its family; among
        those every reader of ``entry`` may read."""
        if not entry.designation:
            return None
        own = parse_designation(entry.designation)
        said = [*self.replacers.get(own.text, []),
                *(self.replacers.get((own.family, own.edition), []) if own.edition is not None else [])]
        newer = [o for o in self.members.get(own.family, []) if own.edition is not None
                 and (parse_designation(o.designation or "").edition or 0) > own.edition]
        # in the archive's order, once each: the first of equal editions wins, as it always has
        found = sorted({o.doc_id: o for o in said + newer if o.designation and o.designation != entry.designation
                        and may_lend(o.groups, entry.groups)}.values(), key=lambda o: self.position[o.doc_id])
        return max(found, key=lambda o: (parse_designation(o.designation or "").edition or 0,
                                         o.designation or "")) if found else None


def plan_links(entries: list[Entry]) -> dict[str, Links]:
    """Every document's title and ``superseded_by``, from the whole archive's entries."""
    archive = Archive.of(entries)
    plan = {}
    for entry in entries:
        title = entry.title
        if title_problems(entry.title, entry.designation) and (name := archive.name_for(entry)):
            title = f"{entry.designation} {name}"
        newer = archive.successor(entry)
        plan[entry.doc_id] = Links(title, newer.doc_id if newer else None, newer.designation if newer else None)
    return plan


def current_links(client: OpenSearch, settings: IndexSettings) -> dict[str, Links]:
    """What each document's chunks carry now (read from its first chunk)."""
    fields = ["doc_id", "title", "superseded_by", "superseded_by_designation"]
    return {src["doc_id"]: Links(src.get("title") or "", src.get("superseded_by"), src.get("superseded_by_designation"))
            for src in first_chunks(client, settings, fields)}


def settle_links(client: OpenSearch, settings: IndexSettings) -> int:
    """Write the archive's links into the chunks of every document whose links changed; returns how many."""
    # an entry written before links existed has no parsed title: its document keeps what it has until re-ingested
    entries = [Entry.of(doc_id, source) for doc_id, source in load_registry(client, settings).items()
               if not source.get("pending") and source.get("parsed_title")]
    plan = plan_links(entries)
    now = current_links(client, settings)
    changed = {doc_id: links for doc_id, links in plan.items() if doc_id in now and now[doc_id] != links}
    for doc_id, links in changed.items():
        client.update_by_query(index=settings.alias, conflicts="proceed", refresh=False, body={
            "query": {"term": {"doc_id": doc_id}},
            "script": {"lang": "painless", "source": _UPDATE_SCRIPT, "params": {
                "title": links.title, "superseded_by": links.superseded_by,
                "superseded_by_designation": links.superseded_by_designation}}})
    if changed:
        client.indices.refresh(index=settings.alias)
    if changed:
        logger.info("links settled: {} documents re-titled or marked as replaced", len(changed))
    return len(changed)
