"""A store inherited across ``fork()``: the child writes on a connection of its own and
closes the parent's only under a lock that keeps that close from checkpointing; the parent's
store goes on as before and never waits for a child."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import forked_sqlite as forking
from hermes_core.agent.episodic.store import SessionRecord, SessionStore

AT = 1_800_000_000.0
FORK = multiprocessing.get_context("fork")
#: A guard against a hung child only (a deadlock would otherwise hang the suite); never a timing.
JOIN_S = 60


def _record(tag: str, i: int) -> SessionRecord:
    return SessionRecord(f"{tag}-{i}", f"{tag} wrote session {i} about zebrafish{tag}", (), AT)


def _write(store: SessionStore, tag: str, n: int) -> None:
    for i in range(n):
        store.upsert(_record(tag, i))
        assert store.search(f'"zebrafish{tag}"', 100)          # read back through the same store


def _child(store: SessionStore, tag: str, n: int) -> None:
    _write(store, tag, n)


def _check(path: Path, tags: dict[str, int]) -> None:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")
    finally:
        conn.close()
    with SessionStore(path) as store:
        assert store.count() == sum(tags.values())
        for tag, n in tags.items():
            found = {h.session_id for h in store.search(f'"zebrafish{tag}"', 1000)}
            assert found == {f"{tag}-{i}" for i in range(n)}
        assert store.stats()["index_in_sync"]


def test_forked_workers_write_through_the_parents_store_with_nothing_lost(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SessionStore(path)
    store.upsert(_record("p", 0))                       # the parent's connection is in use
    kids = [FORK.Process(target=_child, args=(store, f"c{k}", 25)) for k in range(2)]
    for kid in kids:
        kid.start()
    _write(store, "q", 25)                              # the parent writes meanwhile
    for kid in kids:
        kid.join(JOIN_S)
    assert [kid.exitcode for kid in kids] == [0, 0]
    _write(store, "r", 5)                              # the parent's connection still works
    store.close()
    _check(path, {"p": 1, "q": 25, "r": 5, "c0": 25, "c1": 25})


def test_a_fork_while_another_thread_holds_the_store_does_not_hang_the_child(
        tmp_path: Path) -> None:
    """The fork waits for the holder at most the store's busy timeout (here short: the holder
    waits for the child), then leaves the store open across it; the child still gets its own."""
    path = tmp_path / "sessions.db"
    store = SessionStore(path, busy_timeout_s=0.2)
    store.upsert(_record("p", 0))
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.snapshot():          # the store's lock and a read transaction, held
            held.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    try:
        kid = FORK.Process(target=_child, args=(store, "c", 3))
        kid.start()
        kid.join(JOIN_S)
        hung = kid.is_alive()
        if hung:
            kid.kill()
            kid.join()
    finally:
        release.set()
        holder.join()
    assert not hung and kid.exitcode == 0
    store.close()
    _check(path, {"p": 1, "c": 3})


def _exit_after_upkeep(store: SessionStore) -> None:
    store.upsert(_record("c", 0))
    store.close()                       # the child's close: its own connections only


def test_a_child_closing_the_inherited_store_leaves_the_parents_connections_working(
        tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SessionStore(path)
    store.upsert(_record("p", 0))
    kid = FORK.Process(target=_exit_after_upkeep, args=(store,))
    kid.start()
    kid.join(JOIN_S)
    assert kid.exitcode == 0
    _write(store, "q", 3)
    store.close()
    _check(path, {"p": 1, "q": 3, "c": 1})


def _write_across_the_parents_close(store: SessionStore, used: Any, closed: Any) -> None:
    store.upsert(_record("c", 0))       # the child's own connection, open from here on
    used.set()
    assert closed.wait(JOIN_S)
    _write(store, "d", 4)
    store.close()


def test_a_child_writing_after_the_parent_closed_the_store_loses_nothing(tmp_path: Path) -> None:
    """SQLite keeps a process's locks on a file in memory: a child forked while the parent had
    the file open took no lock of its own, so the parent's close saw no other user, checkpointed
    and removed ``-wal`` under the child, and the child's later writes were lost."""
    path = tmp_path / "sessions.db"
    store = SessionStore(path)
    store.upsert(_record("p", 0))
    used, closed = FORK.Event(), FORK.Event()
    kid = FORK.Process(target=_write_across_the_parents_close, args=(store, used, closed))
    kid.start()
    assert used.wait(JOIN_S)
    store.close()                        # the parent is done first; the child writes on
    assert Path(f"{path}-wal").exists()  # the child's open connection kept it
    closed.set()
    kid.join(JOIN_S)
    assert kid.exitcode == 0
    _check(path, {"p": 1, "c": 1, "d": 4})


def test_a_store_opened_by_a_relative_path_is_reopened_in_the_child_at_the_same_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    store = SessionStore("sessions.db")
    store.upsert(_record("p", 0))
    monkeypatch.chdir(tmp_path / "b")    # a worker that changed folder before forking
    kid = FORK.Process(target=_child, args=(store, "c", 2))
    kid.start()
    kid.join(JOIN_S)
    assert kid.exitcode == 0
    store.close()
    assert not (tmp_path / "b" / "sessions.db").exists()
    _check(tmp_path / "a" / "sessions.db", {"p": 1, "c": 2})


def _use_closed(store: SessionStore, out: Any) -> None:
    try:
        store.count()
    except Exception as e:               # what it raised is the answer
        out.put(type(e).__name__)
    else:
        out.put("reopened")


def test_a_store_the_parent_closed_stays_closed_in_a_child_forked_later(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SessionStore(path)
    store.upsert(_record("p", 0))
    store.close()
    out = FORK.Queue()
    kid = FORK.Process(target=_use_closed, args=(store, out))
    kid.start()
    kid.join(JOIN_S)
    assert kid.exitcode == 0
    assert out.get(timeout=JOIN_S) != "reopened"


def _exit_at_once() -> None:
    pass


#: Another process writes pages to ``-wal`` and dies before its close could checkpoint them.
_DIES_AFTER_WRITING = (
    "import os, sqlite3, sys\n"
    "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "for i in range(40):\n"
    "    c.execute('INSERT INTO meta(key, value) VALUES (?, ?)', (f'other-{i}', str(i) * 3000))\n"
    "os._exit(0)\n")


def _other_process_rows(path: Path) -> int:
    """How many of ``_DIES_AFTER_WRITING``'s rows the database at ``path`` holds."""
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM meta WHERE key LIKE 'other-%'").fetchone()[0])
    finally:
        conn.close()


def _stopped_at_first_close(real: Any) -> Any:
    """``forking.inherited`` for a child that stops itself (SIGSTOP) before its first close of
    what it inherited: descheduled between the fork and that close for as long as the test says."""
    stopped: list[int] = []

    def stop_first(*args: Any) -> list[object]:
        if not stopped:
            stopped.append(1)
            os.kill(os.getpid(), signal.SIGSTOP)
        return list(real(*args))

    return stop_first


def test_a_child_slow_to_close_what_it_inherited_cannot_undo_another_process_s_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child closes the connections it inherited (so its own take real locks). Were the
    parent to close first, and another process write and die before its checkpoint, the
    child's close would find no other user and checkpoint the pages its stale ``-wal`` holds by
    the other process's index: the child closes under a guard no EXCLUSIVE lock passes."""
    real = forking.inherited

    def slow(*args: Any) -> list[object]:
        time.sleep(2)                    # a child descheduled before its close
        return real(*args)

    path = tmp_path / "sessions.db"
    store = SessionStore(path)
    for i in range(20):
        store.upsert(_record("p", i))
    monkeypatch.setattr(forking, "inherited", slow)
    kid = FORK.Process(target=_exit_at_once)
    kid.start()
    store.close()
    subprocess.run([sys.executable, "-c", _DIES_AFTER_WRITING, str(path)], check=True)
    kid.join(JOIN_S)
    assert kid.exitcode == 0
    _check(path, {"p": 20})
    assert _other_process_rows(path) == 40


def test_a_child_stopped_before_closing_what_it_inherited_neither_holds_up_the_parent_nor_undoes_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child stopped (SIGSTOP, or just not scheduled) between the fork and its close of what it
    inherited: the parent's close goes on at once, the parent's close removes ``-wal``, another
    process writes and dies before its checkpoint, and the child, resumed, closes: that close
    must not checkpoint or remove the other process's ``-wal``."""
    stop_first = _stopped_at_first_close(forking.inherited)

    path = tmp_path / "sessions.db"
    store = SessionStore(path)
    for i in range(20):
        store.upsert(_record("p", i))
    monkeypatch.setattr(forking, "inherited", stop_first)
    monkeypatch.setattr(forking, "WAIT_S", JOIN_S * 10)     # a wait for the child would hang
    kid = FORK.Process(target=_exit_at_once)
    kid.start()
    try:
        assert kid.pid is not None
        assert os.WIFSTOPPED(os.waitpid(kid.pid, os.WUNTRACED)[1])
        closer = threading.Thread(target=store.close)
        closer.start()
        closer.join(JOIN_S)
        waited = closer.is_alive()
        assert not waited, "the parent's close waited for the stopped child"
        subprocess.run([sys.executable, "-c", _DIES_AFTER_WRITING, str(path)], check=True)
    finally:
        os.kill(kid.pid, signal.SIGCONT)         # type: ignore[arg-type]
        kid.join(JOIN_S)
    assert kid.exitcode == 0
    _check(path, {"p": 20})
    assert _other_process_rows(path) == 40


def test_a_child_resumed_after_its_file_was_replaced_leaves_the_new_file_s_wal_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's lock is taken on the file at the store's path, which may be another file
    than the one it inherited (replaced while the child was stopped, the parent closed): the
    lock guards nothing then, and SQLite's close must itself skip the checkpoint of a moved
    file, or it would remove the new file's ``-wal`` by name (a guard: it passed before)."""
    stop_first = _stopped_at_first_close(forking.inherited)

    path = tmp_path / "sessions.db"
    store = SessionStore(path)
    for i in range(20):
        store.upsert(_record("p", i))
    with SessionStore(tmp_path / "other.db") as other:
        other.upsert(_record("o", 0))
    monkeypatch.setattr(forking, "inherited", stop_first)
    kid = FORK.Process(target=_exit_at_once)
    kid.start()
    try:
        assert kid.pid is not None
        assert os.WIFSTOPPED(os.waitpid(kid.pid, os.WUNTRACED)[1])
        store.close()
        os.replace(tmp_path / "other.db", path)
        subprocess.run([sys.executable, "-c", _DIES_AFTER_WRITING, str(path)], check=True)
    finally:
        os.kill(kid.pid, signal.SIGCONT)         # type: ignore[arg-type]
        kid.join(JOIN_S)
    assert kid.exitcode == 0
    _check(path, {"o": 1})
    assert _other_process_rows(path) == 40


@pytest.mark.skipif(not hasattr(fcntl, "F_OFD_SETLK"), reason="open-file locks are Linux's")
def test_the_guard_waits_out_another_holder_of_the_pending_byte_then_gives_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While another process holds the pending byte (its close checkpointing, or EXCLUSIVE
    locking mode) the child gets no guard past ``WAIT_S`` and keeps the connection unclosed;
    once it is let go the guard is taken; a file gone gives none."""
    path = tmp_path / "sessions.db"
    path.write_bytes(b"")
    other = os.open(path, os.O_RDWR)         # another open file: its lock conflicts as a process's
    fcntl.fcntl(other, fcntl.F_OFD_SETLK, forking.flock_bytes(fcntl.F_WRLCK, forking.PENDING_BYTE, 1))
    monkeypatch.setattr(forking, "WAIT_S", 0.0)
    try:
        assert forking.guard(path) is None
    finally:
        os.close(other)
    held = forking.guard(path)
    assert held is not None
    os.close(held)
    assert forking.guard(tmp_path / "gone.db") is None


def _locks_on(path: Path) -> list[tuple[str, str, int, int]]:
    """The kernel's own record of the locks on ``path``: (kind, mode, first byte, last byte)."""
    inode = os.stat(path).st_ino
    out = []
    for line in Path("/proc/locks").read_text().splitlines():
        f = line.split()
        if f[1] == "->":        # a waiter
            continue
        if int(f[5].rsplit(":", 1)[1]) == inode:
            out.append((f[1], f[3], int(f[6]), int(f[7])))
    return out


needs_ofd = pytest.mark.skipif(not hasattr(fcntl, "F_OFD_SETLK") or not Path("/proc/locks").exists(),
                               reason="open-file locks and /proc/locks are Linux's")


@needs_ofd
def test_the_guard_locks_the_pending_byte_as_the_kernel_reads_the_platform_s_struct_flock(
        tmp_path: Path) -> None:
    """The lock's ``struct flock`` was packed as ``hhqqi4x``, x86-64's layout, untested where
    ``off_t`` aligns otherwise (32-bit Linux: 24 bytes, no padding). It is laid out by C's rules
    with the alignment ctypes gives a 64-bit integer here; the kernel's own account (/proc/locks)
    of the lock taken must be a read lock of the one pending byte."""
    path = tmp_path / "sessions.db"
    path.write_bytes(b"")
    held = forking.guard(path)
    assert held is not None
    try:
        assert _locks_on(path) == [("OFDLCK", "READ", forking.PENDING_BYTE, forking.PENDING_BYTE)]
    finally:
        os.close(held)
    assert _locks_on(path) == []


@needs_ofd
def test_a_struct_flock_of_another_layout_is_caught_by_the_kernel_s_account(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above has teeth: a layout that is not this platform's (x86-64's packed without
    its padding, i386's) locks another range or is refused, never the pending byte."""
    path = tmp_path / "sessions.db"
    path.write_bytes(b"")
    native = forking.flock_bytes(fcntl.F_RDLCK, forking.PENDING_BYTE, 1)
    wrong = struct.pack("=hhqqi", fcntl.F_RDLCK, os.SEEK_SET, forking.PENDING_BYTE, 1, 0)
    assert len(wrong) != len(native)
    monkeypatch.setattr(forking, "flock_bytes", lambda kind, start, length: wrong)
    monkeypatch.setattr(forking, "WAIT_S", 0.0)
    held = forking.guard(path)
    try:
        assert (held is None or _locks_on(path)
                != [("OFDLCK", "READ", forking.PENDING_BYTE, forking.PENDING_BYTE)])
    finally:
        if held is not None:
            os.close(held)


# Linux's struct flock64 (uapi asm-generic/fcntl.h; glibc's bits/fcntl.h), by each ABI's rule for
# a 64-bit integer: aligned to 8 on x86-64 (SysV psABI), arm64 (AAPCS64) and 32-bit ARM (EABI),
# to 4 on i386; neither arm64 nor x86-64 adds an ``__ARCH_FLOCK64_PAD``.
FLOCK_ABIS = [("x86-64", 8, (0, 2, 8, 16, 24), 32), ("aarch64", 8, (0, 2, 8, 16, 24), 32),
              ("armv7-eabi", 8, (0, 2, 8, 16, 24), 32), ("i386", 4, (0, 2, 4, 12, 20), 24)]


@pytest.mark.parametrize(("abi", "align", "offsets", "size"), FLOCK_ABIS)
def test_the_struct_flock_is_laid_out_as_each_linux_abi_lays_it_out(
        abi: str, align: int, offsets: tuple[int, ...], size: int) -> None:
    """The layout was ctypes' on the machine running it, checked on x86-64 only. It is computed
    by C's rules from the ABI's alignment of a 64-bit integer, so aarch64's (and i386's) can be
    checked here: each field packed where that ABI's compiler puts it, the padding zero."""
    layout = forking.flock_layout(align)
    assert (layout.offsets, layout.size) == (offsets, size), abi
    raw = forking.flock_bytes(fcntl.F_RDLCK, forking.PENDING_BYTE, 1, layout)
    assert len(raw) == size
    fields = [struct.unpack_from("=" + code, raw, at)[0] for code, at in zip("hhqqi", offsets, strict=True)]
    assert fields == [fcntl.F_RDLCK, os.SEEK_SET, forking.PENDING_BYTE, 1, 0], abi
    used = {at + k for at, n in zip(offsets, (2, 2, 8, 8, 4), strict=True) for k in range(n)}
    assert all(raw[i] == 0 for i in range(size) if i not in used), abi


def test_this_platform_s_struct_flock_is_the_layout_its_c_compiler_makes() -> None:
    """The layout the guard uses is what ctypes (the platform's C rules) makes of the struct."""
    import ctypes

    class Flock(ctypes.Structure):
        _fields_ = (("l_type", ctypes.c_short), ("l_whence", ctypes.c_short),
                    ("l_start", ctypes.c_int64), ("l_len", ctypes.c_int64), ("l_pid", ctypes.c_int))

    native = tuple(getattr(Flock, n).offset for n, _ in Flock._fields_)
    assert (forking.FLOCK_LAYOUT.offsets, forking.FLOCK_LAYOUT.size) == (native, ctypes.sizeof(Flock))
    assert forking.flock_bytes(fcntl.F_RDLCK, 7, 1) == bytes(Flock(fcntl.F_RDLCK, os.SEEK_SET, 7, 1, 0))
