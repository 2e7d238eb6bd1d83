"""What a run will do, decided before any file is read: which files to parse, which are unchanged or links
to a file already taken, which are too big or unreadable, which indexed documents lost their file. The
dry run reports this plan, and the run reports the same outcomes for the files it does not parse.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.access import AccessRules
from ingest.discover import Rejected, Shard, SourceFile, os_reason
from ingest.parse import PARSER_VERSION
from ingest.parse.pdf import OcrMode
from ingest.place import in_place, open_planned
from ingest.report import FileOutcome
from service.errors import FileMoved
from service.files import hash_descriptor
from service.settings import Settings
from service.settings.capabilities import capabilities_of


@dataclass(frozen=True)
class IngestOptions:
    paths: list[Path]
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    batch_size: int | None = None
    workers: int | None = None
    dry_run: bool = False
    force: bool = False
    ocr: OcrMode = "auto"
    pdf_parser: str | None = None
    encoding: str | None = None
    shard: Shard | None = None
    vectors_later: bool = False
    access_rules_changed: bool = False


def writes_vectors_later(mode: str, provider: str) -> bool:
    """The text-first decision: ``later`` always, ``auto`` for an embedder too slow to embed while parsing
    (its capabilities say so), ``now`` never."""
    return mode == "later" or (mode == "auto" and capabilities_of(provider).text_first)


@dataclass
class Plan:
    todo: list[tuple[SourceFile, str]]
    unchanged: list[SourceFile]
    gone: list[dict[str, Any]]
    too_big: list[SourceFile]
    rejected: list[Rejected] = field(default_factory=list)
    aliases: list[SourceFile] = field(default_factory=list)
    #: further names (hard links) of a file taken under its first name (``hard_links="same-groups"``)
    twins: list[SourceFile] = field(default_factory=list)


#: (device, inode) of a file -> the names the walk found for it
Names = dict[tuple[int, int], list[SourceFile]]


def names_found(files: list[SourceFile | Rejected]) -> Names:
    """Every name (not a symbolic link) the walk found for each file, by its device and inode, in path order."""
    names: Names = {}
    for f in files:
        if isinstance(f, SourceFile) and not f.link and f.identity is not None:
            names.setdefault(f.identity[:2], []).append(f)
    for found in names.values():
        found.sort(key=lambda f: os.fsencode(f.path))
    return names


def hard_link_refusal(f: SourceFile, names: Names, rules: AccessRules | None, mode: str) -> str | None:
    """Why a file with several names (hard links) is not taken, or None. Another name may lie where other access
    groups hold (a restricted file linked into a public folder): by default such a file is refused; with
    ``mode`` ``same-groups`` it is taken when the run found every one of its names, all under the same groups."""
    if f.link or f.names <= 1 or f.identity is None:
        return None
    if mode != "same-groups":
        return (f"a file with {f.names} names (hard links): not taken, a name elsewhere may lie under other access "
                "groups (STROIDOK_INGEST_HARD_LINKS=same-groups takes one whose every name this run finds under the "
                "same groups)")
    found = names.get(f.identity[:2], [])
    if len(found) < f.names:
        return (f"a file with {f.names} names (hard links), {len(found)} of them in this run's folders: not taken, "
                "the others may lie under other access groups")
    if rules is not None and len({tuple(rules.groups_for(n.path)) for n in found}) > 1:
        return "a file whose names (hard links) lie under different access groups: not taken"
    return None


def is_twin(f: SourceFile, names: Names) -> bool:
    """A further name of a hard-linked file (the first of its names, in path order, is the one indexed)."""
    found = names.get(f.identity[:2], []) if f.identity is not None and f.names > 1 else []
    return bool(found) and found[0].path != f.path


def is_current(entry: dict[str, Any] | None, digest: str, groups: list[str]) -> bool:
    """A registry entry describes this exact file version with these access groups, fully written."""
    return entry is not None and bool(entry) and not entry.get("pending") and entry.get("content_hash") == digest \
        and sorted(entry.get("access_groups") or []) == sorted(groups)


def processing_signature(settings: Settings, options: IngestOptions) -> str:
    """Everything besides a file's bytes that decides its chunks: the parser version and options, chunk
    size and overlap. Part of each file's fingerprint, so changing any of them re-indexes the files."""
    ingest = settings.ingest
    return (f"p{PARSER_VERSION}.c{ingest.chunk_chars}.o{ingest.chunk_overlap}."
            f"{options.pdf_parser or ingest.pdf_parser}.{options.ocr}.{options.encoding or 'auto'}")


def fingerprint(digest: str, processing: str) -> str:
    return f"{digest}+{processing}" if processing else digest


def link_groups_refusal(f: SourceFile, rules: AccessRules) -> str | None:
    """A link whose access groups (decided on its own path) are not its target's is not followed: a link in a
    public folder would publish another group's document."""
    if not f.link:
        return None
    try:
        target = f.path.resolve(strict=True)
    except (OSError, RuntimeError):  # gone or looping since the walk
        return "symbolic link whose target changed since the walk (not followed)"
    if rules.groups_for(f.path) == rules.groups_for(target):
        return None
    return "symbolic link to a file of other access groups (not followed)"


def plan_run(files: list[SourceFile | Rejected], registry: dict[str, dict[str, Any]], roots: list[Path], force: bool,
             max_bytes: int, rules: AccessRules | None = None, processing: str = "",
             shard: Shard | None = None, on_file: Callable[[str], None] | None = None,
             hard_links: str = "refuse", names: Names | None = None) -> Plan:
    """Which files to parse, which are unchanged (same bytes, same processing, same access groups), which
    indexed documents lost their file, and which files cannot be read (reported, never fatal). With a
    ``shard``, ``files`` are that partition's and only its vanished documents are removed. ``on_file`` hears of
    each file before it is hashed (a run's watchdog: hashing a large archive is progress too). A file with
    several names (hard links) is refused, or with ``hard_links`` ``same-groups`` taken under its first name when
    ``names`` (every name the walk found, all partitions) holds them all under the same groups; an indexed
    document of a refused or further name is removed."""
    plan = Plan([], [], [], [])
    names = names if names is not None else names_found(files)
    withdrawn: set[str] = set()
    seen = set()
    for f in sorted(files, key=lambda f: isinstance(f, SourceFile) and f.link):  # real names first
        if isinstance(f, Rejected):
            plan.rejected.append(f)
            continue
        if rules is not None and (refusal := link_groups_refusal(f, rules)) is not None:
            plan.rejected.append(Rejected(f.display, refusal))
            continue
        if (refusal := hard_link_refusal(f, names, rules, hard_links)) is not None:
            plan.rejected.append(Rejected(f.display, refusal))
            withdrawn.add(f.doc_id)
            continue
        if is_twin(f, names):
            plan.twins.append(f)
            withdrawn.add(f.doc_id)
            continue
        if f.doc_id in seen:
            plan.aliases.append(f)
            continue
        if f.link:
            plan.rejected.append(Rejected(f.display, "symbolic link to a file this run does not take under its own "
                                                     "name (not followed)"))
            continue
        seen.add(f.doc_id)
        if f.size > max_bytes:
            plan.too_big.append(f)
            continue
        if on_file is not None:
            on_file(f.display)
        try:
            digest = fingerprint(planned_hash(f), processing)
        except OSError as exc:
            plan.rejected.append(Rejected(f.display, os_reason(exc)))
            continue
        except FileMoved as exc:
            plan.rejected.append(Rejected(f.display, exc.message))
            continue
        groups = rules.groups_for(f.path) if rules else list((registry.get(f.doc_id) or {}).get("access_groups", []))
        if is_current(registry.get(f.doc_id), digest, groups) and not force:
            plan.unchanged.append(f)
        else:
            plan.todo.append((f, digest))
    resolved = [r.resolve() for r in roots]
    plan.gone = [e for e in registry.values()
                 if e.get("doc_id") not in seen and (shard is None or shard.holds(str(e.get("doc_id"))))
                 and (root := next((r for r in resolved if Path(e["file_path"]).is_relative_to(r)), None)) is not None
                 and not in_place(Path(e["file_path"]), root)]
    plan.gone += [registry[d] for d in sorted(withdrawn - seen) if d in registry]
    return plan


def planned_hash(f: SourceFile) -> str:
    """The bytes' digest of the file the plan names, read where the walk found it (``open_planned``)."""
    fd = open_planned(f.path, f.root, f.identity)
    try:
        return hash_descriptor(fd)
    finally:
        os.close(fd)


def planned_outcomes(plan: Plan) -> list[FileOutcome]:
    """The outcomes the plan decides without reading a file: unchanged and linked files skipped, files too big
    or unreadable failed. The run records them as they are; the dry run reports them beside what it would do."""
    return ([FileOutcome(f.display, "skipped", reason="unchanged") for f in plan.unchanged]
            + [FileOutcome(f.display, "skipped", reason="a link to a file ingested under its own name")
               for f in plan.aliases]
            + [FileOutcome(f.display, "skipped", reason="another name (hard link) of a file ingested under its first")
               for f in plan.twins]
            + [FileOutcome(f.display, "failed", reason=f"{f.size} bytes, over STROIDOK_INGEST_MAX_FILE_MB")
               for f in plan.too_big]
            + [FileOutcome(r.path, "failed", reason=r.reason) for r in plan.rejected])


def dry_run_outcomes(plan: Plan) -> list[FileOutcome]:
    """What a run of ``plan`` would do: each file to parse, each vanished document to delete, and the
    outcomes the run would record without parsing (``planned_outcomes``)."""
    return ([FileOutcome(f.display, "planned", reason="index") for f, _ in plan.todo]
            + [FileOutcome(e["file_path"], "planned", e.get("chunk_count", 0), reason="delete") for e in plan.gone]
            + planned_outcomes(plan))
