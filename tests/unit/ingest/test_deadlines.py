"""A file's parse deadline, from its worker's beats (pure)."""

from __future__ import annotations

from ingest.deadlines import Deadlines
from ingest.heartbeat import Beat, drain


def test_a_long_pdf_gets_more_parse_time_than_a_short_one() -> None:
    deadlines = Deadlines(600, 20)
    for path, pages in (("long.pdf", 4), ("short.pdf", 1)):
        deadlines.beat(Beat(path, "started"), 0.0)
        deadlines.beat(Beat(path, "pages", 0, pages), 0.1)
    assert (deadlines.limit_s("long.pdf"), deadlines.limit_s("short.pdf")) == (680.0, 620.0)


def test_a_queued_file_has_no_deadline_yet() -> None:
    assert Deadlines(5, 0).overdue("queued.pdf", 1e9) is None


def test_a_file_is_given_up_past_its_cap_plus_its_pages() -> None:
    deadlines = Deadlines(10, 2)
    deadlines.beat(Beat("scan.pdf", "started"), 100.0)
    deadlines.beat(Beat("scan.pdf", "pages", 0, 600), 100.0)
    for second in range(2, 1210, 2):  # a page every 2 s: never stalled, but the whole file has 10 + 1200 s
        deadlines.beat(Beat("scan.pdf", "page", second // 2, 600), 100.0 + second)
    assert deadlines.overdue("scan.pdf", 100.0 + 1209) is None
    reason = deadlines.overdue("scan.pdf", 100.0 + 1211)
    assert reason is not None and "longer than 1210s" in reason


def test_a_scan_that_advances_page_by_page_is_not_stalled_whatever_its_length() -> None:
    deadlines = Deadlines(600, 20)
    deadlines.beat(Beat("scan.pdf", "started"), 0.0)
    deadlines.beat(Beat("scan.pdf", "pages", 0, 600), 0.0)
    for page in range(1, 601):
        deadlines.beat(Beat("scan.pdf", "page", page, 600), page * 6.0)  # 6 s a page: an hour in all
        assert deadlines.overdue("scan.pdf", page * 6.0 + 5) is None


def test_a_page_without_progress_for_a_files_cap_gives_the_file_up_with_the_page_named() -> None:
    deadlines = Deadlines(60, 20)
    deadlines.beat(Beat("scan.pdf", "started"), 0.0)
    deadlines.beat(Beat("scan.pdf", "pages", 0, 300), 0.0)
    deadlines.beat(Beat("scan.pdf", "page", 41, 300), 30.0)
    assert deadlines.overdue("scan.pdf", 89.0) is None
    assert deadlines.overdue("scan.pdf", 91.0) == ("no progress for 61s at page 42 of 300 "
                                                   "(STROIDOK_INGEST_FILE_TIMEOUT_S)")


def test_a_restarted_file_starts_a_new_clock() -> None:
    deadlines = Deadlines(5, 0)
    deadlines.beat(Beat("a.txt", "started"), 0.0)
    deadlines.beat(Beat("a.txt", "started"), 100.0)  # the same path again (a retried job)
    assert deadlines.overdue("a.txt", 104.0) is None


def test_beats_are_drained_without_blocking() -> None:
    import queue

    source: queue.Queue[Beat] = queue.Queue()
    for page in range(3):
        source.put(Beat("a.pdf", "page", page, 3))
    assert [b.done for b in drain(source)] == [0, 1, 2] and drain(source) == []
