"""Tests of ``hermes_core/retrieval/usage_store.py``.

The history of skill use: capped oldest first, pruned when a skill changes or goes, created on
first write; unreadable, damaged, newer, read-only or shared files cost learning, never the turn;
what the cap keeps when a message is marked again, and what a message that is not text becomes.
How keys are kept out of it (redacted, scrubbed from the file once) is in
``test_usage_store_secrets.py``."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_core.retrieval import usage as U
from hermes_core.retrieval import usage_store as S
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.usage import UsageLayer
from hermes_core.retrieval.usage_store import UsageStore
from hermes_core.testing.retrieval import SAMPLE_SKILLS
from tests.conftest import came_true
from tests.retrieval.conftest import old_usage_file, two_processes_at_once


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
        if came_true(recorded.exists):
            store.close()
            closed.touch()

    def child() -> object:
        first = store.record("child's first request", "email-send")
        recorded.touch()
        if not came_true(closed.exists):
            return "the parent never closed"
        return first, store.record("child's second request", "email-send")

    closer = threading.Thread(target=parent_closes)
    closer.start()
    assert in_forked_child(child) == (True, True)
    closer.join(60)
    assert sorted(e.query for e in UsageStore(path).events()) == [
        "child's first request", "child's second request", "parent's request"]


def _not_a_database(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 20)


def _another_schema(path: Path) -> None:
    import sqlite3
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE usage_events (x)")
        conn.execute("INSERT INTO usage_events VALUES (1)")
    conn.close()


def _another_programs_database(path: Path) -> None:
    import sqlite3
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, body TEXT)")
        conn.execute("INSERT INTO sessions VALUES ('a', 'b')")
    conn.close()


def _a_foreign_usage_table(path: Path) -> None:
    """Another program's table that happens to be called usage_events, with a ``skill`` column:
    the schema script used to add our index and our usage_meta table to it."""
    import sqlite3
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE usage_events (id INTEGER PRIMARY KEY, skill TEXT, clicks INT)")
        conn.execute("INSERT INTO usage_events (skill, clicks) VALUES ('pdf-extract', 3)")
    conn.close()


@pytest.mark.parametrize("damage", [_not_a_database, _another_schema, _another_programs_database,
                                    _a_foreign_usage_table])
def test_an_unreadable_usage_file_turns_learning_off_with_a_message_and_is_kept(
        damage, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A usage.sqlite3 that is not a database (or another program's) raised DatabaseError out of
    every 'skills search' and chat turn; it is the user's history, so it is neither overwritten
    nor deleted: the layer abstains and says why."""
    import logging
    path = tmp_path / U.USAGE_FILE
    damage(path)
    before = path.read_bytes()
    st = UsageStore(path)
    with caplog.at_level(logging.WARNING, logger=S.__name__):
        assert st.events() == [] and len(st) == 0 and st.prune({"pdf-extract": ""}) == 0
        assert not st.record("extract the pdf tables", "pdf-extract")
        st.clear()
    assert str(path) in caplog.text and "learning from use is off" in caplog.text
    assert caplog.text.count(str(path)) == 1          # said once, not on every call
    st.close()
    assert path.read_bytes() == before
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[], usage=UsageLayer(UsageStore(path)))
    assert r.retrieve("extract the tables from a pdf document").names[0] == "pdf-extract"


def _damaged_pages(path: Path) -> None:
    """A history whose header is sound and whose later pages are garbage (a disk fault, a copy
    cut short and patched): it opens, and a read fails with "database disk image is malformed"."""
    st = UsageStore(path)
    for i in range(200):
        st.record(f"extract the tables of report number {i} " * 12, "pdf-extract")
    st.close()
    _garble(path, [(2 * 4096, path.stat().st_size)])


def _garble(path: Path, spans: Sequence[tuple[int, int]]) -> None:
    """Every 7th byte of each (start, end) span of the file overwritten, its WAL left out."""
    data = bytearray(path.read_bytes())
    for start, end in spans:
        for i in range(start, min(end, len(data)), 7):
            data[i] = 0x5A
    path.write_bytes(bytes(data))
    for extra in ("-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)


def _damaged_meta(path: Path) -> None:
    """A history whose ``usage_meta`` pages (the keys already scrubbed) are garbage, the rest
    sound."""
    import sqlite3
    st = UsageStore(path, secrets=["cu5tom.Key.123456"])
    for i in range(50):
        st.record(f"extract the tables of report number {i}", "pdf-extract")
    st.close()
    with sqlite3.connect(path) as conn:
        size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        pages = [int(r[0]) for r in conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'usage_meta'")]
    conn.close()
    _garble(path, [((page - 1) * size, page * size) for page in pages])


@pytest.mark.parametrize(("damage", "secrets", "read_only"), [
    (_damaged_pages, (), False),
    (_damaged_meta, ("another.Key.987654",), False),
    (_damaged_meta, ("another.Key.987654",), True),
], ids=["pages", "usage_meta_with_a_key", "usage_meta_with_a_key_read_only"])
def test_a_history_with_damaged_pages_costs_learning_not_the_turn(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: Callable[[Path], None],
        secrets: tuple[str, ...], read_only: bool) -> None:
    """Every retrieve (and so every chat turn) raised "database disk image is malformed" from the
    refresh's prune: the turn goes on zero-shot, learning is off, said once naming the file, and
    the file is kept as it was. With a key configured the open reads ``usage_meta`` (the keys
    already scrubbed) first, and a damaged page there raised past the handler (``usage_meta_...``
    rows)."""
    import logging

    from hermes_core.testing.retrieval import skill_md, write_skill
    root = tmp_path / "skills"
    write_skill(root, "pdf", skill_md("pdf-extract", "Extract text and tables from PDF files."))
    write_skill(root, "mail", skill_md("email-send", "Send an email to a contact."))
    path = tmp_path / U.USAGE_FILE
    damage(path)
    before = path.read_bytes()
    store = UsageStore(path, secrets=secrets, read_only=read_only)
    r = SkillRetriever(folders=[root], embedders=[], usage=UsageLayer(store), refresh_interval_s=None)
    with caplog.at_level(logging.WARNING, logger=S.__name__):
        for _ in range(2):
            assert r.retrieve("extract the tables from a pdf document").names[0] == "pdf-extract"
        assert not r.record_use("extract the tables from a pdf document", "pdf-extract")
        assert store.events() == [] and len(store) == 0 and store.prune({"pdf-extract": ""}) == 0
    assert store.unreadable and caplog.text.count("is damaged") == 1
    assert caplog.text.count(str(path)) == 1
    store.close()
    assert path.read_bytes() == before


def test_two_processes_recording_at_once_lose_nothing_and_raise_nothing(tmp_path: Path) -> None:
    """Two chats on one home record into the same fresh file at the same moment (both creating
    it): every event is kept, none is refused as locked."""
    path = tmp_path / U.USAGE_FILE
    got = two_processes_at_once(
        lambda who, start, results: _record_many(path, who, 60, start, results))
    assert got == [("a", 60, ""), ("b", 60, "")]
    assert len(UsageStore(path)) == 120


def _record_many(path: Path, who: str, n: int, start: Any, results: Any) -> None:
    start.wait()
    st, stored, error = UsageStore(path), 0, ""
    try:
        for i in range(n):
            stored += st.record(f"message {i} from chat {who}", "pdf-extract")
    except Exception as e:   # reported to the parent, whose assertion shows it
        error = repr(e)
    results.put((who, stored, error))


def test_a_usage_file_of_a_newer_version_is_learnt_from_but_never_written(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A file a newer hermes-core wrote was migrated "down" and written with this version's rows;
    it is read as it is, nothing is recorded, and the warning names the file and both versions."""
    import logging
    import sqlite3
    path = tmp_path / U.USAGE_FILE
    st = UsageStore(path, clock=lambda: 1.0)
    assert st.record("extract the pdf tables", "pdf-extract")
    st.close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {U.USAGE_SCHEMA_VERSION + 1}")
    conn.close()
    before = path.read_bytes()
    with caplog.at_level(logging.WARNING, logger=S.__name__):
        st = UsageStore(path, secrets=["cu5tom.Key.123456"])
        assert [e.skill for e in st.events()] == ["pdf-extract"]
        assert not st.record("send the mail", "email-send") and st.read_only
        st.prune({"email-send": ""})
        st.clear()
        st.close()
    assert str(path) in caplog.text and "newer" in caplog.text
    assert path.read_bytes() == before


@pytest.mark.parametrize("where", ["a folder in its place", "a file in its folder's place"])
def test_a_usage_file_that_cannot_be_opened_turns_learning_off_without_a_traceback(
        where: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A usage.sqlite3 that is a folder (sqlite cannot open it), or a home whose folder is a
    file, raised OperationalError / FileExistsError out of the store: out of every refresh (it
    prunes), so out of every 'skills search' and chat turn."""
    import logging
    if where == "a folder in its place":
        path = tmp_path / U.USAGE_FILE
        path.mkdir()
    else:
        path = tmp_path / "home" / U.USAGE_FILE
        path.parent.write_text("not a folder")
    st = UsageStore(path)
    with caplog.at_level(logging.WARNING, logger=S.__name__):
        assert not st.record("extract the pdf tables", "pdf-extract")
        assert st.events() == [] and len(st) == 0 and st.prune({"pdf-extract": ""}) == 0
        st.clear()
    assert "learning from use is off" in caplog.text
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[], usage=UsageLayer(UsageStore(path)))
    assert r.retrieve("extract the tables from a pdf document").names[0] == "pdf-extract"


def test_a_read_only_home_learns_from_its_history_records_nothing_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A home the user cannot write (a shared or mounted one) with a good usage.sqlite3 turned
    learning off with a warning that called the file unreadable and said to move it away.

    chmod is the real test; it does not stop root, so under root every connection is opened
    ``mode=ro`` instead, which makes SQLite refuse writes with the SQLITE_READONLY error a
    read-only file gives."""
    import logging
    import os
    import sqlite3
    path = tmp_path / "home" / U.USAGE_FILE
    st = UsageStore(path)
    assert st.record("extract the pdf tables", "pdf-extract")
    st.close()
    if os.geteuid() != 0:
        path.chmod(0o444)
        path.parent.chmod(0o555)
    else:
        connect = sqlite3.connect

        def read_only(database: str, **kwargs: Any) -> sqlite3.Connection:
            return connect(f"file:{database}?mode=ro", uri=True, **kwargs)

        monkeypatch.setattr(sqlite3, "connect", read_only)
    try:
        st = UsageStore(path)
        with caplog.at_level(logging.WARNING, logger=S.__name__):
            assert [(e.query, e.skill) for e in st.events()] == [("extract the pdf tables", "pdf-extract")]
            assert not st.record("split the pdf into pages", "pdf-extract")
            assert not st.record("merge two pdf files", "pdf-extract")
            assert st.prune({"email-send": ""}) == 0
            assert len(st) == 1 and not st.unreadable
        st.close()
    finally:
        path.parent.chmod(0o755)
    warnings = [r.getMessage() for r in caplog.records if r.name == S.__name__]
    assert len(warnings) == 1 and "read-only" in warnings[0]
    assert "unreadable" not in warnings[0] and "moved away" not in warnings[0]


def test_half_an_emoji_in_a_query_is_stored_as_a_replacement_character() -> None:
    """A lone surrogate (half an emoji cut by a JavaScript slice, carried by a JSON "\\ud83d")
    cannot be encoded as UTF-8: sqlite raised UnicodeEncodeError and the use was not learnt."""
    st = UsageStore(None)
    assert st.record("send the mail \ud83d now \U0001f600", "email-send")
    assert [e.query for e in st.events()] == ["send the mail \ufffd now \U0001f600"]


def test_uses_another_process_records_are_learnt_without_a_restart(tmp_path: Path) -> None:
    """Two processes on one home (two chats, a chat and a bot): the index was rebuilt only when
    this process wrote, so what the other recorded stayed unused until a restart."""
    path = tmp_path / U.USAGE_FILE
    here, there = UsageLayer(UsageStore(path)), UsageStore(path)
    names = [s.name for s in SAMPLE_SKILLS]
    assert len(here.index(names, None, None)) == 0           # no file yet
    there.record("ping the team about the release", "email-send")
    assert len(here.index(names, None, None)) == 1           # the file appeared
    there.record("rain tomorrow in Paris", "weather-forecast")
    assert [e.skill for e in here.index(names, None, None).events] == ["email-send", "weather-forecast"]
    here.record("pull the tables out of this pdf", "pdf-extract")
    there.record("mail the report", "email-send")
    assert len(here.index(names, None, None)) == 4
    there.close()
    here.store.close()


def test_store_refuses_unknown_kinds_and_skips_empty_queries() -> None:
    st = UsageStore(None)
    with pytest.raises(ValueError, match="unknown usage event kind"):
        st.record("q", "s", "clicked")
    assert not st.record("   ", "s") and not st.record("q", "")
    assert len(st) == 0


@pytest.mark.parametrize("good", ["no", "false", "", 0, 1, None, 0.0])
def test_a_verdict_that_is_not_a_bool_is_refused_not_stored(good: object) -> None:
    """``good="no"`` was stored as a good use (any non-empty string is true)."""
    st = UsageStore(None)
    with pytest.raises(TypeError, match="good must be True or False"):
        st.record("extract the pdf tables", "pdf-extract", "feedback", good=good)  # type: ignore[arg-type]
    assert len(st) == 0
    assert st.record("extract the pdf tables", "pdf-extract", good=np.bool_(False))


def test_a_message_recorded_again_and_again_is_one_event_with_the_latest_verdict() -> None:
    """One user marking one message bad 500 times pushed the whole history out of the cap."""
    st = UsageStore(None, cap=50)
    for i in range(40):
        st.record(f"rain tomorrow in city {i}", "weather-forecast")
    for _ in range(500):
        st.record("ping the team about the release", "email-send", "feedback", good=False)
    st.record("ping the team about the release", "email-send", "feedback", good=True)
    events = st.events()
    assert len(events) == 41 and sum(e.query == "ping the team about the release" for e in events) == 1
    assert events[-1].good and events[-1].kind == "feedback"


def test_store_is_capped_oldest_first() -> None:
    st = UsageStore(None, cap=3)
    for i in range(5):
        st.record(f"query {i}", "s")
    assert [e.query for e in st.events()] == ["query 2", "query 3", "query 4"]


def test_store_prunes_changed_and_deleted_skills() -> None:
    st = UsageStore(None)
    st.record("a", "kept", content_hash="h1")
    st.record("b", "rewritten", content_hash="old")
    st.record("c", "deleted", content_hash="h3")
    st.record("d", "kept")                          # no hash: kept while the skill exists
    assert st.prune({"kept": "h1", "rewritten": "new"}) == 2
    assert [e.query for e in st.events()] == ["a", "d"]


def test_store_file_is_created_on_first_write_and_survives_restart(tmp_path: Path) -> None:
    path = tmp_path / "home" / U.USAGE_FILE
    st = UsageStore(path)
    assert st.events() == [] and len(st) == 0 and st.prune({"s": ""}) == 0 and not path.exists()
    st.record("track my parcel", "快递查询", "feedback", good=False)
    st.close()
    again = UsageStore(path)
    assert [(e.query, e.skill, e.good) for e in again.events()] == [("track my parcel", "快递查询", False)]


@pytest.mark.parametrize("bad", [b"\xff\xfe not utf-8", 12345, 1.5])
def test_an_older_file_with_a_damaged_row_migrates_without_a_traceback(tmp_path: Path,
                                                                        bad: object) -> None:
    path = tmp_path / U.USAGE_FILE
    old_usage_file(path, ["send the mail", bad, "mail again"])
    st = UsageStore(path)
    queries = [e.query for e in st.events()]
    st.close()
    assert queries[0] == "send the mail" and queries[-1] == "mail again"
    assert all(isinstance(q, str) for q in queries)


@pytest.mark.parametrize("at", ["yesterday", b"\x00\x01", ""])
def test_a_row_whose_time_is_not_a_number_costs_only_its_time(tmp_path: Path, at: object) -> None:
    """A row another writer stored with a time that is not a number made events() raise
    ValueError, so the usage layer failed (a warning) on every query and nothing learnt was used."""
    import sqlite3
    path = tmp_path / U.USAGE_FILE
    st = UsageStore(path)
    st.record("send the mail", "email-send")
    st.close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO usage_events (at, query, skill, kind, good) "
                     "VALUES (?, 'mail again', 'email-send', 'view', 1)", (at,))
    conn.close()
    again = UsageStore(path)
    assert [(e.query, e.at) for e in again.events()][1] == ("mail again", 0.0)
    again.close()


@pytest.mark.parametrize("hash_", [None, ["a list"]])
def test_a_call_that_sqlite_refuses_on_a_sound_file_is_not_called_damage(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, hash_: object) -> None:
    """Any DatabaseError that was not an OperationalError counted as damage: a caller's bad
    argument (a content hash of None breaks the NOT NULL column) closed a sound history, said it
    was "damaged ... repaired or moved away" and turned learning off for the process.
    A list the binding refuses (ProgrammingError) did the same."""
    import logging
    path = tmp_path / U.USAGE_FILE
    store = UsageStore(path)
    assert store.record("extract the tables from a pdf document", "pdf-extract")
    with caplog.at_level(logging.WARNING, logger=S.__name__):
        ok = store.record("split the pdf into pages", "pdf-extract", content_hash=hash_)  # type: ignore[arg-type]
    assert not ok and not store.unreadable and "damaged" not in caplog.text
    assert "Error: " in caplog.text and "this use of it is skipped" in caplog.text
    assert store.record("merge two pdf files", "pdf-extract")
    assert [e.query for e in store.events()] == ["extract the tables from a pdf document",
                                                 "merge two pdf files"]
    store.close()


def test_recording_costs_the_same_however_many_events_the_skill_already_has(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The update of a repeated (message, skill) looked the message up among every event of the
    skill: at the 20,000 cap with one skill used, a record took 72 ms against 0.6 ms with the
    history over 500 skills. Counted in SQLite's VM steps, not in time, on a loaded machine."""
    import sqlite3
    real, steps = sqlite3.connect, [0]

    def connect(*args: Any, **kw: Any) -> sqlite3.Connection:
        conn = real(*args, **kw)
        conn.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 1) or 0, 50)
        return conn
    monkeypatch.setattr(sqlite3, "connect", connect)
    cost = {}
    for n in (200, 2_000):
        st = UsageStore(None)
        for i in range(n):
            st.record(f"deploy the staging build number {i} and tail its logs", "deploy-staging")
        steps[0] = 0
        assert st.record("deploy the staging build number 7 and tail its logs", "deploy-staging")
        assert st.record("deploy the staging build once more and tail its logs", "deploy-staging")
        cost[n] = steps[0]
    assert cost[2_000] <= 2 * cost[200] + 10, cost


@pytest.mark.parametrize("query", [None, b"extract the pdf tables", 42, ["extract the pdf tables"]])
def test_a_query_that_is_not_text_is_refused_not_stored_as_its_repr(query: object) -> None:
    """``record_use(None, skill)`` stored the message "None" (``b"..."``: "b'...'") as a past
    request that later requests were ranked against."""
    st = UsageStore(None)
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[], usage=UsageLayer(st))
    with pytest.raises(TypeError, match="query must be"):
        r.record_use(query, "pdf-extract")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="query must be"):
        st.record(query, "pdf-extract")  # type: ignore[arg-type]
    assert st.events() == []
