"""Tests of ``hermes_core/retrieval/usage_store.py`` added since the store left usage.py (its
older tests are in test_usage.py): what the cap keeps when a message is marked again, and what a
message that is not text (control characters, a binary blob) becomes."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core.retrieval.usage_store import UsageStore
from tests.retrieval.conftest import two_processes_at_once


def test_a_history_recorded_before_messages_were_cleaned_is_read_as_words(tmp_path: Path) -> None:
    """Versions before decision 231 stored a message as it came, in a file of the same schema
    (nothing to migrate): their escape sequences were still read as words of past requests and
    a file's bytes as one, however new messages were cleaned. They are read as a record now
    stores them: escapes out, a binary one not at all."""
    path = tmp_path / "usage.sqlite3"
    UsageStore(path).record("weather tomorrow", "s")
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO usage_events (at, query, skill, kind, good) "
                         "VALUES (0, ?, 's', 'view', 1)", [(q,) for q in [*dict(CONTROLS), *BINARY]])
    conn.close()
    assert [e.query for e in UsageStore(path).events()] == ["weather tomorrow"] + [w for _, w in CONTROLS]


def test_a_message_marked_again_counts_as_recent_and_pushes_nothing_out() -> None:
    """A repeat kept its first id, so the cap dropped it as the oldest event though it had just
    been marked again; a new id per repeat (the fix before decision 222) let a flood of repeats
    push the rest of the history out. Neither: the repeat is the newest event, and the history
    keeps ``cap`` events."""
    st = UsageStore(None, cap=4)
    for q in ("deploy staging", "tail the logs", "send the invoice", "track my parcel"):
        st.record(q, "s")
    for _ in range(50):                                  # a flood: one event, nothing pushed out
        st.record("deploy staging", "s", "feedback", good=False)
    assert [e.query for e in st.events()] == ["tail the logs", "send the invoice",
                                              "track my parcel", "deploy staging"]
    st.record("weather tomorrow", "s")                   # the oldest goes, not the one just marked
    assert [e.query for e in st.events()] == ["send the invoice", "track my parcel",
                                              "deploy staging", "weather tomorrow"]
    assert not st.events()[2].good


def test_every_event_has_its_own_increasing_id() -> None:
    """The usage index names past messages by id, so what it carries from one history to the
    next is the same event (decision 231)."""
    st = UsageStore(None, cap=3)
    for q in ("a b", "c d", "e f", "a b", "g h"):
        st.record(q, "s")
    ids = [e.id for e in st.events()]
    assert len(ids) == 3 and ids == sorted(set(ids)) and min(ids) > 0


CONTROLS = [
    ("\x1b[31mdeploy\x1b[0m the staging build", "deploy the staging build"),   # a terminal's colours
    ("tail the logs\x07\x08 now", "tail the logs now"),
    ("first line\r\nsecond\tline", "first line\r\nsecond\tline"),              # whitespace is text
    ("发送\x0c发票", "发送 发票"),
    ("\x1b(B\x1b[mdeploy the staging build", "deploy the staging build"),   # tput sgr0 (ESC ( B)
    ("\x1b7\x1b[1A\x1b[2Kdeploy staging\x1b8", "deploy staging"),   # a progress line: ESC 7 / ESC 8
    ("\x1bc\x1b=deploy staging\x1b>", "deploy staging"),            # reset, keypad modes
    ("\x1bPq#0;2;0;0;0#0~~@@\x1b\\deploy staging", "deploy staging"),  # a sixel image (DCS ... ST)
    ("\x9b31mdeploy\x9b0m staging", "deploy staging"),                # 8-bit CSI (C1)
    # Latin-1 mojibake of UTF-8 "”" (E2 80 9D): C1 bytes, each a space, nothing after it lost
    ("deploy \u00e2\x80\x9dstaging\u00e2\x80\x9d now", "deploy \u00e2 staging\u00e2 now"),
]


@pytest.mark.parametrize(("query", "stored"), CONTROLS)
def test_control_characters_are_cleaned_out_of_a_stored_message(query: str, stored: str) -> None:
    """A message with control characters was stored as it came: an escape sequence pasted from a
    terminal became words of a past request."""
    st = UsageStore(None)
    assert st.record(query, "s")
    assert [e.query for e in st.events()] == [stored]


BINARY = [
    "PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00deploy",                 # a zip's header
    "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "".join(chr(c) for c in range(1, 32)) * 3 + "abc",
    "deploy \x00 staging",
]


@pytest.mark.parametrize("query", BINARY)
def test_a_binary_message_is_refused_not_stored(query: str) -> None:
    """Bytes of a file handed over as the message (a NUL, or mostly control characters) were
    stored as a past request later ones were ranked against."""
    st = UsageStore(None)
    assert not st.record(query, "s")
    assert st.events() == []


def _mark_again(path: Path, who: str, start: Any, results: Any) -> None:
    start.wait()
    store, stored, error = UsageStore(path, cap=30), 0, ""
    try:
        for i in range(40):
            good = (i + (who == "b")) % 2 == 0
            stored += store.record(f"shared message {i % 3}", "pdf-extract", good=good)
    except Exception as e:   # reported to the parent, whose assertion shows it
        error = repr(e)
    results.put((who, stored, error))


def test_two_processes_marking_the_same_messages_again_at_the_cap_keep_one_row_each(tmp_path: Path) -> None:
    """Two chats on one home mark the same three messages again and again at once, the history
    at its cap: each delete-and-insert is one transaction, so each message is one row (never
    none, never two) and the three push out three old events, not one per mark."""
    path = tmp_path / "usage.sqlite"
    store = UsageStore(path, cap=30)
    for i in range(30):
        store.record(f"old message {i}", "weather")
    got = two_processes_at_once(lambda who, start, results: _mark_again(path, who, start, results))
    assert got == [("a", 40, ""), ("b", 40, "")]
    events = UsageStore(path, cap=30).events()
    shared = sorted(e.query for e in events if e.query.startswith("shared"))
    assert shared == [f"shared message {i}" for i in range(3)]
    old = [e.query for e in events if e.query.startswith("old")]
    assert old == [f"old message {i}" for i in range(3, 30)]


FAMILY = "👨\u200d👩\u200d👧\u200d👦 家庭照片 ❤\ufe0f 分享给妈妈"   # a ZWJ sequence, a variation selector


@pytest.mark.parametrize(("message", "kept"), [
    (FAMILY, FAMILY),
    ("\u200d\ufe0f" * 40 + "表情", "\u200d\ufe0f" * 40 + "表情"),          # ZWJ/VS are text, not controls
    ("🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f flag", None),   # tag characters
    ("葛\U000e0100飾区の天気", "葛\U000e0100飾区の天気"),                          # an ideographic variant
    ("\x1b[01;31m\x1b[KERROR\x1b[m\x1b[K a \x1b[01;31m\x1b[Kok\x1b[m\x1b[K b", "ERROR a ok b"),
    ("\x1b[32m✓\x1b[0m\x1b[31m✗\x1b[0m" * 10 + " why did the tests fail", None),
])
def test_emoji_sequences_and_a_coloured_log_are_words_not_binary(message: str, kept: str | None) -> None:
    """Zero-width joiners, variation selectors, tag characters and a pasted log coloured by
    grep or a test runner are a message, not a file's bytes: only controls count toward the
    binary share, and the escapes go before it is judged."""
    store = UsageStore(None)
    assert store.record(message, "weather")
    got = store.events()[0].query
    if kept is not None:
        assert got == kept
    assert "\x1b" not in got


def _until(done: Callable[[], bool]) -> bool:
    """Whether ``done()`` came true, asked every millisecond for at most a minute (a guard
    against a hang, not a timing)."""
    for _ in range(60_000):
        if done():
            return True
        time.sleep(0.001)
    return False


def test_what_a_forked_child_records_after_the_parent_closed_is_kept(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A server forked its workers from a process that had recorded a use: a worker wrote
    through the parent's SQLite connection, which believed it held the parent's locks, so the
    parent's close took the file as its own alone, checkpointed and removed ``-wal`` under the
    worker, and what the worker recorded after that was lost though it was told it was kept."""
    path = tmp_path / "usage.db"
    store = UsageStore(path)
    assert store.record("parent's request", "email-send")
    recorded, closed = tmp_path / "recorded", tmp_path / "closed"

    def parent_closes() -> None:
        if _until(recorded.exists):
            store.close()
            closed.touch()

    def child() -> object:
        first = store.record("child's first request", "email-send")
        recorded.touch()
        if not _until(closed.exists):
            return "the parent never closed"
        return first, store.record("child's second request", "email-send")

    closer = threading.Thread(target=parent_closes)
    closer.start()
    assert in_forked_child(child) == (True, True)
    closer.join(60)
    assert sorted(e.query for e in UsageStore(path).events()) == [
        "child's first request", "child's second request", "parent's request"]
