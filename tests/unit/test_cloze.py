"""Questions the archive writes itself by inverse cloze (``evaluation.cloze``), and the folds that keep a
document's questions on one side (``evaluation.passage_fit.folding``)."""

from __future__ import annotations

from types import SimpleNamespace

from evaluation.cloze import cloze_questions, without_values
from evaluation.passage_fit import fold_of, folding

TEXT = "\n".join([
    "10 Защита от хрупкого разрушения",
    "10.4 При толщине защитного слоя бетона более 40 мм следует предусматривать установку противооткольной "
    "сетки из проволоки диаметром 2—4 мм. Сетку следует фиксировать к арматуре.",
    "10.5 Конструкции следует проектировать с учетом требований настоящего свода правил и норм огнестойкости.",
    "10.6 Огнезащитные покрытия наносят по документации изготовителя покрытия, в два слоя: не менее 5 мм каждый.",
])


def test_a_value_and_its_bound_are_taken_out() -> None:
    assert without_values("Ширина выходов должна быть не менее 0,8 м в свету.") == "Ширина выходов должна быть в свету"
    assert without_values("сетки из проволоки диаметром 2—4 мм с ячейками 40—75 мм") == (
        "сетки из проволоки диаметром с ячейками")


def test_each_clause_stating_a_value_asks_its_sentence_without_it() -> None:
    rows = list(cloze_questions("СП 468", TEXT))
    assert [r["clause"] for r in rows] == ["10.4", "10.6"]  # 10.5 states no value; the heading is no clause
    first = rows[0]
    assert first["query"] == ("При толщине защитного слоя бетона следует предусматривать установку противооткольной "
                              "сетки из проволоки диаметром")
    assert first["doc"] == "СП 468" and TEXT.split("\n")[1].startswith("10.4 " + first["answer"])


def test_a_documents_questions_share_a_fold() -> None:
    rows = [SimpleNamespace(query_id=f"z{i}", judged=SimpleNamespace(document="СП 1" if i < 5 else "СП 2"))
            for i in range(10)]
    other = SimpleNamespace(query_id="d01", judged=SimpleNamespace(document="СП 1"))
    fold = folding({"cloze": rows, "dev": [other]}, {"cloze"}, 5)  # type: ignore[list-item,dict-item]
    assert len({fold(r) for r in rows[:5]}) == 1 and len({fold(r) for r in rows[5:]}) == 1
    assert fold(other) == fold_of("d01", 5)  # a judged set's question folds by itself
