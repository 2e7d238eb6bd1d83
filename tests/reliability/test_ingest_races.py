"""An archive that changes under a run cannot publish another group's document: a folder swapped for a link
between the plan and the parse (a deterministic seam, ``ingest.pipeline.between_plan_and_parse``, stands in for a
user watching the folder), a folder swapped before the walk, a file replaced by another, and an indexed file whose
place becomes a link. Each ends with nothing of ``secret/`` readable by a public reader."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from ingest import pipeline
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions, Plan
from ingest.report import RunReport
from service.embedders.navec import NavecEmbedder
from service.settings import Settings
from tests.support.engine import drop_index_resources, product_settings

pytestmark = pytest.mark.integration
SECRET = "Секретный договор поставки бетона марки Б25 для бункера Хрустальный"
PUBLIC = "Обычный документ о поставке кирпича"


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """``archive/public/zzz/contract.txt`` (public) beside ``archive/secret/contract.txt`` (legal by the rules)."""
    root = tmp_path / "archive"
    (root / "public" / "zzz").mkdir(parents=True)
    (root / "secret").mkdir()
    (root / "public" / "zzz" / "contract.txt").write_text(PUBLIC, encoding="utf-8")
    (root / "secret" / "contract.txt").write_text(SECRET, encoding="utf-8")
    return root


@pytest.fixture
def settings(tmp_path: Path, opensearch_url: str, client: OpenSearch) -> Iterator[Settings]:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "secret/", "groups": ["legal"]}]}), encoding="utf-8")
    made = product_settings(opensearch_url, access_rules=rules)
    yield made
    drop_index_resources(client, made.index)


def swap_for_link(folder: Path, target: str) -> None:
    """What the attacker does: the folder moved away (out of the archive), a link to ``target`` in its place."""
    folder.rename(folder.parents[2] / f"{folder.name}.away")
    folder.symlink_to(target)


def public_texts(client: OpenSearch, alias: str) -> list[str]:
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 100, "query": {"term": {"access_groups": "public"}}})
    return [h["_source"]["text"] for h in hits["hits"]["hits"]]


def ingest(archive: Path, settings: Settings, client: OpenSearch, embedder: NavecEmbedder,
           between: Callable[[Plan], None] | None = None,
           monkeypatch: pytest.MonkeyPatch | None = None) -> RunReport:
    if between is not None and monkeypatch is not None:
        monkeypatch.setattr(pipeline, "between_plan_and_parse", between)
    return run_ingest(IngestOptions([archive]), settings, client, embedder, quiet=True)


def test_a_folder_swapped_for_a_link_between_plan_and_parse_publishes_nothing(
        archive: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder,
        monkeypatch: pytest.MonkeyPatch) -> None:
    report = ingest(archive, settings, client, navec_embedder,
                    lambda plan: swap_for_link(archive / "public" / "zzz", "../secret"), monkeypatch)

    outcome = next(o for o in report.outcomes if o.path.endswith("public/zzz/contract.txt"))
    assert outcome.status == "failed" and "replaced" in (outcome.reason or "")
    assert not any("Секретный" in t for t in public_texts(client, settings.index.alias))
    secret = next(o for o in report.outcomes if o.path.endswith("secret/contract.txt"))
    assert secret.status == "indexed"  # under its own place and groups


def test_a_file_replaced_by_another_between_plan_and_parse_is_not_read(
        archive: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def replace(plan: Plan) -> None:
        planted = archive / "public" / "zzz" / "planted.txt"
        planted.write_text(SECRET, encoding="utf-8")
        os.replace(planted, archive / "public" / "zzz" / "contract.txt")  # another inode at the planned place

    report = ingest(archive, settings, client, navec_embedder, replace, monkeypatch)

    outcome = next(o for o in report.outcomes if o.path.endswith("public/zzz/contract.txt"))
    assert outcome.status == "failed" and "another file" in (outcome.reason or "")


def test_a_folder_already_a_link_when_the_walk_comes_is_not_entered(
        archive: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    swap_for_link(archive / "public" / "zzz", "../secret")

    report = ingest(archive, settings, client, navec_embedder)

    assert not any("public/zzz/" in o.path for o in report.outcomes)
    assert not any("Секретный" in t for t in public_texts(client, settings.index.alias))


def test_an_indexed_file_whose_folder_becomes_a_link_loses_its_public_version(
        archive: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    assert ingest(archive, settings, client, navec_embedder).counts["indexed"] == 2
    assert any("кирпича" in t for t in public_texts(client, settings.index.alias))
    swap_for_link(archive / "public" / "zzz", "../secret")

    report = ingest(archive, settings, client, navec_embedder)

    assert any(o.status == "deleted" and o.path.endswith("public/zzz/contract.txt") for o in report.outcomes)
    assert public_texts(client, settings.index.alias) == []


def test_an_indexed_public_file_replaced_by_a_link_to_a_secret_one_loses_its_public_version(
        archive: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    assert ingest(archive, settings, client, navec_embedder).counts["indexed"] == 2
    planted = archive / "public" / "zzz" / "contract.txt"
    planted.unlink()
    planted.symlink_to("../../secret/contract.txt")

    report = ingest(archive, settings, client, navec_embedder)

    assert any(o.status == "deleted" and o.path.endswith("public/zzz/contract.txt") for o in report.outcomes)
    refused = next(o for o in report.outcomes if o.status == "failed")
    assert "other access groups" in (refused.reason or "")
    assert public_texts(client, settings.index.alias) == []


def test_a_hard_link_into_a_public_folder_publishes_nothing(
        archive: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    os.link(archive / "secret" / "contract.txt", archive / "public" / "hl_public.txt")

    report = ingest(archive, settings, client, navec_embedder)

    refused = {Path(o.path).name: o for o in report.outcomes if o.status == "failed"}
    assert "hard links" in (refused["hl_public.txt"].reason or "")
    assert not any("Секретный" in t for t in public_texts(client, settings.index.alias))


def test_a_public_file_swapped_for_a_hard_link_between_plan_and_parse_is_refused_then_and_after(
        archive: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap is caught in its own run (another file stands there); the next run, which finds the link in its
    walk, refuses it too instead of indexing the secret text as public."""
    public = archive / "public" / "zzz" / "contract.txt"

    def swap(plan: Plan) -> None:
        public.unlink()
        os.link(archive / "secret" / "contract.txt", public)

    first = ingest(archive, settings, client, navec_embedder, swap, monkeypatch)
    assert next(o for o in first.outcomes if o.path.endswith("public/zzz/contract.txt")).status == "failed"
    monkeypatch.setattr(pipeline, "between_plan_and_parse", lambda plan: None)

    second = ingest(archive, settings, client, navec_embedder)

    outcome = next(o for o in second.outcomes if o.path.endswith("public/zzz/contract.txt"))
    assert outcome.status == "failed" and "hard links" in (outcome.reason or "")
    assert not any("Секретный" in t for t in public_texts(client, settings.index.alias))


def test_an_indexed_public_file_replaced_by_a_hard_link_to_a_secret_one_loses_its_public_version(
        archive: Path, settings: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    assert ingest(archive, settings, client, navec_embedder).counts["indexed"] == 2
    public = archive / "public" / "zzz" / "contract.txt"
    public.unlink()
    os.link(archive / "secret" / "contract.txt", public)

    report = ingest(archive, settings, client, navec_embedder)

    assert any(o.status == "deleted" and o.path.endswith("public/zzz/contract.txt") for o in report.outcomes)
    assert public_texts(client, settings.index.alias) == []


def test_hard_links_under_one_group_are_indexed_once_where_the_setting_takes_them(
        archive: Path, tmp_path: Path, opensearch_url: str, client: OpenSearch,
        navec_embedder: NavecEmbedder) -> None:
    os.link(archive / "public" / "zzz" / "contract.txt", archive / "public" / "copy.txt")
    os.link(archive / "secret" / "contract.txt", archive / "public" / "leak.txt")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "secret/", "groups": ["legal"]}]}), encoding="utf-8")
    taking = product_settings(opensearch_url, access_rules=rules, hard_links="same-groups")
    try:
        report = ingest(archive, taking, client, navec_embedder)
        by_name = {Path(o.path).name: o for o in report.outcomes if "/public/" in o.path}
        assert by_name["copy.txt"].status == "indexed" and by_name["contract.txt"].status == "skipped"
        assert by_name["leak.txt"].status == "failed" and "different access groups" in (by_name["leak.txt"].reason
                                                                                        or "")
        assert public_texts(client, taking.index.alias) == [PUBLIC]
    finally:
        drop_index_resources(client, taking.index)
