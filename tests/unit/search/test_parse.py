from __future__ import annotations

import pytest

from service.search.request.parse import parse_query


@pytest.mark.parametrize(
    ("text", "terms", "phrases"),
    [
        ("пожарная безопасность", "пожарная безопасность", ()),
        ('"монтажный стык"', "", ("монтажный стык",)),
        ('контроль "сварных швов" ультразвуком', "контроль ультразвуком", ("сварных швов",)),
        ("«СП 48.13330» и «ГОСТ Р 21.101»", "и", ("СП 48.13330", "ГОСТ Р 21.101")),
        ('незакрытая "кавычка', "незакрытая кавычка", ()),
        ('""', "", ()),
    ],
)
def test_parse_query_splits_phrases_from_terms(text: str, terms: str, phrases: tuple[str, ...]) -> None:
    parsed = parse_query(text)
    assert parsed.terms == terms
    assert parsed.phrases == phrases


def test_plain_keeps_the_words_in_the_order_typed_without_quotes() -> None:
    assert parse_query('контроль "сварных швов" «СП 70»').plain == "контроль сварных швов СП 70"
