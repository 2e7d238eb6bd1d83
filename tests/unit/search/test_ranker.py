"""The learned passage ranker: its features, its shipped weights, and the fit that produces them."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.passage_fit import Group, fit
from service.search.answer.map import Candidate, learned_passages
from service.search.answer.passages import POST, PRE, Span, has_value, term_weights, unmark
from service.search.answer.ranker import FEATURES, MODEL, WEIGHTS, DocumentTerms, lead_terms, unit_values
from service.search.answer.words import split_units

FIGURE = ("6.1 Уклон лестничных маршей на путях эвакуации принимают по таблице 4.\n"
          + "Прочий текст раздела без чисел и без слов запроса. " * 3
          + "\n7.1 Уклон лестничных маршей на путях эвакуации должен быть не более 1:2 и 45 %.")


def _marked(text: str, *words: str) -> str:
    for word in words:
        text = text.replace(word, f"{PRE}{word}{POST}")
    return text


def _passage(weights: dict[str, float]) -> str | None:
    marked = unmark(_marked(FIGURE, "Уклон", "лестничных", "маршей", "эвакуации"))
    spans = [Span(0, 5, "6.1"), Span(FIGURE.index("7.1"), 6, "7.1")]
    candidate = Candidate({"_source": {}}, marked, spans, 1.0)
    units = split_units(marked.text)
    [(_, passage)] = learned_passages([candidate], term_weights([marked]), [{}], [None], (), 90, weights)
    assert len(units) > 2
    return passage.passage.clause


def test_among_windows_covering_the_same_words_the_one_stating_the_value_is_the_passage() -> None:
    assert _passage(MODEL.normative) == "7.1"
    assert _passage({**WEIGHTS, "value": 0.0, "numeric": 0.0}) == "6.1"  # blind to figures: the earlier clause


def test_inside_one_document_a_chunk_shows_its_best_windows_that_share_no_unit_best_first() -> None:
    marked = unmark(_marked(FIGURE, "Уклон", "лестничных", "маршей", "эвакуации"))
    spans = [Span(0, 5, "6.1"), Span(FIGURE.index("7.1"), 6, "7.1")]
    candidate = Candidate({"_source": {}}, marked, spans, 1.0)
    one = [(i, p.passage) for i, p in learned_passages([candidate], term_weights([marked]), [{}], [None], (), 90,
                                                        MODEL.normative)]
    several = [(i, p.passage) for i, p in learned_passages([candidate], term_weights([marked]), [{}], [None], (), 90,
                                                            MODEL.normative, 3)]
    assert [p.clause for _, p in one] == ["7.1"]
    assert [p.clause for _, p in several][:2] == ["7.1", "6.1"]  # the answering clause first, then the other
    assert [p.score for _, p in several] == sorted((p.score for _, p in several), reverse=True)
    ranges = sorted((p.start, p.end) for _, p in several)
    assert all(a[1] <= b[0] for a, b in pairwise(ranges))  # no text shown twice


def test_the_shipped_weights_name_every_feature() -> None:
    assert tuple(WEIGHTS) == FEATURES


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["не менее 2,5 м", "по таблице 4", "45 %", "в 2 ряда", "не реже 1 раза в год"]),
                min_size=1, max_size=10))
def test_a_unit_states_a_value_when_its_own_text_does(lines: list[str]) -> None:
    text = "\n".join(f"Пункт {i}: {line}." for i, line in enumerate(lines))
    units = split_units(text)
    chunk = unmark(text)
    assert unit_values(chunk, units) == [has_value(text[a:b]) for a, b in units]


def test_the_fit_weights_the_feature_that_marks_the_answering_window() -> None:
    rng = np.random.default_rng(7)
    groups = []
    for q in range(40):
        features = rng.normal(size=(6, len(FEATURES)))
        answer = int(rng.integers(6))
        features[answer, FEATURES.index("value")] += 3.0  # the answering window states the value
        labels = np.zeros(6, dtype=bool)
        labels[answer] = True
        groups.append(Group("synthetic", f"q{q}", features, labels))
    weights = fit(groups, names=FEATURES)
    assert max(weights, key=lambda name: abs(weights[name])) == "value" and weights["value"] > 0


def test_several_windows_of_a_chunk_are_those_an_exhaustive_reading_chooses() -> None:
    from service.search.answer.map import chunk_contexts, document_windows
    from service.search.answer.ranker import DocumentTerms, best_windows, non_overlapping, window_scores

    text = FIGURE + "\n7.2 Ширина марша лестницы на путях эвакуации не менее 1,05 м.\n7.3 Уклон пандуса не более 1:12."
    marked = unmark(_marked(text, "Уклон", "марша", "маршей", "эвакуации"))
    spans = [Span(0, 5, "6.1"), Span(text.index("7.1"), 6, "7.1"), Span(text.index("7.2"), 6, "7.2"),
             Span(text.index("7.3"), 6, "7.3")]
    candidate = Candidate({"_source": {}}, marked, spans, 1.0)
    weights = term_weights([marked])
    for count in (1, 2, 3):
        [lazy] = chunk_contexts([candidate], [{}], [None], weights, 90, values=False)
        [full] = chunk_contexts([candidate], [{}], [None], weights, 90, values=True)
        [(windows, _)] = document_windows([lazy], DocumentTerms.of(weights), ())
        [(read, _)] = document_windows([full], DocumentTerms.of(weights), ())
        every = list(zip(window_scores([f for _, f in read], MODEL.normative), (w for w, _ in read), strict=True))
        chosen, expected = best_windows(lazy, windows, MODEL.normative, count), non_overlapping(every, count)
        assert [w for _, w in chosen] == [w for _, w in expected] and len(chosen) == count
        assert [s for s, _ in chosen] == pytest.approx([s for s, _ in expected])


LEAD = ("5.1.3 Перед наружной дверью здания с числом людей более пятидесяти человек предусматривают площадку "
        "эвакуационного выхода шириной не менее 1,5 м.\n"
        "4.2.19 Ширина эвакуационных выходов должна быть не менее 0,8 м, а из помещений с числом людей более "
        "пятидесяти человек ее увеличивают по расчету, что проверяют при приемке здания.")


def _lead_passage(weights: dict[str, float]) -> str | None:
    marked = unmark(_marked(LEAD, "эвакуационного", "выхода", "шириной", "Ширина", "эвакуационных", "выходов"))
    spans = [Span(0, 7, "5.1.3"), Span(LEAD.index("4.2.19"), 7, "4.2.19")]
    candidate = Candidate({"_source": {}}, marked, spans, 1.0)
    [(_, passage)] = learned_passages([candidate], term_weights([marked]), [{}], [None], (), 150, weights)
    return passage.passage.clause


def test_of_two_clauses_holding_the_same_words_the_one_they_open_is_the_passage() -> None:
    """«ширина эвакуационных выходов»: the clause whose subject they are, not one naming them in passing."""
    assert _lead_passage(MODEL.normative) == "4.2.19"
    assert _lead_passage({**WEIGHTS, "lead": 0.0}) == "5.1.3"  # blind to where the words stand: the earlier


def test_a_windows_lead_counts_the_query_terms_of_its_first_words_as_terms_counts_them() -> None:
    marked = unmark(_marked(LEAD, "эвакуационного", "выхода", "шириной", "Ширина", "эвакуационных", "выходов"))
    weights = term_weights([marked])
    doc = DocumentTerms.of(weights)
    second = LEAD.index("4.2.19")
    assert lead_terms(marked, 0, second, doc) == 0.0  # its terms stand after its first words
    assert lead_terms(marked, second, len(LEAD), doc) == pytest.approx(sum(weights.values()) / doc.top)
