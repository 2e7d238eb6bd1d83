"""Russian analysis and normative-code matching, checked through ``_analyze`` and real searches."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch

from service.engine.index_admin.apply import apply_all
from service.settings import IndexSettings

pytestmark = pytest.mark.integration


@pytest.fixture
def index(client: OpenSearch, index_settings: IndexSettings) -> str:
    apply_all(client, index_settings)
    return index_settings.alias


def tokens(client: OpenSearch, index: str, analyzer: str, text: str) -> list[str]:
    found = client.indices.analyze(index=index, body={"analyzer": analyzer, "text": text})
    return [t["token"] for t in found["tokens"]]


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("пожарной", "пожарная"),
        ("безопасности", "безопасность"),
        ("конструкций", "конструкция"),
        ("ёмкость", "емкость"),
        ("Всё", "все"),
        ("ударе\u0301ние", "ударение"),
        ("Москва\u0300", "москва"),
    ],
)
def test_russian_analyzer_folds_forms_alike(client: OpenSearch, index: str, left: str, right: str) -> None:
    assert tokens(client, index, "ru_text", left) == tokens(client, index, "ru_text", right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("толщиной 20мм", "толщиной 20 мм"),
        ("0,5 м", "0.5 м"),
        ("0.5м", "0,5 м"),
        ("сечение 120х60", "сечение 120 х 60"),
        ("200x300", "200 x 300"),
        ("10кВ", "10 кВ"),
    ],
)
def test_numbers_and_units_match_however_written(client: OpenSearch, index: str, left: str, right: str) -> None:
    for analyzer in ("ru_text", "ru_text_search"):
        assert tokens(client, index, analyzer, left) == tokens(client, index, analyzer, right)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("СП 48.13330.2019", ["сп", "48.13330.2019"]), ("бетон B25 F150 W6", ["бетон", "b25", "f150", "w6"])],
)
def test_codes_and_grade_marks_stay_whole_in_body_text(client: OpenSearch, index: str, text: str,
                                                      expected: list[str]) -> None:
    assert tokens(client, index, "ru_text", text) == expected


def test_russian_stop_words_are_dropped(client: OpenSearch, index: str) -> None:
    assert tokens(client, index, "ru_text", "и в на по для") == []


def test_distinct_words_stay_distinct(client: OpenSearch, index: str) -> None:
    assert tokens(client, index, "ru_text", "бетон") != tokens(client, index, "ru_text", "арматура")


DOCS = {
    "sp": "Требования СП 48.13330.2019 к организации строительства",
    "gost": "Оформление по ГОСТ Р 21.101-2020 (СПДС), основные требования",
    "snip": "СНиП 2.01.07-85* Нагрузки и воздействия",
    "other": "Свод правил 48.13331.2020 о другом предмете",
}


@pytest.fixture
def code_index(client: OpenSearch, index: str) -> str:
    for doc_id, text in DOCS.items():
        client.index(index=index, id=doc_id, body={"text": text, "chunk_id": doc_id})
    client.indices.refresh(index=index)
    return index


def matching(client: OpenSearch, index: str, code: str) -> set[str]:
    body = {"query": {"match_phrase": {"text.codes": code}}, "_source": False}
    return {hit["_id"] for hit in client.search(index=index, body=body)["hits"]["hits"]}


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("СП 48.13330.2019", {"sp"}),
        ("48.13330.2019", {"sp"}),
        ("48.13330", {"sp"}),
        ("сп 48.13330", {"sp"}),
        ("ГОСТ Р 21.101-2020", {"gost"}),
        ("21.101-2020", {"gost"}),
        ("21.101", {"gost"}),
        ("гост р 21.101", {"gost"}),
        ("СНиП 2.01.07-85", {"snip"}),
        ("2.01.07", {"snip"}),
        ("48.13331", {"other"}),
    ],
)
def test_normative_codes_match_whole_and_by_parts(client: OpenSearch, code_index: str, code: str,
                                                  expected: set[str]) -> None:
    assert matching(client, code_index, code) == expected


def test_plain_text_field_does_not_find_code_parts(client: OpenSearch, code_index: str) -> None:
    """Why the codes field exists: the standard tokenizer keeps 48.13330.2019 as one token."""
    body = {"query": {"match_phrase": {"text": "48.13330"}}}
    assert client.search(index=code_index, body=body)["hits"]["hits"] == []


def test_abbreviations_expand_at_search_time(client: OpenSearch, index: str) -> None:
    expanded = tokens(client, index, "ru_text_search", "состав ППР")
    assert "ппр" in expanded and "проект" in expanded and "производств" in expanded
    assert tokens(client, index, "ru_text", "состав ППР") == ["соста", "ппр"], "the index keeps the text as written"


@pytest.mark.parametrize(("query", "expected"), [("ППР", "full"), ("проекта производства работ", "abbr"),
                                                 ("входы для МГН", "mgn"), ("ИТП", "itp"),
                                                 ("до открытого распределительного устройства", "oru")])
def test_abbreviation_and_full_form_find_each_other(client: OpenSearch, index: str, query: str, expected: str) -> None:
    docs = {"full": "Состав проекта производства работ определяет подрядчик.",
            "abbr": "ППР утверждает главный инженер.",
            "mgn": "Входы для маломобильных групп населения оборудуют пандусами.",
            "itp": "Индивидуальный тепловой пункт размещают в отдельном помещении.",
            "oru": "Расстояние от склада угля до ОРУ принимают не менее 80 м.",
            "other": "Проект организации дорожного движения."}
    for doc_id, text in docs.items():
        client.index(index=index, id=doc_id, body={"text": text})
    client.indices.refresh(index=index)
    body = {"query": {"match": {"text": {"query": query, "operator": "and"}}}}
    found = {h["_id"] for h in client.search(index=index, body=body)["hits"]["hits"]}
    assert expected in found and "other" not in found
