"""A document's place from all its evidence, as ``evaluation.experiments.document_place`` replays it."""

from __future__ import annotations

from typing import Any

from evaluation.experiments.document_place import FEATURES, document_features, reordered
from service.search.answer.passages import POST, PRE


def hit(doc_id: str, score: float, title: str) -> dict[str, Any]:
    return {"_score": score, "_source": {"doc_id": doc_id, "title": title}}


def chunk(score: float, marked: list[str], kind: str | None = None) -> dict[str, Any]:
    text = " ".join(f"{PRE}{w}{POST}" for w in marked) + " прочий текст"
    return {"_score": score, "_source": {"section_kind": kind} if kind else {}, "highlight": {"text": [text]}}


HITS = [hit("a", 1.0, "Котельные установки"), hit("b", 0.9, "Эвакуационные пути и выходы")]
EVIDENCE = {"a": [chunk(10.0, ["ширина"]), chunk(4.0, ["ширина"], "foreword")],
            "b": [chunk(8.0, ["ширина", "эвакуационных", "выходов"]), chunk(6.0, ["выходов"])]}


def test_features_read_each_document_against_the_others() -> None:
    a, b = (dict(zip(FEATURES, row, strict=True)) for row in document_features(HITS, EVIDENCE))
    assert (a["fused"], a["best"], b["best"]) == (1.0, 1.0, 0.8)
    assert (a["covered"], b["covered"]) == (1 / 3, 1.0)  # the query's terms marked anywhere: three
    assert (a["title"], b["title"]) == (0.0, 2 / 3)  # «эвакуационных», «выходов» in b's title
    assert (a["second"], b["third"]) == (0.4, 0.0)
    assert (a["aside"], b["aside"]) == (0.5, 0.0)


def test_naming_words_count_for_no_document() -> None:
    a, b = document_features(HITS, EVIDENCE, naming=frozenset({"эвакуацион", "выход"}))
    assert a[FEATURES.index("covered")] == b[FEATURES.index("covered")] == 1.0


def test_the_document_holding_more_of_the_question_moves_up() -> None:
    assert [h["_source"]["doc_id"] for h in reordered(HITS, EVIDENCE, frozenset(), {"fused": 1.0}, 5)] == ["a", "b"]
    order = reordered(HITS, EVIDENCE, frozenset(), {"fused": 1.0, "covered": 1.0}, 5)
    assert [h["_source"]["doc_id"] for h in order] == ["b", "a"]


def test_only_the_first_documents_are_placed_again() -> None:
    hits = [*HITS, hit("c", 0.5, "Эвакуационные выходы")]
    evidence = {**EVIDENCE, "c": [chunk(9.0, ["ширина", "эвакуационных", "выходов"])]}
    order = reordered(hits, evidence, frozenset(), {"covered": 1.0}, 2)
    assert [h["_source"]["doc_id"] for h in order] == ["b", "a", "c"]
