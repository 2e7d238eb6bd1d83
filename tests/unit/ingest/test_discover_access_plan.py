from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ingest.access import AccessRules, load_rules
from ingest.discover import Shard, SourceFile, content_hash, discover, document_id, matches
from ingest.place import open_in_place
from ingest.plan import Plan, plan_run
from service.errors import ConfigError, FileMoved


def test_discover_finds_supported_files_and_skips_hidden(tmp_path: Path) -> None:
    for name in ("a.pdf", "b.DOCX", "c.exe", ".hidden.txt", "~$lock.docx", "sub/d.txt", ".git/e.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    found = sorted(f.relative for f in discover([tmp_path], [], []))
    assert found == ["a.pdf", "b.DOCX", "sub/d.txt"]
    assert [f.relative for f in discover([tmp_path], ["*.txt"], [])] == ["sub/d.txt"]
    assert sorted(f.relative for f in discover([tmp_path], [], ["sub/*"])) == ["a.pdf", "b.DOCX"]


@pytest.mark.parametrize(("relative", "include", "exclude", "ok"), [
    ("нормы/сп.pdf", ["*.pdf"], [], True), ("нормы/сп.pdf", ["нормы/*"], [], True),
    ("нормы/сп.pdf", [], ["нормы/*"], False), ("сп.docx", ["*.pdf"], [], False),
])
def test_matches(relative: str, include: list[str], exclude: list[str], ok: bool) -> None:
    assert matches(relative, include, exclude) is ok


def test_document_id_is_stable_and_hides_the_path(tmp_path: Path) -> None:
    path = tmp_path / "секретный проект.pdf"
    assert document_id(path) == document_id(path) and len(document_id(path)) == 20
    assert "секрет" not in document_id(path)


def test_access_rules_first_match_wins(tmp_path: Path) -> None:
    rules_file = tmp_path / "rules.json"
    rules_file.write_text(json.dumps({"rules": [{"pattern": "contracts/*", "groups": ["legal"]},
                                                {"pattern": "*", "groups": ["staff"]}]}))
    rules = load_rules(rules_file, ["public"])
    assert rules.groups_for(Path("contracts/a.pdf")) == ["legal"]
    assert rules.groups_for(Path("x.pdf")) == ["staff"]
    assert load_rules(None, ["public"]).groups_for(Path("x.pdf")) == ["public"]
    rules_file.write_text("{not json")
    with pytest.raises(ConfigError):
        load_rules(rules_file, ["public"])


def test_plan_skips_unchanged_and_finds_deleted(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_text("same")
    (tmp_path / "changed.txt").write_text("new")
    files = list(discover([tmp_path], [], []))
    by_name = {f.path.name: f for f in files}
    registry = {
        by_name["same.txt"].doc_id: {"content_hash": content_hash(tmp_path / "same.txt"),
                                     "file_path": str(tmp_path / "same.txt")},
        by_name["changed.txt"].doc_id: {"content_hash": "old", "file_path": str(tmp_path / "changed.txt")},
        "gone": {"doc_id": "gone", "file_path": str(tmp_path / "gone.txt")},
        "elsewhere": {"doc_id": "elsewhere", "file_path": "/other/root/x.txt"},
    }
    plan = plan_run(files, registry, [tmp_path], force=False, max_bytes=10**6)
    assert [f.path.name for f, _ in plan.todo] == ["changed.txt"]
    assert [f.path.name for f in plan.unchanged] == ["same.txt"]
    assert [e["doc_id"] for e in plan.gone] == ["gone"]
    forced = plan_run(files, registry, [tmp_path], force=True, max_bytes=10**6)
    assert len(forced.todo) == 2
    assert plan_run(files, {}, [tmp_path], force=False, max_bytes=2).too_big


def test_a_change_of_parser_or_chunking_settings_re_indexes_unchanged_bytes(tmp_path: Path) -> None:
    from ingest.plan import IngestOptions, fingerprint, processing_signature
    from service.settings import Settings

    (tmp_path / "same.txt").write_text("same")
    files = list(discover([tmp_path], [], []))
    settings = Settings()
    before = processing_signature(settings, IngestOptions([tmp_path]))
    registry = {files[0].doc_id: {"content_hash": fingerprint(content_hash(tmp_path / "same.txt"), before),
                                  "file_path": str(tmp_path / "same.txt")}}
    assert plan_run(files, registry, [tmp_path], False, 10**6, processing=before).unchanged
    settings.ingest.chunk_chars += 100
    after = processing_signature(settings, IngestOptions([tmp_path]))
    assert after != before
    assert plan_run(files, registry, [tmp_path], False, 10**6, processing=after).todo
    assert plan_run(files, registry, [tmp_path], False, 10**6,
                    processing=processing_signature(Settings(), IngestOptions([tmp_path],
                                                                              pdf_parser="unstructured"))).todo


def test_shard_parse_refuses_malformed_partitions() -> None:
    assert Shard.parse("2/3") == Shard(2, 3)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/5000"):
        with pytest.raises(ValueError):
            Shard.parse(bad)


def test_shards_partition_ids_and_rejected_paths_exactly_once() -> None:
    keys = [f"{i:020x}" for i in range(0, 10**6, 997)] + [f"/archive/файл {i}.pdf" for i in range(300)]
    for count in (1, 2, 3, 7):
        owners = [[k for k in range(1, count + 1) if Shard(k, count).holds(key)] for key in keys]
        assert all(len(o) == 1 for o in owners)
        sizes = [sum(o == [k] for o in owners) for k in range(1, count + 1)]
        assert min(sizes) > len(keys) / count * 0.7  # roughly even


def test_plan_removes_only_the_vanished_documents_of_its_shard(tmp_path: Path) -> None:
    registry = {f"{i:020x}": {"doc_id": f"{i:020x}", "file_path": str(tmp_path / f"gone{i}.txt")} for i in range(40)}
    plans = [plan_run([], registry, [tmp_path], False, 10**6, shard=Shard(k, 3)) for k in (1, 2, 3)]
    removed = [{e["doc_id"] for e in p.gone} for p in plans]
    assert sum(len(r) for r in removed) == 40 and set().union(*removed) == set(registry)


@pytest.mark.parametrize("text", [
    '{"rules": [{"pattern": "legal/", "groups": ["legal"]}], "default": ["public"], "rules": []}',
    '{"rules": [{"pattern": "legal/", "groups": ["legal"], "groups": ["public"]}]}',
    '{"rules": [{"pattern": "legal/", "pattern": "nothing/", "groups": ["legal"]}]}',
])
def test_a_rule_file_giving_a_key_twice_is_refused_not_read_as_its_last(tmp_path: Path, text: str) -> None:
    rules_file = tmp_path / "rules.json"
    rules_file.write_text(text)
    with pytest.raises(ConfigError, match="twice"):
        load_rules(rules_file, ["public"])


def hard_linked(tmp_path: Path) -> tuple[Path, AccessRules]:
    """``legal/secret.txt`` (legal by the rules) with a second name ``public/copy.txt``, beside a plain public file."""
    root = tmp_path / "archive"
    (root / "legal").mkdir(parents=True)
    (root / "public").mkdir()
    (root / "legal" / "secret.txt").write_text("Секретный договор")
    os.link(root / "legal" / "secret.txt", root / "public" / "copy.txt")
    (root / "public" / "plain.txt").write_text("Обычный документ")
    rules_file = tmp_path / "rules.json"
    rules_file.write_text(json.dumps({"rules": [{"pattern": "legal/", "groups": ["legal"]}]}))
    return root, load_rules(rules_file, ["public"])


def planned(root: Path, rules: AccessRules, mode: str, registry: dict[str, dict[str, Any]] | None = None) -> Plan:
    return plan_run(list(discover([root], [], [])), registry or {}, [root], False, 2**30, rules, hard_links=mode)


def test_a_hard_linked_file_is_refused_under_every_name_by_default(tmp_path: Path) -> None:
    root, rules = hard_linked(tmp_path)
    plan = planned(root, rules, "refuse")
    assert [f.path.name for f, _ in plan.todo] == ["plain.txt"]
    refused = {Path(r.path).name: r.reason for r in plan.rejected}
    assert set(refused) == {"secret.txt", "copy.txt"} and all("hard links" in r for r in refused.values())


def test_hard_links_across_groups_are_refused_even_where_hard_links_are_taken(tmp_path: Path) -> None:
    root, rules = hard_linked(tmp_path)
    plan = planned(root, rules, "same-groups")
    assert [f.path.name for f, _ in plan.todo] == ["plain.txt"]
    assert {Path(r.path).name for r in plan.rejected} == {"secret.txt", "copy.txt"}


def test_hard_links_whose_names_the_run_finds_under_one_group_are_taken_once(tmp_path: Path) -> None:
    root, rules = hard_linked(tmp_path)
    os.link(root / "public" / "plain.txt", root / "public" / "plain-again.txt")
    plan = planned(root, rules, "same-groups")
    assert [f.path.name for f, _ in plan.todo] == ["plain-again.txt"]  # the first name in path order
    assert [f.path.name for f in plan.twins] == ["plain.txt"]


def test_a_hard_link_whose_other_name_lies_outside_the_run_is_refused(tmp_path: Path) -> None:
    root, rules = hard_linked(tmp_path)
    plan = plan_run(list(discover([root / "public"], [], [])), {}, [root / "public"], False, 2**30, rules,
                    hard_links="same-groups")
    assert "copy.txt" in {Path(r.path).name for r in plan.rejected}


def test_an_indexed_document_of_a_refused_hard_link_is_removed(tmp_path: Path) -> None:
    root, rules = hard_linked(tmp_path)
    copy = next(f for f in discover([root], [], []) if isinstance(f, SourceFile) and f.path.name == "copy.txt")
    registry = {copy.doc_id: {"doc_id": copy.doc_id, "file_path": str(copy.path), "content_hash": "x"}}
    plan = planned(root, rules, "refuse", registry)
    assert [e["doc_id"] for e in plan.gone] == [copy.doc_id]


def test_a_hard_link_made_after_the_walk_fails_the_read(tmp_path: Path) -> None:
    root, _ = hard_linked(tmp_path)
    plain = next(f for f in discover([root], [], []) if isinstance(f, SourceFile) and f.path.name == "plain.txt")
    os.link(plain.path, root / "legal" / "planted.txt")
    with pytest.raises(FileMoved, match="names now"):
        open_in_place(plain.path, plain.root, plain.identity or (0, 0, 0))
