"""Pure helpers behind the ingest's defences: display names, candidate checks, archive checks, text
sanitising, the long-line split, access-rule matching and the stall watchdog."""

from __future__ import annotations

import os
import threading
import time
import unicodedata
import zipfile
from pathlib import Path

import pytest

from ingest.access import AccessRules, rule_matches
from ingest.chunk import chunk_blocks
from ingest.discover import Rejected, SourceFile, check_candidate, display_path
from ingest.parse import ParseOptions
from ingest.parse.archive import ArchiveLimits, check_archive
from ingest.parse.model import Block
from ingest.parse.text import strip_controls
from ingest.watchdog import Watchdog
from ingest.worker import ParseJob, run_job
from service.errors import ParseError


def test_display_path_decodes_cp1251_names_and_escapes_control_characters() -> None:
    assert display_path(os.fsdecode("/a/отчёт.txt".encode("cp1251"))) == "/a/отчёт.txt"
    assert display_path("/a/evil\x1b[31m\n.txt") == "/a/evil\\x1b[31m\\x0a.txt"
    assert display_path(os.fsdecode(b"/a/\xff\xfe\x98.txt")).startswith("/a/")
    display_path(os.fsdecode(b"/a/\xff\xfe\x98.txt")).encode("utf-8")  # always storable


def test_check_candidate_refuses_links_out_of_the_roots_fifos_and_missing_targets(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (root / "in.txt").write_text("x")
    (root / "out.txt").symlink_to(outside / "secret.txt")
    (root / "in-link.txt").symlink_to(root / "in.txt")
    (root / "dangling.txt").symlink_to(root / "none.txt")
    os.mkfifo(root / "fifo.txt")
    roots = (root.resolve(),)
    assert isinstance(check_candidate(root / "in.txt", root, roots), SourceFile)
    assert isinstance(check_candidate(root / "in-link.txt", root, roots), SourceFile)
    assert "outside" in check_candidate(root / "out.txt", root, roots).reason
    assert "regular file" in check_candidate(root / "fifo.txt", root, roots).reason
    assert isinstance(check_candidate(root / "dangling.txt", root, roots), Rejected)


def test_strip_controls_removes_escapes_and_control_characters_but_keeps_layout() -> None:
    assert strip_controls("\x1b[31mКРАСНЫЙ\x1b[0m\tтекст\x07\x00\u202eобратно\u200b\nстрока\fстраница") == \
        "КРАСНЫЙ\tтекстобратно\nстрока\fстраница"


def test_one_huge_line_is_chunked_at_spaces_keeping_every_word_in_linear_work() -> None:
    text = " ".join(f"слово{i}" for i in range(200_000))
    began = time.perf_counter()
    chunks = chunk_blocks([Block(text, 1)], 2000, 0)
    elapsed = time.perf_counter() - began
    assert all(len(c.text) <= 2000 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == text.split()
    assert elapsed < 5  # quadratic slicing took minutes at this size
    assert [len(c.text) for c in chunk_blocks([Block("а" * 4500, 1)], 2000, 0)] == [2000, 2000, 500]


def make_zip(path: Path, parts: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in parts.items():
            out.writestr(name, data)
    return path


@pytest.mark.parametrize(("parts", "reason"), [
    ({"word/document.xml": b"0" * (3 << 20)}, "compressed"),
    ({"word/document.xml": b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY b "c">]><a/>'}, "DTD"),
    ({"word/document.xml": b'<?xml version="1.0"?><!-- ' + b" " * 9000 + b'--><!DOCTYPE a><a/>'}, "DTD"),
])
def test_check_archive_refuses_bombs_and_dtds(tmp_path: Path, parts: dict[str, bytes], reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        check_archive(make_zip(tmp_path / "x.docx", parts), ArchiveLimits(max_ratio=100))


def test_check_archive_accepts_a_plain_office_file_and_refuses_a_non_zip(tmp_path: Path) -> None:
    check_archive(make_zip(tmp_path / "ok.docx", {"word/document.xml": b"<w:document>text</w:document>"}))
    (tmp_path / "bad.docx").write_bytes(b"not a zip")
    with pytest.raises(ParseError, match="not a ZIP archive"):
        check_archive(tmp_path / "bad.docx")


@pytest.mark.parametrize(("pattern", "path", "hit"), [
    ("секретно/*", "/data/docs/секретно/a.txt", True),
    ("секретно/*", "/data/секретно-2/a.txt", False),
    ("секретно/*", "/data/docs/секретно/вложено/a.txt", True),
    ("/data/docs/*", "/data/docs/a.txt", True),
    ("/data/docs/*", "/other/data/docs/a.txt", False),
    (unicodedata.normalize("NFC", "й/*"), unicodedata.normalize("NFD", "/x/й/a.txt"), True),
    ("*.pdf", "/x/a.PDF", False),
])
def test_rule_patterns_match_below_any_folder(pattern: str, path: str, hit: bool) -> None:
    from ingest.access import normalise_pattern

    assert rule_matches(normalise_pattern(pattern), Path(path)) is hit


def test_first_matching_rule_wins_and_groups_are_sorted() -> None:
    rules = AccessRules((("секретно/*", ("legal", "hr")), ("*", ("staff",))), ("public",))
    assert rules.groups_for(Path("/d/секретно/a.txt")) == ["hr", "legal"]
    assert rules.groups_for(Path("/d/a.txt")) == ["staff"]


def test_watchdog_reports_a_stall_with_the_stage_and_file() -> None:
    fired: list[str] = []
    event = threading.Event()
    def fire(message: str) -> None:
        fired.append(message)
        event.set()

    with Watchdog(0.4, fire) as dog:
        dog.progress("parsing", "/docs/a.pdf")
        assert event.wait(5)
    assert "INGEST_STALLED" in fired[0] and "parsing" in fired[0] and "/docs/a.pdf" in fired[0]


def test_watchdog_stays_quiet_while_work_advances() -> None:
    fired: list[str] = []
    with Watchdog(0.5, fired.append) as dog:
        for _ in range(15):
            dog.progress("parsing")
            time.sleep(0.1)
    assert fired == []


def test_a_file_that_changes_while_it_is_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("Бетон класса В25 для фундаментов.", encoding="utf-8")
    with pytest.raises(ParseError, match="changed while it was being read"):
        run_job(ParseJob(str(path), ParseOptions(), 2000, 250, content_hash="0" * 64))
