"""Tests of ``hermes_core/agent/episodic/long_write.py``.

A forget merges the whole index in one transaction (decision 108: 15.3 s at 1,000,000 sessions,
past the 30 s busy timeout at about 2,000,000); a session another process records meanwhile must
wait for it, not be lost. The forget here is slowed through SQLite's progress handler, so the
lock is held past the writer's (short) busy timeout whatever the machine's speed.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from hermes_core.agent.episodic import long_write
from hermes_core.agent.episodic.store import SessionRecord, SessionStore

NOW = 1_800_000_000.0


def plain(text: str) -> str:
    return text


def slowed_merge(store: SessionStore, hold_s: float) -> threading.Event:
    """Make ``store``'s next index merge (``optimize``) last at least ``hold_s``; the event is set
    when it starts."""
    merging = threading.Event()
    started: list[float] = []

    def trace(sql: str) -> None:
        if "'optimize'" in sql and not merging.is_set():
            started.append(time.monotonic())
            merging.set()

    def tick() -> int:
        if started and time.monotonic() - started[0] < hold_s:
            time.sleep(0.01)
        return 0

    store.connection.set_trace_callback(trace)
    store.connection.set_progress_handler(tick, 1)
    return merging


def forget_while_recording(forgetter: SessionStore, writer: SessionStore,
                           holding: threading.Event) -> bool:
    """Forget ``s7`` in a thread; once ``holding`` is set (the forgetter holds the lock), record a
    session through ``writer``. True when both the forget and the recording went through."""
    forgot: list[bool] = []
    thread = threading.Thread(target=lambda: forgot.append(forgetter.delete("s7")))
    thread.start()
    assert holding.wait(timeout=30)
    result = writer.upsert(SessionRecord("closing", "the session closed while the lock was held",
                                         (), NOW))
    thread.join(timeout=60)
    return forgot == [True] and result.status == "inserted"


def test_a_session_recorded_while_a_forget_merges_past_the_busy_timeout_is_stored(
        tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SessionStore(path, segment=plain) as forgetter, \
            SessionStore(path, segment=plain, busy_timeout_s=0.2) as writer:
        forgetter.upsert_many([SessionRecord(f"s{i}", f"filler {i} about pasta and sauce", (), NOW)
                               for i in range(300)])
        merging = slowed_merge(forgetter, hold_s=1.0)
        assert forget_while_recording(forgetter, writer, merging)
        assert writer.get("closing") is not None and writer.get("s7") is None
        assert long_write.declared_at(writer.connection) is None   # withdrawn with the merge


def test_a_writer_does_not_wait_on_a_declaration_its_author_left_long_ago(tmp_path: Path) -> None:
    """A process killed mid-merge leaves its declaration (the merge rolled back, the declaration
    was its own transaction): it counts for ``WAIT_S`` from its stamp, then not."""
    path = tmp_path / "s.db"
    with SessionStore(path, segment=plain) as store:
        with store.connection:
            long_write.declare(store.connection, NOW)
        assert long_write.worth_waiting(store.connection, NOW + long_write.WAIT_S - 1)
        assert not long_write.worth_waiting(store.connection, NOW + long_write.WAIT_S + 1)
        with store.connection:
            long_write.withdraw(store.connection)
        assert not long_write.worth_waiting(store.connection, NOW)


def test_a_session_recorded_while_the_forget_empties_its_wal_is_stored(tmp_path: Path) -> None:
    """After the merge a forget copies the WAL into the file (``wal_checkpoint(TRUNCATE)``), which
    blocks writers as long as the copy takes: the notice stands until that is done too. The copy
    is held here by a transaction of the same connection, as a slow disk or a descheduled process
    holds it."""
    path = tmp_path / "s.db"
    with SessionStore(path, segment=plain) as forgetter, \
            SessionStore(path, segment=plain, busy_timeout_s=0.2) as writer:
        forgetter.upsert_many([SessionRecord(f"s{i}", f"filler {i} about pasta and sauce", (), NOW)
                               for i in range(50)])
        copying = threading.Event()
        checkpoint = forgetter._checkpoint

        def slow_checkpoint(after: str) -> None:
            forgetter.connection.execute("BEGIN IMMEDIATE")
            copying.set()
            time.sleep(1.0)
            forgetter.connection.execute("COMMIT")
            checkpoint(after)

        forgetter._checkpoint = slow_checkpoint  # type: ignore[method-assign]
        assert forget_while_recording(forgetter, writer, copying)
        assert writer.get("closing") is not None
        assert long_write.declared_at(writer.connection) is None   # withdrawn after the copy
