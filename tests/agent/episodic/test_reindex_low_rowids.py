"""The re-index (``episodic/reindex.py``) and sessions another tool wrote at rowids a batch could
miss: below 1, past 2**53, after a gap, or at the rowid of a long session's passage in the
half-built index; planted, edited, forgotten or pruned mid re-index, or with a kill -9 in the
batch that meets them, every session is found once by its words.
"""

from __future__ import annotations

import shutil
import signal
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.agent.episodic import drift, passages, reindex
from hermes_core.agent.episodic.retention import RetentionPolicy
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from tests.agent.episodic.conftest import (
    AT,
    NEW,
    OLD,
    deploy_summary,
    open_and_die_at_statement,
    open_tracing,
    reindex_between_batches,
    segment_before_symbols,
    segment_new,
    segment_old,
    spawn_process,
)


def _words(tag: str) -> str:
    """A long summary (passages past the first), its words numbered."""
    return " ".join(f"{tag}{k}" for k in range(200))


def test_sessions_another_tool_wrote_at_rowids_below_one_past_2_53_or_after_a_gap_are_re_indexed(
        tmp_path: Path) -> None:
    """A re-index read ``sessions`` from rowid 0 up, so a session another tool inserted at a
    negative rowid or at 0 was left out of the new index and, after the swap, found by no
    search; one past 2**53 (no exact double) or after a gap must be carried over too."""
    path = tmp_path / "sessions.db"
    with SessionStore(path, segment=segment_before_symbols, segment_id="older-segmenter") as store:
        store.upsert_many([SessionRecord(f"s{i}", f"plain session {i} about kites", (), 1.0)
                           for i in range(5)])
        planted = {"neg": (-7, "negative okapi"), "zero": (0, "zero narwhal " + _words("z")),
                   "huge": (2**53 + 1, "huge axolotl"), "gap": (10_000, "gapped quokka")}
        for sid, (rowid, text) in planted.items():
            store.connection.execute(
                "INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                " relevance_score, content_hash, source, message_count) VALUES"
                " (?, ?, ?, ?, '', 1.0, 1.0, ?, 'manual', 0)", (rowid, sid, sid, text, sid))
    with SessionStore(path) as store:
        assert store.reindexed == 9
        for sid, (_, text) in planted.items():
            word = text.split()[1]
            assert [h.session_id for h in store.search(f'"{word}"', 5)] == [sid], sid
        assert len(store.search('"kites"', 10)) == 5
        assert [h.session_id for h in store.search('"z199"', 5)] == ["zero"]   # a passage
        assert store.stats()["index_in_sync"]
    with SessionStore(path) as store:
        assert store.reindexed == 0


@pytest.mark.parametrize("how", ["forget", "rewrite", "move"])
def test_a_session_below_rowid_one_leaving_mid_re_index_keeps_the_passage_owning_its_rowid(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """With the re-index past a long session, another tool plants a session at the rowid of that
    session's last passage in the half-built index. Forgetting the planted one, rewriting it to
    take a key out, or an open moving it (``drift.rehome``) took the index row at its rowid out
    of the new index: the long session's passage, whose words no search found after the swap."""
    path = tmp_path / "sessions.db"
    records = [SessionRecord("long", _words("l") + " zebraword", (), AT)]
    records += [SessionRecord(f"s{i}", deploy_summary(i), (), AT + i) for i in range(100)]
    with SessionStore(path, segment=segment_old, segment_id=OLD) as store:
        store.upsert_many(records)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 30)
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        conn = store.connection
        owner = conn.execute("SELECT rowid FROM sessions WHERE session_id = 'long'").fetchone()[0]
        assert reindex.read_cursor(conn, "reindex_cursor") > owner
        low = conn.execute(f"SELECT MIN(rowid) FROM {reindex.NEXT}").fetchone()[0]
        assert low < 0 and (-(low + 1)) // passages.MAX_PASSAGES == owner
        conn.execute("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                     " relevance_score, content_hash, source, message_count) VALUES"
                     " (?, 'm', 'planted', 'planted kites', '', 1.0, 1.0, 'h', 'manual', 0)",
                     (low,))
        if how == "forget":
            assert store.delete("planted")
        elif how == "rewrite":
            assert store.rewrite_holding({"k": "kites"}, lambda r: replace(
                r, summary=r.summary.replace("kites", "[gone]"))) == 1
    if how == "move":
        with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
            assert store.connection.execute("SELECT 1 FROM sessions WHERE rowid < 1").fetchone() is None
    with sqlite3.connect(str(path)) as conn:
        assert conn.execute(f"SELECT session_id FROM {reindex.NEXT} WHERE rowid = ?",
                            (low,)).fetchone() == ("long",)
    while True:
        with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert [h.session_id for h in store.search('"xzebraword"', 3)] == ["long"]
        kept = ["planted"] if how == "move" else []
        assert [h.session_id for h in store.search('"xkites"', 3)] == kept
        assert store.stats()["index_in_sync"]


def _die_at_statement_leaving_low_rows(path: str, kill_at: int, batch: int) -> None:
    """:func:`open_and_die_at_statement` with the open moving no session below rowid 1 (as one
    past its ``REHOME_OPEN_ROWS`` leaves them): run in a spawned process."""
    drift.REHOME_OPEN_ROWS = 0
    open_and_die_at_statement(path, kill_at, batch, "new-x")


@pytest.mark.parametrize("planted", ["before", "after_owner"])
def test_a_re_index_killed_in_a_batch_that_meets_a_session_below_rowid_one_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str) -> None:
    """SIGKILL at each statement of the re-index that reads or writes the rowid of the long
    session's last passage, where another tool planted a session (before the re-index, so a
    batch indexes it there and the owner's batch overwrites it; or once the owner was indexed,
    so a batch's catch-up keeps the owner's passage), and at the commit after: the next opens
    finish the re-index with both sessions found and every session's rows as drift compares
    them (named, stamped, passages with no gap)."""
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    src = tmp_path / "src"
    src.mkdir()
    path = src / "sessions.db"
    records = [SessionRecord("long", _words("l") + " zebraword", (), AT)]
    records += [SessionRecord(f"s{i}", deploy_summary(i), (), AT + 1 + i) for i in range(40)]
    with SessionStore(path, segment=str.lower, segment_id="old-x") as store:
        store.upsert_many(records)
        low = store.connection.execute("SELECT MIN(rowid) FROM sessions_fts").fetchone()[0]
    if planted == "after_owner":
        monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
        with SessionStore(path, segment=str.lower, segment_id="new-x") as store:
            assert reindex.read_cursor(store.connection, "reindex_cursor") > 1   # past "long"
    with sqlite3.connect(str(path)) as conn:
        conn.execute("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                     " relevance_score, content_hash, source, message_count) VALUES"
                     " (?, 'm', 'planted', 'planted kites', '', 1.0, 1.0, 'h', 'manual', 0)", (low,))
    conn.close()

    def copy(to: Path) -> Path:
        to.mkdir()
        for f in src.glob("sessions.db*"):
            shutil.copy(f, to / f.name)
        return to / "sessions.db"

    monkeypatch.setattr(drift, "REHOME_OPEN_ROWS", 0)
    seen: list[str] = []
    open_tracing(copy(tmp_path / "traced"), 10, "new-x", seen.append)
    monkeypatch.undo()
    touching = [i + 1 for i, sql in enumerate(seen) if not sql.startswith("--") and str(low) in sql]
    assert touching
    commit = next(i + 1 for i, sql in enumerate(seen) if i + 1 > touching[-1] and sql == "COMMIT")
    for kill_at in [*touching, commit]:
        killed = copy(tmp_path / f"k{kill_at}")
        proc = spawn_process(_die_at_statement_leaving_low_rows, str(killed), kill_at, 10)
        proc.join(timeout=120)
        assert proc.exitcode == -signal.SIGKILL, kill_at
        while True:
            with SessionStore(killed, segment=str.lower, segment_id="new-x") as store:
                if store.reindexed == 0:
                    break
        with SessionStore(killed, segment=str.lower, segment_id="new-x") as store:
            conn = store.connection
            assert [h.session_id for h in store.search("zebraword", 3)] == ["long"], kill_at
            assert [h.session_id for h in store.search("kites", 3)] == ["planted"], kill_at
            assert len(store.search("deploys", 50)) == 40
            assert drift._disagreeing(conn, 0)[0] == [], kill_at
            assert store.stats()["index_in_sync"], kill_at
            conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")


LowOp = tuple[str, int, int, int]   # kind, which long session, which passage, at which segment call


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 6),
       ops=st.lists(st.tuples(st.sampled_from(["plant", "edit", "unplant", "forget_owner"]),
                              st.integers(0, 2), st.integers(1, 3), st.integers(1, 34)),
                    max_size=12))
def test_sessions_planted_and_removed_below_rowid_one_during_a_re_index_leave_every_session_found(
        tmp_path_factory: pytest.TempPathFactory, batch: int, ops: list[LowOp]) -> None:
    """Another tool plants, edits and deletes sessions at the rowids of long sessions' passages
    (and a long session is forgotten) between any batches of a re-index: once it is done and an
    open has healed, every session is found by its own word and its index rows are as drift
    compares them (named, stamped, passages with no gap)."""
    path = tmp_path_factory.mktemp("low") / "sessions.db"
    records = [SessionRecord(f"s{i}", deploy_summary(i), (), AT + i) for i in range(12)]
    records[3:3] = [SessionRecord(f"long{j}", _words(f"l{j}k"), (), AT) for j in range(3)]
    with SessionStore(path, segment=segment_old, segment_id=OLD) as store:
        store.upsert_many(records)
        owner = dict(store.connection.execute(
            "SELECT session_id, rowid FROM sessions WHERE session_id LIKE 'long%'").fetchall())
    writer = SessionStore(path, segment=segment_old)
    tool = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    due = sorted(ops, key=lambda op: op[3])

    def act(kind: str, j: int, p: int) -> None:
        rowid = passages.passage_rowid(owner[f"long{j}"], p)
        if kind == "forget_owner":
            writer.delete(f"long{j}")
        elif kind == "plant":
            tool.execute("INSERT OR IGNORE INTO sessions(rowid, memory_id, session_id, summary,"
                         " tags, created_at, relevance_score, content_hash, source, message_count)"
                         " VALUES (?, ?, ?, ?, '', 1.0, 1.0, ?, 'manual', 0)",
                         (rowid, f"m{rowid}", f"p{-rowid}", f"planted kite{-rowid}", f"h{rowid}"))
        elif kind == "edit":
            tool.execute("UPDATE sessions SET summary = ? WHERE rowid = ?",
                         (f"edited kite{-rowid}", rowid))
        else:
            tool.execute("DELETE FROM sessions WHERE rowid = ?", (rowid,))

    def between(call: int) -> None:
        while due and due[0][3] <= call:
            act(*due.pop(0)[:3])

    reindex_between_batches(conn, batch, between, tool, writer)
    with sqlite3.connect(str(path)) as conn:   # the swap made, nothing healed yet
        for rowid, summary in conn.execute("SELECT rowid, summary FROM sessions WHERE rowid > 0"):
            want = {passages.passage_rowid(rowid, p): text
                    for p, text in enumerate(passages.split(segment_new(summary)))}
            got = dict(conn.execute("SELECT rowid, summary FROM sessions_fts WHERE rowid IN"
                                    f" ({', '.join('?' * len(want))})", list(want)).fetchall())
            assert got == want, rowid
    conn.close()
    for _ in range(5):
        with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
            if not drift.due(store.connection):
                break
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        conn = store.connection
        assert store.reindexed == 0 and not drift.due(conn)
        stored = conn.execute("SELECT session_id, summary FROM sessions").fetchall()
        for sid, summary in stored:
            word = summary.split()[1 if sid.startswith("s") else -1]   # w<n>, kite<n>, l<j>k199
            assert sid in [h.session_id for h in store.search(f'"x{word}"', 5)], (sid, summary)
        assert drift._disagreeing(conn, 0)[0] == []
        assert store.stats()["index_in_sync"]
        conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")


def _hits(store: SessionStore, word: str) -> list[str]:
    return [h.session_id for h in store.search(f'"{word}"', 100)]


@pytest.mark.parametrize("how", ["record", "prune"])
@pytest.mark.parametrize("re_index", [True, False])
def test_a_planted_session_recorded_again_or_pruned_mid_re_index_leaves_searches_right_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, re_index: bool) -> None:
    """A re-index spread over opens, and more sessions planted below rowid 1 than an open moves
    (``drift.REHOME_OPEN_ROWS``): one at the rowid of a long session's passage is recorded again
    under its id, or the planted ones are pruned. ``_upsert_one`` and ``retention.step`` take it
    out of the searched index only, leaving the half-built one to the next batch's catch-up:
    after every open until the re-index and the heal are done, each session is found once by
    its word, none twice, and nothing gone is found. Without a re-index, the same with the rows
    past an open's share left to later opens."""
    path = tmp_path / "sessions.db"
    records = [SessionRecord("long", _words("l") + " zebraword", (), AT)]
    records += [SessionRecord(f"s{i}", deploy_summary(i), (), AT + i) for i in range(60)]
    with SessionStore(path, segment=segment_old, segment_id=OLD) as store:
        store.upsert_many(records)
        conn = store.connection
        owner = conn.execute("SELECT rowid FROM sessions WHERE session_id = 'long'").fetchone()[0]
        low = conn.execute("SELECT MIN(rowid) FROM sessions_fts").fetchone()[0]
        assert (-(low + 1)) // passages.MAX_PASSAGES == owner
        plant = ("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                 " relevance_score, content_hash, source, message_count) VALUES"
                 " (?, ?, ?, ?, '', 1.0, 1.0, ?, 'manual', 0)")
        conn.execute(plant, (low, "m", "planted", "planted kites", "h"))
        conn.executemany(plant, [(-5000 - k, f"m{k}", f"f{k}", f"filler f{k}x", f"h{k}")
                                 for k in range(9)])
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 20)
    monkeypatch.setattr(drift, "REHOME_OPEN_ROWS", 3)
    monkeypatch.setattr(drift, "REPAIR_ROWS", 3)
    monkeypatch.setattr(drift, "OPEN_STEPS", 1)
    segment, sid, x = (segment_new, NEW, "x") if re_index else (segment_old, OLD, "")
    gone: set[str] = set()
    with SessionStore(path, segment=segment, segment_id=sid) as store:
        assert reindex.pending(store.connection, sid) == re_index
        assert store.connection.execute("SELECT 1 FROM sessions WHERE rowid = ?", (low,)).fetchone()
        if how == "record":
            assert store.upsert(SessionRecord("planted", "planted ospreys", (), AT)).status == "replaced"
        else:
            below = store.connection.execute("SELECT COUNT(*) FROM sessions WHERE created_at = 1.0"
                                              ).fetchone()[0]
            assert store.prune(RetentionPolicy(max_sessions=61)) == below
            gone = {"planted", *(f"f{k}" for k in range(9))}
    for _ in range(30):
        with SessionStore(path, segment=segment, segment_id=sid) as store:
            assert _hits(store, "zebraword") == ["long"]
            assert _hits(store, "kites") == []
            assert _hits(store, "ospreys") == ([] if how == "prune" else ["planted"])
            found = _hits(store, "deploys")
            assert sorted(found) == sorted(f"s{i}" for i in range(60))
            for k in range(9):
                assert _hits(store, f"f{k}x") in ([], [f"f{k}"] if f"f{k}" not in gone else [])
            if not reindex.pending(store.connection, sid) and not drift.due(store.connection):
                break
    else:
        pytest.fail("the re-index and heal did not finish")
    with SessionStore(path, segment=segment, segment_id=sid) as store:
        for k in range(9):
            assert _hits(store, f"{x}f{k}x") == ([] if how == "prune" else [f"f{k}"])
        assert store.stats()["index_in_sync"]
        assert drift._disagreeing(store.connection, 0)[0] == []
