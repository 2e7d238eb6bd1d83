from __future__ import annotations

from ingest.plan import writes_vectors_later


def test_auto_writes_text_first_only_for_an_embedder_too_slow_to_embed_while_parsing() -> None:
    assert writes_vectors_later("auto", "e5") is True
    assert writes_vectors_later("auto", "navec") is False


def test_later_and_now_are_what_they_say_whatever_the_embedder() -> None:
    assert writes_vectors_later("later", "navec") is True
    assert writes_vectors_later("now", "e5") is False
