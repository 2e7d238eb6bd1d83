"""A page's text layer judged by its content, and the known reversible faults repaired only when a Russian
dictionary confirms the repair (pure functions; the real files are in tests/integration/ingest/test_real_pdfs.py)."""

from __future__ import annotations

import pytest

from ingest.parse.layer import from_cp1251, judge, repair, shifted

RUSSIAN = ("Настоящий стандарт распространяется на шарикоподшипники качения и устанавливает технические "
           "требования к материалам, размерам и методам контроля. Допускается применять другие методы "
           "измерений при условии обеспечения требуемой точности. Результаты испытаний оформляют протоколом.")


def as_latin1_mojibake(text: str) -> str:
    """cp1251 bytes read as Latin-1, as old Cyrillic PDF fonts give them."""
    return text.encode("cp1251").decode("latin-1")


def shifted_font(text: str) -> str:
    """The alphabet moved down by 0x3D6 and digits/punctuation by 0x1D, as a font with its own encoding gives."""
    return "".join(chr(ord(c) - 0x3D6) if 0x410 <= ord(c) <= 0x44F else
                   chr(ord(c) - 0x1D) if c in "0123456789.,;:()-" else c for c in text)


def test_a_russian_page_reads_as_language() -> None:
    verdict = judge(RUSSIAN)
    assert not verdict.garbage and verdict.known_share > 0.9 and verdict.known >= 20


def test_glyph_numbers_are_garbage_whatever_their_length() -> None:
    soup = "\x12\x13'\x16(\x12\x15)*(+*,\x04#\x12\x13%-\x16$\x13'\x15*((\x12.\x12\x04\x14\x12,+'*'\x16\x04" * 40
    assert judge(soup).garbage
    assert repair(soup) is None


@pytest.mark.parametrize("broken, name", [(as_latin1_mojibake(RUSSIAN), "cp1251"),
                                          (shifted_font(RUSSIAN + " 1996 г."), "shift")])
def test_a_known_fault_is_garbage_and_is_repaired_to_the_text(broken: str, name: str) -> None:
    assert judge(broken).garbage
    fixed = repair(broken)
    assert fixed is not None and fixed[1].startswith(name)
    assert fixed[0].startswith(RUSSIAN[:60]) and not judge(fixed[0]).garbage


def test_the_shifted_fonts_digits_and_marks_come_back() -> None:
    fixed = repair(shifted_font(RUSSIAN + " Введен 1 июля 1996 г., пункт 4.2"))
    assert fixed is not None and fixed[0].endswith("Введен 1 июля 1996 г., пункт 4.2")


def test_russian_looking_words_no_dictionary_knows_are_garbage() -> None:
    gibberish = " ".join(["пщвнрк", "тлмвщр", "ыкврнп", "жщлмтр", "кврнщл", "птрмкв", "щлвкрн", "рмктпщ"] * 5)
    assert judge(gibberish).garbage and repair(gibberish) is None


def test_an_english_page_is_not_repaired_into_russian() -> None:
    english = ("Rolling bearings. Measuring methods for vibration. Part 1: Fundamentals. This standard specifies "
               "the methods of measuring the vibration of rolling bearings under established test conditions.")
    assert not judge(english).garbage
    assert repair(english) is None


def test_too_little_text_to_tell_is_not_garbage() -> None:
    assert not judge("Лист 3  Изм. Подп.").garbage
    assert judge("").empty


def test_cp1251_map_and_shift_are_their_own_inverses_of_the_faults() -> None:
    assert from_cp1251(as_latin1_mojibake("ГОСТ 801-78 Сталь")) == "ГОСТ 801-78 Сталь"
    assert shifted(shifted_font("Уголовный кодекс"), 0x3D6) == "Уголовный кодекс"
