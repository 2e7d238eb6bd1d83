from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from service.query.passages import (
    POST,
    PRE,
    Span,
    choose_passage,
    is_contents,
    split_units,
    term_weights,
    unmark,
)


def _mark(text: str, *words: str) -> str:
    for word in words:
        text = text.replace(word, f"{PRE}{word}{POST}")
    return text


def test_unmark_gives_back_the_stored_text_and_where_each_term_was():
    marked = unmark(_mark("5.8 Высота жилых комнат", "Высота", "комнат"))
    assert marked.text == "5.8 Высота жилых комнат"
    assert [marked.text[a:b] for a, b in marked.marks] == ["Высота", "комнат"]


def test_units_are_lines_and_long_lines_split_after_sentences():
    text = "5.1 Короткий пункт.\n" + "Длинное предложение номер один про бетон и арматуру. " * 8 + "\n5.2 Ещё"
    units = split_units(text, 200)
    assert text[slice(*units[0])] == "5.1 Короткий пункт." and text[slice(*units[-1])] == "5.2 Ещё"
    assert len(units) > 3 and all(text[a:b] == text[a:b].strip() for a, b in units)


def test_a_contents_line_is_recognised_and_never_chosen():
    toc = "9.2 Расчет по прочности … 10 Конструктивные требования … 12 Защитный слой бетона … 14"
    assert is_contents(toc) and not is_contents("10.3 Толщина защитного слоя бетона … не менее 20 мм")
    text = toc + "\n10.3.1 Толщина защитного слоя бетона должна быть не менее 20 мм."
    marked = unmark(_mark(text, "защитного", "слоя", "бетона"))
    passage = choose_passage(marked, [Span(0, 3, None), Span(text.index("10.3.1"), 9, "10.3.1")],
                             term_weights([marked]), 300)
    assert passage.text.startswith("10.3.1") and (passage.clause, passage.page) == ("10.3.1", 9)


def test_a_passage_spanning_two_clauses_says_so():
    text = "4.1 Начало требования про лестницы.\n4.2 Лестницы должны иметь ширину марша не менее 1,05 м."
    marked = unmark(_mark(text, "лестницы", "Лестницы"))
    spans = [Span(0, 5, "4.1"), Span(text.index("4.2"), 6, "4.2")]
    passage = choose_passage(marked, spans, term_weights([marked]), 300)
    assert passage.text.startswith("4.1") and (passage.clause, passage.clause_end) == ("4.1", "4.2")
    assert (passage.page, passage.page_end) == (5, 6)


words = st.text(alphabet="абвгдежзиклмнопрстуфхцчшщыэюя", min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(words, min_size=1, max_size=40), min_size=1, max_size=12), st.integers(60, 700),
       st.integers(0, 10_000))
def test_a_passage_never_starts_or_ends_inside_a_word_and_fits_its_size(lines, size, seed):
    text = "\n".join(" ".join(line) + "." for line in lines)
    chosen = random.Random(seed).sample(sorted({w for line in lines for w in line}), 1)
    marked = unmark(" ".join(f"{PRE}{w}{POST}" if w in chosen else w for w in text.split(" ")))
    passage = choose_passage(marked, [Span(0, 1, "1.1")], term_weights([marked]), size)
    assert len(passage.text) <= size
    assert passage.start == 0 or not marked.text[passage.start - 1].isalpha()
    assert passage.end == len(marked.text) or not marked.text[passage.end].isalpha()
    assert passage.text and passage.text in " ".join(marked.text.split())
