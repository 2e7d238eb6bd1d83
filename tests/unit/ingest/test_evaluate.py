from __future__ import annotations

from pathlib import Path

from evaluation.evaluate import EvalDocument, ModeResult, format_table, load_beir, prepared
from service.settings import Settings


def test_load_beir_keeps_only_judged_queries(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text('{"_id": "d1", "title": "T", "text": "бетон"}\n', encoding="utf-8")
    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "бетон?"}\n{"_id": "q2", "text": "сталь?"}\n',
                                      encoding="utf-8")
    (tmp_path / "r.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    evalset = load_beir(tmp_path / "c.jsonl", tmp_path / "q.jsonl", tmp_path / "r.tsv")
    assert evalset.queries == {"q1": "бетон?"}
    assert evalset.qrels == {"q1": {"d1": 1}}
    assert evalset.documents[0].pages == ["бетон"]


def test_prepared_document_keeps_pages_and_a_stable_id() -> None:
    doc = EvalDocument("ГОСТ 1/2", "Заголовок", ["первая страница", "вторая страница"])
    first, again = prepared(doc, Settings()), prepared(doc, Settings())
    assert first.doc_id == again.doc_id
    assert [(c.page, c.page_end) for c in first.chunks] == [(1, 2)]
    assert first.parsed.title == "Заголовок"


def test_table_lists_every_metric_per_mode() -> None:
    result = ModeResult("hybrid", {n: 0.5 for n in ("nDCG@10", "Recall@5", "Recall@10", "MRR@10", "P@5",
                                                    "success@5")}, 10.0, 20.0)
    table = format_table([result], "title")
    assert "nDCG@10" in table and "success@5" in table and "hybrid" in table and "0.5000" in table


def test_within_two_calls_counts_first_call_answers_and_second_call_answers_once() -> None:
    from evaluation.answers import AnswerTally, Judged, Shown

    judged = Judged(("не менее 2,5 м",))
    answering, other = Shown(0, "Высота не менее 2,5 м.", None, None, 1, None), Shown(0, "Прочее.", None, None, 1, None)
    tally = AnswerTally()
    assert tally.add([answering], judged, 100) is True
    assert tally.add([other], judged, 100) is False
    assert tally.add([other], judged, 100) is False
    tally.second += 1  # the second call inside the first document answered one of the two misses
    metrics = tally.metrics()
    assert metrics["answer@5"] == round(1 / 3, 4) and metrics["within_two_calls"] == round(2 / 3, 4)


def test_a_passage_answers_by_its_quote_or_by_the_judged_documents_clause_label() -> None:
    from evaluation.answers import Judged, Shown, answers

    judged = Judged(("превыш ает 5 % площ ади",), "СП 12", "6.2", 20, (("СП 99", "4.1"),))
    repaired = "6.2 Здание относится к категории А, если … превышает 5 % площади всех помещений."
    assert answers(Shown(0, repaired, "6.2", None, 20, None, "СП 12"), judged)  # the scan's error kept in the quote
    assert answers(Shown(0, "4.1 То же.", "4.1", None, 3, None, "СП 99"), judged)  # an `also` pair
    assert not answers(Shown(0, repaired, "6.2", None, 20, None, "СП 13"), judged)  # another document's 6.2
    assert not answers(Shown(0, repaired, "6.3", None, 20, None, "СП 12"), judged)  # another clause
    assert not answers(Shown(0, repaired, "6.2", None, 20, None, None), judged)  # its document not known
    assert answers(Shown(0, "… превыш ает 5 % площ ади …", None, None, 1, None), judged)  # the quote alone


def test_a_clause_sets_also_pairs_are_loaded(tmp_path: Path) -> None:
    from evaluation.answers import load_answers

    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "d1", "answer": "не менее 3", "doc": "СП 1", "clause": "6.2", "page": 5, '
                    '"also": [{"doc": "СП 2", "clause": "10.1"}]}\n', encoding="utf-8")
    assert load_answers(path)["d1"].also == (("СП 2", "10.1"),)
