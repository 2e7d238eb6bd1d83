"""What a chunk's vector is computed from."""

from __future__ import annotations

from ingest.index import context_text


def test_title_and_section_come_before_the_body() -> None:
    assert context_text("ГОСТ 10180-2012 Бетоны", "4 Отбор проб", "Образцы изготовляют") == \
        "ГОСТ 10180-2012 Бетоны. 4 Отбор проб. Образцы изготовляют"


def test_missing_or_repeated_heads_are_left_out() -> None:
    assert context_text(None, None, "текст") == "текст"
    assert context_text("Свод правил", "Свод правил", "текст") == "Свод правил. текст"
    assert context_text("", " ", "текст") == "текст"
