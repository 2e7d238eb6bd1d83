"""The first document read whole, as pure functions: its chunks that hold a query term as its candidates (with the
units the dense leg named in them), more of its units embedded, its passages chosen as a call inside it chooses
them; the words naming a document choose no passage; a chunk's spans read once."""

from __future__ import annotations

import itertools
import random

from service.search.answer.map import Pending, map_hits, read_whole_chunks, unit_similarities
from service.search.answer.passages import POST, PRE, Passage, Span, Spans, clause_bounds, span_at
from service.search.answer.ranker import MODEL, Model
from service.search.citations.designations import designation_words
from service.search.dsl.build import naming_keys, unweighted_keys
from service.search.request.parse import parse_query

TITLE = "СП 54.13330.2016 Здания жилые многоквартирные"


def _hit(doc: str, chunks: list[dict[str, object]]) -> dict[str, object]:
    return {"_score": 1.0, "_source": {"doc_id": doc, "file_name": f"{doc}.pdf", "file_path": f"/{doc}.pdf",
                                       "file_type": "pdf", "title": TITLE, "designation": "СП 54.13330.2016"},
            "inner_hits": {"chunks": {"hits": {"hits": chunks}}}}


def _chunk(doc: str, index: int, text: str, *words: str, score: float = 1.0,
           units: list[int] | None = None) -> dict[str, object]:
    marked = text
    for word in words:
        marked = marked.replace(word, f"{PRE}{word}{POST}")
    hit: dict[str, object] = {"_score": score, "_source": {"chunk_id": f"{doc}:{index}", "chunk_index": index,
                                                           "page_number": index + 1,
                                                           "spans": [{"o": 0, "p": index + 1, "c": f"{index}.1"}]},
                              "highlight": {"text": [marked]}}
    if units is not None:
        hit["inner_hits"] = {"units": {"hits": {"hits": [{"_score": 0.9, "_source": {"o": o}} for o in units]}}}
    return hit


ANSWER = "Высота жилых комнат должна быть не менее 2,7 м."
BEST = [_chunk("d1", i, f"Высота помещений и высота этажа {i} описаны в разделе высота.", "Высота", "высота")
        for i in range(8)]
LATER = _chunk("d1", 40, ANSWER, "Высота", "жилых", "комнат", score=0.2)


def test_the_first_document_shows_a_chunk_its_best_chunks_do_not_hold() -> None:
    hits = [_hit("d1", BEST), _hit("d2", [_chunk("d2", 0, "Высота ограждения балконов.", "Высота")])]
    alone = map_hits(hits, True, 3, 600, 1.0)
    read = map_hits(hits, True, 3, 600, 1.0, whole={"d1": [*BEST, LATER]})
    assert all(ANSWER not in c.text for c in alone[0].context_chunks)
    assert read[0].context_chunks[0].text == ANSWER and read[0].context_chunks[0].clause == "40.1"
    assert [c.text for c in read[1].context_chunks] == [c.text for c in alone[1].context_chunks]  # others as before


def test_a_chunk_read_whole_keeps_the_units_the_dense_leg_named_in_it() -> None:
    found = [_chunk("d1", 0, "Высота", "Высота", units=[0]), _chunk("d1", 1, "Без слов запроса", units=[0])]
    whole = [_chunk("d1", 0, "Высота", "Высота"), _chunk("d1", 5, "Высота потолка", "Высота")]
    read = read_whole_chunks(found, whole)
    assert [h["_source"]["chunk_id"] for h in read] == ["d1:0", "d1:5"]  # type: ignore[index]
    assert read[0]["inner_hits"]["units"]["hits"]["hits"][0]["_source"] == {"o": 0}
    assert "inner_hits" not in read[1]


def test_a_document_read_whole_embeds_its_units_the_engine_named_none_of() -> None:
    from service.search.answer.map import Candidate
    from service.search.answer.passages import unmark

    def candidate(text: str, units: list[int] | None) -> Candidate:
        hit = _chunk("d", 0, text, "бетон", units=units)
        return Candidate(hit, unmark(f"{PRE}бетон{POST} {text}"), Spans(), 1.0)

    groups = [[candidate("класс", [0])], [candidate("марка", None)], [candidate("смесь", None)]]
    lexical = [[[1.0]], [[1.0]], [[1.0]]]
    asked: list[str] = []

    def similarity(texts: list[str]) -> list[float]:
        asked.extend(texts)
        return [0.25 for _ in texts]

    cosines = unit_similarities(groups, lexical, similarity, None, [10, 20, 10], [False, True, False])
    assert cosines[0][0] == {0: 0.9 * 2 - 1} and cosines[1][0] == {0: 0.25} and cosines[2][0] == {}
    assert len(asked) == 1  # only the document read whole: the others keep what the engine gave


def test_the_words_naming_a_document_are_keys_no_passage_is_chosen_by() -> None:
    assert designation_words("По СП 158.13330 сколько между койками") == ["СП", "158.13330", "158", "13330"]
    assert naming_keys([parse_query("ГОСТ 464-79 сопротивление заземления")]) == {"гост", "464-79", "464", "79"}
    header = _chunk("d1", 3, "СП 54.13330.2016 страница 12", "СП")
    answer = _chunk("d1", 9, "Площадь кухни не менее 8 м2.", "кухни")
    [doc] = map_hits([_hit("d1", [header, answer])], True, 2, 600, 1.0,
                     naming=naming_keys([parse_query("СП 54.13330 площадь кухни")]))
    assert doc.context_chunks[0].text == "Площадь кухни не менее 8 м2."


def test_the_words_naming_the_kind_of_answer_choose_no_passage() -> None:
    """«требования к ширине эвакуационных выходов»: «требования» in a clause's running text is no nearer the
    answer than the clause stating the width."""
    query = [parse_query("требования к ширине эвакуационных выходов")]
    assert naming_keys(query) < unweighted_keys(query) and "требован" in unweighted_keys(query)
    aside = _chunk("d1", 3, "Дополнительные требования при строительстве школ: ширину эвакуационных выходов "
                   "не менее 1,5 м определяют расчетом, двери эвакуационных выходов выполняют противопожарными, "
                   "а на пятом этаже размещают только административные помещения.",
                   "требования", "ширину", "эвакуационных", "выходов")
    answer = _chunk("d1", 9, "Ширина эвакуационных выходов должна быть не менее 0,8 м.", "Ширина", "эвакуационных",
                    "выходов")
    blind = Model({**MODEL.normative, "lead": 0.0})  # where the words stand in a clause left aside
    [doc] = map_hits([_hit("d1", [aside, answer])], True, 1, 600, 1.0, model=blind, naming=unweighted_keys(query))
    [before] = map_hits([_hit("d1", [aside, answer])], True, 1, 600, 1.0, model=blind, naming=naming_keys(query))
    assert doc.context_chunks[0].text == "Ширина эвакуационных выходов должна быть не менее 0,8 м."
    assert before.context_chunks[0].text.startswith("Дополнительные требования")  # counted, the word decided


def test_a_question_of_frame_words_alone_keeps_them() -> None:
    assert "требован" not in unweighted_keys([parse_query("требования")])
    assert "норм" not in unweighted_keys([parse_query("СП 1.13130 нормы")])
    assert "норм" in unweighted_keys([parse_query("СП 1.13130 нормы ширины выходов")])


def test_a_pending_passage_is_made_once_and_only_when_read() -> None:
    made: list[int] = []

    def make() -> Passage:
        made.append(1)
        return Passage("текст", 0, 5, 1.0, None, None, None, None)

    pending = Pending(make, 1.0, False)
    assert pending.has_phrases and made == []
    assert pending.passage.text == "текст" and pending.passage.text == "текст" and made == [1]


def test_spans_read_once_find_the_same_span_and_clause_as_a_walk() -> None:
    rng = random.Random(7)
    for _ in range(300):
        offsets = sorted(rng.sample(range(1, 400), rng.randint(0, 12)))
        if rng.random() < 0.7:
            offsets = [0, *offsets]
        spans = [Span(o, rng.randint(1, 3), rng.choice(["4.1", "4.2", "5", None])) for o in offsets]
        fast = Spans(spans)
        for offset in range(0, 420, 7):
            assert span_at(fast, offset) == span_at(spans, offset)
            assert clause_bounds(fast, offset, 420) == clause_bounds(spans, offset, 420), (spans, offset)


def test_a_chunks_units_count_their_digits_as_each_unit_alone_would() -> None:
    from service.search.answer.ranker import unit_digits_and_chars

    def digits_and_chars(text: str) -> tuple[int, int]:
        return sum(map(text.count, "0123456789")), len(text) - text.count(" ") - text.count("\n")

    rng = random.Random(11)
    for _ in range(200):
        text = "".join(rng.choice("ab 12\n3x.,") for _ in range(rng.randint(0, 120)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 8))))
        units = list(itertools.pairwise(cuts))
        digits, chars = unit_digits_and_chars(text, units)
        assert list(zip(digits, chars, strict=True)) == [digits_and_chars(text[a:b]) for a, b in units]


def test_many_chunks_units_count_their_digits_as_each_chunk_alone_would() -> None:
    from service.search.answer.ranker import unit_digits_and_chars, units_digits_and_chars

    rng = random.Random(12)
    texts = ["".join(rng.choice("ab 12\n3x.,ж€😀") for _ in range(rng.randint(0, 90))) for _ in range(40)]
    units = [list(itertools.pairwise(sorted(rng.sample(range(len(t) + 1), min(len(t) + 1, rng.randint(0, 6))))))
             for t in texts]
    assert units_digits_and_chars(texts, units) == [unit_digits_and_chars(t, u) for t, u in zip(texts, units,
                                                                                                strict=True)]
    assert units_digits_and_chars([], []) == []
