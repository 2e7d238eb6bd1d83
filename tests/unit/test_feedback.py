"""Linking what an agent opens to the search that showed it (pure logic; the log and stats are integration-tested)."""

from __future__ import annotations

import pytest

from service.errors import ConfigError
from service.usage.feedback import Opening, RecentSearches, document_of
from service.usage.stats import build_stats_body


def test_an_opening_links_to_the_newest_search_of_the_same_client_that_showed_it() -> None:
    recent = RecentSearches()
    recent.remember("a", "s1", ["d1", "d2", "d3"])
    recent.remember("a", "s2", ["d9", "d2"], offset=10)  # page 2 of another search
    assert recent.opened("a", "d2") == Opening("s2", 12)
    assert recent.opened("a", "d3:4") == Opening("s1", 3), "a chunk id opens its document"
    assert recent.opened("b", "d2") is None, "another client's searches are not this one's"
    assert recent.opened("a", "d7") is None


def test_searches_older_than_the_window_are_not_linked(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr("service.usage.feedback.time.monotonic", lambda: clock[0])
    recent = RecentSearches(window_s=60)
    recent.remember("a", "s1", ["d1"])
    clock[0] += 61
    assert recent.opened("a", "d1") is None


def test_a_chunk_id_names_its_document() -> None:
    assert document_of("abc:12") == "abc" and document_of("abc") == "abc"


def test_stats_count_only_callers_whose_groups_are_all_the_readers() -> None:
    body = build_stats_body("7d", ["public", "legal", "legal"])
    readable = body["query"]["bool"]["filter"][1]["bool"]["filter"][1]["terms_set"]["groups"]
    assert readable["terms"] == ["legal", "public"]
    assert readable["minimum_should_match_script"]["source"] == "doc['groups'].size()"


@pytest.mark.parametrize("since", ["7", "1w", "-1d", "7d; drop"])
def test_a_since_that_is_not_days_hours_or_minutes_is_refused(since: str) -> None:
    with pytest.raises(ConfigError):
        build_stats_body(since, ["public"])
