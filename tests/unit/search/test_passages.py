from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from service.search.answer.passages import (
    POST,
    PRE,
    Span,
    choose_passage,
    has_value,
    is_contents,
    term_weights,
    unmark,
)
from service.search.answer.words import paragraphs, phrase_spans, split_units, term_key


def _mark(text: str, *words: str) -> str:
    for word in words:
        text = text.replace(word, f"{PRE}{word}{POST}")
    return text


def test_unmark_gives_back_the_stored_text_and_where_each_term_was() -> None:
    marked = unmark(_mark("5.8 Высота жилых комнат", "Высота", "комнат"))
    assert marked.text == "5.8 Высота жилых комнат"
    assert [marked.text[a:b] for a, b in marked.marks] == ["Высота", "комнат"]


def test_units_are_lines_and_long_lines_split_after_sentences() -> None:
    text = "5.1 Короткий пункт.\n" + "Длинное предложение номер один про бетон и арматуру. " * 8 + "\n5.2 Ещё"
    units = split_units(text, 200)
    assert text[slice(*units[0])] == "5.1 Короткий пункт." and text[slice(*units[-1])] == "5.2 Ещё"
    assert len(units) > 3 and all(text[a:b] == text[a:b].strip() for a, b in units)


def test_a_wrapped_line_continues_its_paragraph_and_a_new_clause_or_sentence_does_not() -> None:
    text = ("5.6 Габариты жилых комнат следует\nопределять с учетом эргономики.\nВысота коридоров не менее 2,1 м.\n"
            "5.7 Площадь")
    assert [text[a:b] for a, b in paragraphs(text)] == [
        "5.6 Габариты жилых комнат следует\nопределять с учетом эргономики.", "Высота коридоров не менее 2,1 м.",
        "5.7 Площадь"]


def test_inflections_of_a_term_share_one_key_and_different_terms_do_not() -> None:
    assert term_key("жилой") == term_key("жилых") == term_key("Жилая")
    assert term_key("ограждений") == term_key("ограждение") != term_key("огнезащита")
    assert term_key("500") == "500"


def test_the_passage_is_the_window_that_covers_most_of_the_query_not_the_best_single_line() -> None:
    # the best line (5.7: three common terms) loses to clause 5.8, whose two lines together hold four
    text = ("5.7 Высота жилых комнат кухонь.\n5.8 Высота помещений в северных подрайонах\n"
            "Жилых комнат не менее 2,7 м.\nВысота коридоров 2,1 м.")
    marked = unmark(_mark(text, "Высота", "жилых", "Жилых", "комнат", "подрайонах"))
    spans = [Span(0, 13, "5.7"), Span(text.index("5.8"), 14, "5.8")]
    passage = choose_passage(marked, spans, term_weights([marked]), 80)
    assert passage.text == "5.8 Высота помещений в северных подрайонах Жилых комнат не менее 2,7 м."
    assert (passage.clause, passage.page) == ("5.8", 14)


def test_a_passage_grows_back_to_its_clause_start_before_it_grows_on() -> None:
    text = ("4.2 Ограждения лестниц.\nПримечание к ограждениям общее.\nВысота ограждений не менее 0,9 м.\n"
            "Далее другой текст про окна и двери зданий и сооружений.")
    marked = unmark(_mark(text, "Высота"))
    passage = choose_passage(marked, [Span(0, 7, "4.2")], term_weights([marked]), 95)
    assert passage.text.startswith("4.2 Ограждения") and "0,9 м" in passage.text


def test_a_contents_line_is_recognised_and_never_chosen() -> None:
    toc = "9.2 Расчет по прочности … 10 Конструктивные требования … 12 Защитный слой бетона … 14"
    assert is_contents(toc) and not is_contents("10.3 Толщина защитного слоя бетона … не менее 20 мм")
    text = toc + "\n10.3.1 Толщина защитного слоя бетона должна быть не менее 20 мм."
    marked = unmark(_mark(text, "защитного", "слоя", "бетона"))
    passage = choose_passage(marked, [Span(0, 3, None), Span(text.index("10.3.1"), 9, "10.3.1")],
                             term_weights([marked]), 300)
    assert passage.text.startswith("10.3.1") and (passage.clause, passage.page) == ("10.3.1", 9)


def test_a_passage_spanning_two_clauses_says_so() -> None:
    text = "4.1 Начало требования про лестницы.\n4.2 Ширина марша должна быть не менее 1,05 м."
    marked = unmark(_mark(text, "лестницы", "Ширина"))
    spans = [Span(0, 5, "4.1"), Span(text.index("4.2"), 6, "4.2")]
    passage = choose_passage(marked, spans, term_weights([marked]), 300)
    assert passage.text.startswith("4.1") and (passage.clause, passage.clause_end) == ("4.1", "4.2")
    assert (passage.page, passage.page_end) == (5, 6)


words = st.text(alphabet="абвгдежзиклмнопрстуфхцчшщыэюя", min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(words, min_size=1, max_size=40), min_size=1, max_size=12), st.integers(60, 700),
       st.integers(0, 10_000))
def test_a_passage_never_starts_or_ends_inside_a_word_and_fits_its_size(lines: list[str], size: int, seed: int) -> None:
    text = "\n".join(" ".join(line) + "." for line in lines)
    chosen = random.Random(seed).sample(sorted({w for line in lines for w in line}), 1)
    marked = unmark(" ".join(f"{PRE}{w}{POST}" if w in chosen else w for w in text.split(" ")))
    passage = choose_passage(marked, [Span(0, 1, "1.1")], term_weights([marked]), size)
    assert len(passage.text) <= size
    assert passage.start == 0 or not marked.text[passage.start - 1].isalpha()
    assert passage.end == len(marked.text) or not marked.text[passage.end].isalpha()
    assert passage.text and passage.text in " ".join(marked.text.split())


def test_a_phrase_is_found_in_any_inflection_in_order_across_punctuation_and_lines() -> None:
    text = "5 Требования к квартирам,\nих элементам. Требованиями квартир нет; требования к квартирам."
    found = [text[a:b] for a, b in phrase_spans(text, "требования к квартирам")]
    assert found == ["Требования к квартирам", "требования к квартирам"]
    assert phrase_spans(text, "квартирам требования") == [] and phrase_spans(text, "…") == []


def test_a_bound_phrase_is_in_the_passage_even_when_another_window_answers_the_other_words_better() -> None:
    text = ("5 Требования к квартирам и их элементам.\n" + "Общие положения раздела о площадях. " * 6
            + "\n5.8 Высота жилых комнат и кухонь в северных районах не менее 2,7 м.")
    marked = unmark(_mark(text, "Требования", "квартирам", "Высота", "жилых", "комнат", "северных", "районах"))
    spans = [Span(0, 13, "5"), Span(text.index("5.8"), 14, "5.8")]
    free = choose_passage(marked, spans, term_weights([marked]), 120)
    bound = choose_passage(marked, spans, term_weights([marked]), 120, phrases=["требования к квартирам"])
    assert free.clause == "5.8" and free.has_phrases
    assert "Требования к квартирам" in bound.text and bound.clause == "5" and bound.has_phrases
    absent = choose_passage(marked, spans, term_weights([marked]), 120, phrases=["вентиляция кухонь"])
    assert not absent.has_phrases and absent.clause == "5.8"


def test_a_value_is_a_bound_or_a_quantity_with_its_unit_not_any_number() -> None:
    for text in ("должна быть не менее 2,7 м", "не более 10 %", "через каждые 30 мин", "0,04 м", "до 60 °С",
                 "на 15 дБА выше", "свыше 0,07 МПа"):
        assert has_value(text), text
    for text in ("согласно таблице 4", "по ГОСТ 22733", "в 2 ряда", "раздел 5.3 СП 17.13330.2017",
                 "10 в течение года", "3 места"):
        assert not has_value(text), text


def test_stems_are_right_when_many_threads_stem_at_once() -> None:
    # the MCP server runs calls in worker threads; one shared Snowball stemmer mixed their words up
    # (IndexError inside the stemmer, found by the chaos run's 20 concurrent clients)
    from concurrent.futures import ThreadPoolExecutor

    from service.search.answer.words import stem

    words = [f"{root}{ending}" for root in ("строительн", "конструкци", "эвакуационн", "огнестойк", "железобетон")
             for ending in ("ый", "ого", "ому", "ым", "ом", "ая", "ой", "ую", "ые", "ых", "ыми", "ия", "ий")] * 400
    expected = [stem(w) for w in words]
    with ThreadPoolExecutor(8) as pool:
        runs = list(pool.map(lambda _: [stem(w) for w in words], range(8)))
    assert all(run == expected for run in runs)


def test_a_value_is_found_by_one_search_exactly_where_each_number_followed_by_its_unit_is() -> None:
    from service.search.answer.passages import _NUMBER_RE, _UNIT_RE

    def by_numbers(text: str) -> bool:  # each number, then its unit right after it
        return any(_UNIT_RE.match(text, m.end()) for m in _NUMBER_RE.finditer(text))

    rng = random.Random(5)
    pieces = ["5", "1,5", "1.2.3", "12", ".", ",", " ", "\n", "м", "мм", "м2", "%", "°С", "ч", "мин", "раз", "разов",
              "метр", "кВт", "а", "x", "т", "ти"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert has_value(text) == by_numbers(text), text  # no piece makes a bound («не менее»)
