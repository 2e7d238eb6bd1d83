"""Ingest fidelity on real documents: the 5 shared DOCX, the GOST 27772 PDF and 24 normative documents
written as UTF-8 TXT with form feeds (as ``pdftotext`` writes them), parsed and chunked by the code the
ingest workers run. Titles, pages, repaired words, clauses and chunk sizes are asserted on each."""

from __future__ import annotations

import re
import statistics
from itertools import pairwise
from pathlib import Path

import pytest

from evaluation.sample import list_standards, write_txt_corpus
from ingest.chunk import ChunkText, chunk_blocks
from ingest.parse import parse_file
from ingest.parse.model import ParsedDocument
from ingest.parse.repair import is_word
from ingest.parse.titles import is_boilerplate
from service.search.citations.designations import find_designation
from tests.support.documents import CONSTRUCTION, require_shared

CHUNK_CHARS, OVERLAP = 2000, 250
TXT_COUNT = 24
_WORD = re.compile(r"[а-яё]{2,}")
_SPACED = re.compile(r"(?<!\w)(?:[А-Яа-яЁё] ){3,}[А-Яа-яЁё](?!\w)")


@pytest.fixture(scope="module")
def fixture_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    shared = require_shared()
    txt = tmp_path_factory.mktemp("txt")
    names = list_standards(shared)
    step = max(1, len(names) // TXT_COUNT)
    chosen = set(names[::step][:TXT_COUNT])
    written = [p for p in write_txt_corpus(shared, txt) if p.stem in chosen]
    docx = sorted((CONSTRUCTION / "shasha_rag_task" / "docs").glob("*.docx"))
    return [*docx, CONSTRUCTION / "gost_27772_2021" / "GOST_27772-2021.pdf", *written]


Parsed = dict[Path, tuple[ParsedDocument, list[ChunkText]]]


@pytest.fixture(scope="module")
def parsed(fixture_files: list[Path]) -> dict[Path, tuple[ParsedDocument, list[ChunkText]]]:
    out = {}
    for path in fixture_files:
        document = parse_file(path)
        out[path] = (document, chunk_blocks(document.blocks, CHUNK_CHARS, OVERLAP))
    return out


def split_words(text: str) -> tuple[int, int]:
    """Adjacent words that are not both dictionary words but join into one («об разцов»), and all words."""
    words = text.lower().split()
    split = sum(1 for a, b in pairwise(words)
                if _WORD.fullmatch(a) and _WORD.fullmatch(b) and not (is_word(a) and is_word(b)) and is_word(a + b))
    return split, len(words)


def test_titles_carry_the_designation_and_are_never_boilerplate(parsed: Parsed) -> None:
    for path, (document, _) in parsed.items():
        title = document.title or ""
        assert not is_boilerplate(title), (path.name, title)
        assert not re.search(r"СОВЕТ ПО СТАНДАРТИЗАЦИИ|^СВОД ПРАВИЛ$|ФЕДЕРАЛЬНАЯ СЛУЖБА|ПРАВИТЕЛЬСТВО|^МО РФ", title)
        named = find_designation(path.stem.replace("_", " "))
        if named:
            assert document.designation and title.startswith(document.designation), (path.name, title)
            assert len(title) > len(document.designation) + 3, f"{path.name}: a title needs its name: {title}"


def test_form_feeds_are_pages(parsed: Parsed) -> None:
    for path, (document, chunks) in parsed.items():
        if path.suffix != ".txt":
            continue
        pages = path.read_text(encoding="utf-8").count("\f") + 1
        assert document.page_count == pages
        assert max(c.page_end or c.page for c in chunks) >= pages - 1
        assert len({c.page for c in chunks}) > min(3, pages // 3), path.name


def test_words_broken_at_line_ends_are_joined(parsed: Parsed) -> None:
    split = words = 0
    for _, (_, chunks) in parsed.items():
        s, w = split_words(" ".join(c.text for c in chunks))
        split, words = split + s, words + w
    assert 1000 * split / words <= 1.0, f"{split} split words in {words}"


def test_letter_spaced_words_are_collapsed(parsed: Parsed) -> None:
    spaced = [m for _, (_, chunks) in parsed.items() for c in chunks for m in _SPACED.findall(c.text)
              if is_word(m.replace(" ", ""))]  # «Р п и К З» are formula symbols, not a spaced word
    assert len(spaced) <= 3, spaced[:10]


def test_chunks_of_normative_documents_carry_a_clause(parsed: Parsed) -> None:
    chunks = [c for path, (document, cs) in parsed.items() if document.designation for c in cs]
    assert sum(1 for c in chunks if c.clause) >= 0.6 * len(chunks)


def test_txt_chunks_are_of_the_configured_size(parsed: Parsed) -> None:
    lengths, characters = [], 0
    for path, (document, chunks) in parsed.items():
        if path.suffix == ".txt":
            lengths += [len(c.text) for c in chunks]
            characters += sum(len(b.text) for b in document.blocks)
    assert statistics.median(lengths) >= 0.5 * CHUNK_CHARS
    assert sum(1 for n in lengths if n < 200) <= 0.05 * len(lengths)
    expected = characters / (CHUNK_CHARS - OVERLAP)
    assert expected / 1.5 <= len(lengths) <= expected * 1.5


@pytest.mark.parametrize(("text", "repaired"), [
    ("следует при\u00ad\nменять образцы", "следует применять образцы"),
    ("контрольных об-\nразцов бетона", "контрольных образцов бетона"),
    ("северо-\nзападный район", "северо-западный район"),
    ("арматура А500С-\n1 класса", "арматура А500С-\n1 класса"),
    ("П р и м е ч а н и е  1", "Примечание  1"),
    ("Т а б л и ц а  2 — Размеры", "Таблица  2 — Размеры"),
    ("в и с к", "в и с к"),
    ("коэффициенты Р п и К З", "коэффициенты Р п и К З"),
    ("ГОСТ\nМ\nЕ\nЖ\nД\nУ\nН\nА\nР\nО\nД\nН\nЫ\nЙ\n", "ГОСТ\nМЕЖДУНАРОДНЫЙ\n"),
    # a line break inside a word whose hyphen the source lost; real words on two lines stay
    ("нормативных до\r\nкументов по пожарной", "нормативных документов по пожарной"),
    ("работы до\nконца смены, бетон\nмарки М200", "работы до\nконца смены, бетон\nмарки М200"),
    # mixed letter-spacing: fragments of one to three letters and broken word ends, joined into dictionary words
    ("СП 34.13330.2012 Авто м о бильны е дороги", "СП 34.13330.2012 Автомобильные дороги"),
    ("Мосты и трубы. А к ту а л и зи р о в а н н а я редакция", "Мосты и трубы. Актуализированная редакция"),
    ("Зд ания и ко м п л е кс ы в ы с о тн ы е", "Здания и комплексы высотные"),
    ("Блоки дверны е стальны е", "Блоки дверные стальные"),
    ("О сно вания ги д ро техн ически х со о руж ений", "Основания гидротехнических сооружений"),
    # two words the dictionary knows stay two; case that no word has never joins; numbers and codes untouched
    ("на вид и при мер", "на вид и при мер"),
    ("марки АН и А по таблице", "марки АН и А по таблице"),
    ("ГОСТ Р 53195 т. е. 20 мм и в т. ч. СП и РФ", "ГОСТ Р 53195 т. е. 20 мм и в т. ч. СП и РФ"),
])
def test_each_repair_on_a_real_pattern(text: str, repaired: str) -> None:
    from ingest.parse.repair import repair_text

    assert repair_text(text) == repaired
