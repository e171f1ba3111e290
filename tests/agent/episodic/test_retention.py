"""Tests of ``hermes_core/agent/episodic/retention.py``.

Old sessions go by age or by count, in steps of a bounded number of rows per write transaction
(counted through SQLite's trace of the statements run, not timed), and a session another
connection writes between two steps is judged like any other.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.agent.episodic.ranking import SECONDS_PER_DAY as DAY_S
from hermes_core.agent.episodic.retention import RetentionPolicy, pick
from hermes_core.agent.episodic.store import SessionRecord, SessionStore, SessionStoreError

NOW = 1_800_000_000.0


def plain(text: str) -> str:
    return text


def daily(n: int, prefix: str = "s") -> list[SessionRecord]:
    """``n`` sessions, one a day back from NOW (``s0`` is today's)."""
    return [SessionRecord(f"{prefix}{i}", f"{prefix} day {i} notes about item{i}", (),
                          NOW - i * DAY_S) for i in range(n)]


def rows_per_write(trace: list[str]) -> list[int]:
    """Sessions deleted by each write transaction in the trace (a statement that fires triggers
    is traced once per trigger program: counted once)."""
    out: list[set[str]] = []
    for sql in trace:
        if sql.startswith("BEGIN IMMEDIATE"):
            out.append(set())
        elif sql.startswith("DELETE FROM sessions WHERE rowid"):
            out[-1].add(sql)
    return [len(rows) for rows in out]


def test_pick_takes_the_excess_and_the_too_old_from_the_oldest() -> None:
    oldest = [(1, NOW - 40 * DAY_S), (2, NOW - 31 * DAY_S), (3, NOW - 29 * DAY_S), (4, NOW)]
    assert pick(oldest, 10, RetentionPolicy(max_age_days=30), NOW) == [1, 2]
    assert pick(oldest, 10, RetentionPolicy(max_sessions=7), NOW) == [1, 2, 3]
    assert pick(oldest, 10, RetentionPolicy(max_age_days=30, max_sessions=9), NOW) == [1, 2]
    assert pick(oldest, 10, RetentionPolicy(max_age_days=30, max_sessions=7), NOW) == [1, 2, 3]
    assert pick(oldest, 4, RetentionPolicy(max_sessions=7), NOW) == []
    assert pick(oldest, 10, RetentionPolicy(), NOW) == []


def test_an_age_bound_prunes_in_steps_of_at_most_one_batch_a_transaction(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db", segment=plain, clock=lambda: NOW) as store:
        store.upsert_many(daily(1_000))
        seen: list[str] = []
        store.connection.set_trace_callback(seen.append)
        try:
            gone = store.prune(RetentionPolicy(max_age_days=365), batch=100)
        finally:
            store.connection.set_trace_callback(None)
        writes = rows_per_write(seen)
        assert gone == 634 and max(writes) == 100 and sum(writes) == 634 and len(writes) == 7
        s = store.stats()
        assert (s["sessions"], s["index_in_sync"]) == (366, True)
        assert s["oldest"] == NOW - 365 * DAY_S
        assert store.search('"item400"', 5) == [] and store.get("s365") is not None


def test_a_count_bound_keeps_the_newest_and_a_recording_prunes_a_bounded_number_of_steps(
        tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db", segment=plain, clock=lambda: NOW) as store:
        store.upsert_many(daily(900))
        policy = RetentionPolicy(max_sessions=100)
        assert store.prune(policy, batch=50, max_batches=3) == 150
        assert store.count() == 750
        assert store.prune(policy, batch=50) == 650
        assert store.count() == 100 and store.get("s99") and store.get("s100") is None
        assert store.prune(policy) == 0


def test_a_session_written_between_two_steps_is_kept_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SessionStore(path, segment=plain, clock=lambda: NOW) as store, \
            SessionStore(path, segment=plain, clock=lambda: NOW) as other:
        store.upsert_many(daily(500))
        written: list[str] = []

        def between_steps(sql: str) -> None:   # the lock is free before each step's BEGIN
            if sql.startswith("BEGIN IMMEDIATE"):
                sid = f"new{len(written)}"
                other.upsert(SessionRecord(sid, f"written mid-prune {sid}", (), NOW + 1))
                written.append(sid)

        store.connection.set_trace_callback(between_steps)
        try:
            store.prune(RetentionPolicy(max_sessions=120), batch=100)
        finally:
            store.connection.set_trace_callback(None)
        assert len(written) >= 4
        assert all(store.get(sid) is not None for sid in written)
        s = store.stats()
        assert (s["sessions"], s["index_in_sync"]) == (120, True)


def test_a_read_only_store_says_it_cannot_prune_and_deletes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SessionStore(path, segment=plain) as store:
        store.upsert_many(daily(20))
    with SessionStore(path, segment=plain, read_only=True) as preview:
        with pytest.raises(SessionStoreError, match=r"read-only.*no session was pruned"):
            preview.prune(RetentionPolicy(max_sessions=1))
        assert preview.count() == 20
        assert preview.prune(RetentionPolicy(max_sessions=20)) == 0   # nothing due: nothing asked


@pytest.mark.parametrize("batch", [1, 7])
def test_any_batch_size_ends_at_the_same_archive(tmp_path: Path, batch: int) -> None:
    with SessionStore(tmp_path / "s.db", segment=plain, clock=lambda: NOW) as store:
        store.upsert_many(daily(60))
        assert store.prune(RetentionPolicy(max_age_days=30, max_sessions=20), batch=batch) == 40
        assert sorted(r[0] for r in store.connection.execute("SELECT session_id FROM sessions")) \
            == sorted(f"s{i}" for i in range(20))


@pytest.mark.parametrize("stamp", ["garbage", b"\xff", float("inf"), float("-inf")])
@pytest.mark.parametrize("policy", [RetentionPolicy(max_sessions=2),
                                    RetentionPolicy(max_age_days=2.5)])
def test_a_session_whose_stamp_another_tool_made_unreadable_is_kept_and_the_rest_pruned(
        tmp_path: Path, stamp: object, policy: RetentionPolicy) -> None:
    """A stamp written as text, a blob or an infinity: its age is unknown, so it is never the
    one pruned (an infinitely old one was deleted by age), and the prune goes on past it; it
    failed before with ValueError from float(), and a recording's prune is caught only as a
    store error."""
    with SessionStore(tmp_path / "s.db", segment=plain, clock=lambda: NOW) as store:
        store.upsert_many(daily(6))
        store.connection.execute("UPDATE sessions SET created_at = ? WHERE session_id = 's4'",
                                 (stamp,))
        store.connection.commit()
        store.prune(policy)
        kept = {r[0] for r in store.connection.execute("SELECT session_id FROM sessions")}
    assert "s4" in kept
    assert kept == ({"s0", "s4"} if policy.max_sessions else {"s0", "s1", "s2", "s4"})
