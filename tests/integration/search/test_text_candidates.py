"""The text leg restricted to its best candidates on a real node, with the real templates and pipelines: one further
request a search, the candidates chosen under the access filter, totals said to be a lower bound only where more
chunks matched than the candidates, and the answer's first document the one every match would give."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from service.caller.principal import Principal
from service.embedders.navec import NavecEmbedder
from service.search.service import SearchService
from service.settings import Settings
from tests.integration.search.test_chunks_request import query_phases, shards
from tests.support.archives import RESTRICTED, ingest_archive
from tests.support.engine import drop_index_resources

pytestmark = pytest.mark.integration

PUBLIC = Principal.of("t", [])
LEGAL = Principal.of("l", ["legal"])
CANDIDATES = 4
BEST = "Бетон класса B25 для фундаментов: бетон укладывают слоями, бетон уплотняют вибраторами."


def _file(i: int, subject: str) -> str:
    return f"СП {100 + i}.13330.2020\nТребования {i}\n1.{i} {subject} применяют по проекту, раздел {i}.\n"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
            navec_embedder: NavecEmbedder) -> Iterator[Settings]:
    root: Path = tmp_path_factory.mktemp("candidates")
    files = {f"общие/бетон-{i}.txt": _file(i, "Бетон") for i in range(8)}
    files["общие/лучший.txt"] = f"СП 300.13330.2020\nБетонные работы\n2.1 {BEST}\n"
    files |= {f"общие/арматура-{i}.txt": _file(20 + i, "Арматура") for i in range(2)}
    files |= {f"{RESTRICTED}/арматура-{i}.txt": _file(40 + i, "Арматура арматура") for i in range(6)}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    settings = ingest_archive(root, opensearch_url, client, navec_embedder)
    yield settings
    drop_index_resources(client, settings.index)


def _service(settings: Settings, client: OpenSearch, embedder: NavecEmbedder, candidates: int) -> SearchService:
    changed = settings.model_copy(deep=True)
    changed.search.text_candidates = candidates
    changed.search.text_candidates_from = 0  # this archive is small: the candidates taken all the same
    return SearchService(changed, client, embedder)


def test_more_matches_than_candidates_count_as_a_lower_bound_and_the_best_comes_first(
        archive: Settings, client: OpenSearch, navec_embedder: NavecEmbedder) -> None:
    bounded = _service(archive, client, navec_embedder, CANDIDATES).search({"query": "бетон"}, PUBLIC)
    every = _service(archive, client, navec_embedder, 0).search({"query": "бетон"}, PUBLIC)
    assert every.meta.total_relation == "eq" and every.meta.total_results >= 9
    assert bounded.meta.total_relation == "gte"
    assert CANDIDATES <= bounded.meta.total_results <= every.meta.total_results
    assert bounded.results[0].id == every.results[0].id
    assert BEST.split(":")[0] in (bounded.results[0].context_chunks[0].text or "")


def test_candidates_are_chosen_among_what_the_caller_may_read(archive: Settings, client: OpenSearch,
                                                               navec_embedder: NavecEmbedder) -> None:
    """Six restricted documents match «арматура» better than the two public ones: a public reader's candidates
    are the two it may read (fewer than the bound: the count is exact), a «legal» reader's fill the bound."""
    service = _service(archive, client, navec_embedder, CANDIDATES)
    public = service.search({"query": "арматура", "search_mode": "hybrid"}, PUBLIC)
    assert public.meta.total_relation == "eq"
    assert all(RESTRICTED not in r.file_path for r in public.results)
    assert service.search({"query": "арматура"}, LEGAL).meta.total_relation == "gte"


def test_the_candidates_cost_one_further_request(archive: Settings, client: OpenSearch,
                                                 navec_embedder: NavecEmbedder) -> None:
    index = next(iter(client.indices.get_alias(name=archive.index.alias)))
    counted = {}
    for candidates in (0, CANDIDATES):
        service = _service(archive, client, navec_embedder, candidates)
        service.search({"query": "бетон"}, PUBLIC)  # what a service reads once (vector coverage) is read
        before = query_phases(client, index)
        service.search({"query": "бетон фундаментов"}, PUBLIC)
        counted[candidates] = query_phases(client, index) - before
    assert counted[CANDIDATES] - counted[0] == shards(client, index)


def test_a_small_archive_counts_every_match_exactly(archive: Settings, client: OpenSearch,
                                                     navec_embedder: NavecEmbedder) -> None:
    """Below ``text_candidates_from`` readable chunks every match is scored, as cheaply: exact totals."""
    settings = archive.model_copy(deep=True)
    settings.search.text_candidates = CANDIDATES
    response = SearchService(settings, client, navec_embedder).search({"query": "бетон"}, PUBLIC)
    assert response.meta.total_relation == "eq" and response.meta.total_results >= 9
