"""Access-group names are checked wherever they enter: settings, tokens, rule files."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from pydantic import ValidationError

from ingest.access import AccessRules, load_rules, rules_refusal
from ingest.discover import Rejected, SourceFile, discover
from ingest.plan import plan_run
from service.errors import ConfigError
from service.settings import IngestSettings, ServerSettings
from service.settings.groups import check_groups

BAD = ["a,b", "", " legal", "a b", "-x", "_x", "x" * 65, "a\nb", "a\x00", "legal\n", "l\u0435gal", "отдeл"]


@pytest.mark.parametrize("name", ["public", "legal", "отдел-1", "hr.2026", "a_b", "x" * 64])
def test_a_word_is_a_group_name(name: str) -> None:
    assert check_groups([name]) == [name]


@pytest.mark.parametrize("name", BAD)
def test_a_name_with_a_separator_space_or_control_is_refused_everywhere(name: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        check_groups([name])
    with pytest.raises(ValidationError):
        ServerSettings(groups=[name])
    with pytest.raises(ValidationError):
        ServerSettings(tokens={"secret-token": ["public", name]})
    with pytest.raises(ValidationError):
        IngestSettings(default_groups=[name])
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "a/*", "groups": [name]}]}), encoding="utf-8")
    with pytest.raises(ConfigError):
        load_rules(rules, ["public"])


def test_a_name_is_taken_in_one_normal_form() -> None:
    nfd = unicodedata.normalize("NFD", "отдел-й")
    assert check_groups([nfd]) == [unicodedata.normalize("NFC", "отдел-й")]
    assert ServerSettings(groups=[nfd]).groups == ["отдел-й"]


def test_a_group_list_written_as_text_is_refused() -> None:
    with pytest.raises(ValueError):
        check_groups("legal")


def test_the_rules_digest_is_what_they_decide_not_how_they_are_written() -> None:
    one = AccessRules((("a/*", ("legal", "hr")),), ("public",))
    same = AccessRules((("a/*", ("hr", "legal", "hr")),), ("public",))
    other = AccessRules((("a/*", ("legal",)),), ("public",))
    assert one.digest() == same.digest() != other.digest()
    assert AccessRules((), ("public",)).digest() != one.digest()


def test_a_run_with_other_rules_is_refused_unless_told() -> None:
    ruled, none = AccessRules((("secret/*", ("legal",)),), ("public",)), AccessRules((), ("public",))
    record = {"digest": ruled.digest(), "summary": ruled.describe()}
    assert rules_refusal(None, none, False) is None  # a new index takes the run's rules
    assert rules_refusal(record, ruled, False) is None
    refusal = rules_refusal(record, none, False)
    assert refusal is not None and "--access-rules-changed" in refusal
    assert rules_refusal(record, none, True) is None


def test_a_link_to_a_file_of_other_groups_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    (root / "legal").mkdir(parents=True)
    (root / "legal" / "contract.txt").write_text("договор", encoding="utf-8")
    (root / "open.txt").symlink_to(root / "legal" / "contract.txt")
    rules = AccessRules((("legal/*", ("legal",)),), ("public",))
    link: list[SourceFile | Rejected] = [f for f in discover([root], [], [])
                                         if isinstance(f, SourceFile) and f.path.name == "open.txt"]
    plan = plan_run(link, {}, [root], False, 1 << 20, rules)  # the link alone (its target under its own name
    assert plan.todo == [] and [r.reason for r in plan.rejected] == [  # is not part of this partition, say)
        "symbolic link to a file of other access groups (not followed)"]


@pytest.mark.parametrize("content", [
    {"rule": [{"pattern": "secret/", "groups": ["legal"]}]},          # a misspelt key: not "no rules"
    {"rules": [{"pattern": "secret/", "group": ["legal"]}]},          # a misspelt entry key
    {"rules": [{"pattern": "secret/"}]},                              # no groups
    {"rules": [{"groups": ["legal"]}]},                               # no pattern
    {"rules": [{"pattern": "", "groups": ["legal"]}]},                # an empty pattern
    {"rules": [{"pattern": ["secret/"], "groups": ["legal"]}]},       # a pattern of the wrong type
    {"rules": {"pattern": "secret/", "groups": ["legal"]}},           # rules not a list
    {"rules": [], "default": "public"},                               # a default written as text
    {"rules": [], "defaults": ["legal"]},                             # a misspelt default
    [],
])
def test_a_rule_file_not_of_the_exact_form_is_a_config_error(content: object, tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_rules(rules, ["public"])
    assert raised.value.code == "CONFIG_ERROR"


def test_an_absolute_pattern_written_through_a_linked_folder_matches_the_walked_path(tmp_path: Path) -> None:
    real = tmp_path / "data" / "archive"
    (real / "secret").mkdir(parents=True)
    (tmp_path / "archive-link").symlink_to(real)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": f"{tmp_path}/archive-link/secret/*", "groups": ["legal"]}]}),
                     encoding="utf-8")
    loaded = load_rules(rules, ["public"])
    assert loaded.groups_for(real / "secret" / "a.txt") == ["legal"]  # the walk resolves its roots
    assert loaded.groups_for(tmp_path / "archive-link" / "secret" / "a.txt") == ["legal"]  # as the file writes it
    assert loaded.groups_for(real / "other.txt") == ["public"]
