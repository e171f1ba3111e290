"""Tests of ``hermes_core/kept_table.py``: a home's shared JSON table changed under its lock."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from hermes_core import kept_table
from hermes_core.kept_table import Newer, Update, lock_path, lock_wait, update
from tests.conftest import LockTries


def _parse(data: Any) -> dict[str, int]:
    if not isinstance(data, dict):
        raise ValueError("not a table")
    return data


def _adding(key: str) -> Callable[[dict[str, int] | None], dict[str, int]]:
    return lambda kept: {**(kept or {}), key: 1}


def _dump(table: dict[str, int]) -> bytes:
    return json.dumps(table).encode("utf-8")


def _update(path: Path, key: str, **options: Any) -> Update[dict[str, int]]:
    return update(path, 1000, _parse, _adding(key), _dump, "test table",
                  logger=logging.getLogger("test"), **options)


def released_after_the_first_refusal(path: Path, lock_tries: LockTries) -> list[str]:
    """Hold ``path``'s lock as another holder would, and free it the moment a writer's first try
    is refused: a writer that waits takes it on its next try, one that does not has given up."""
    holder = FileLock(lock_path(path))
    holder.acquire()
    lock_tries.tries.clear()
    lock_tries.on_refused = lambda: holder.is_locked and holder.release()
    return lock_tries.tries


def test_a_writer_off_the_event_loop_waits_for_the_lock(tmp_path: Path,
                                                        lock_tries: LockTries) -> None:
    path = tmp_path / "cache" / "t.json"
    path.parent.mkdir()
    tries = released_after_the_first_refusal(path, lock_tries)
    assert _update(path, "a") == Update({"a": 1})
    assert tries[:2] == ["refused", "taken"]


def test_a_writer_on_an_event_loop_tries_the_lock_once_and_never_waits(
        tmp_path: Path, lock_tries: LockTries) -> None:
    """An async turn records its reply on the event loop: a lock held by another process held
    every task of the loop for up to 0.5 s. One try there; the caller writes later."""
    path = tmp_path / "cache" / "t.json"
    path.parent.mkdir()
    tries = released_after_the_first_refusal(path, lock_tries)

    async def turn() -> Update[dict[str, int]]:
        return _update(path, "a")

    assert asyncio.run(turn()) == Update(None, busy=True)
    assert tries == ["refused"] and not path.exists()
    assert asyncio.run(turn()) == Update({"a": 1})   # free now: the next try writes


def test_lock_wait_is_none_on_an_event_loop_and_the_given_wait_elsewhere() -> None:
    assert lock_wait(True) == 0.0
    assert lock_wait(False) == kept_table.LOCK_WAIT and lock_wait(False, 2.0) == 2.0


def test_a_lock_left_by_a_writer_killed_with_sigkill_is_free_at_once(tmp_path: Path,
                                                                      lock_tries: LockTries) -> None:
    """filelock's Unix lock is ``flock``: the kernel frees it with the holder's last descriptor,
    so a writer killed mid-write (``kill -9``) leaves a lock file but no lock. A pin."""
    import subprocess
    import sys
    path = tmp_path / "cache" / "t.json"
    path.parent.mkdir()
    code = ("import os, signal, sys; from filelock import FileLock\n"
            "FileLock(sys.argv[1]).acquire(); os.kill(os.getpid(), signal.SIGKILL)\n")
    holder = subprocess.run([sys.executable, "-c", code, str(lock_path(path))], timeout=60)
    assert holder.returncode == -9 and lock_path(path).exists()
    assert _update(path, "a", wait=0) == Update({"a": 1})
    assert lock_tries.tries == ["taken"]


def test_a_lock_that_is_a_folder_or_a_link_writes_nothing_and_says_so_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Each an OSError of the lock's open, at once: not a busy lock to wait for or try again."""
    path = tmp_path / "cache" / "t.json"
    path.parent.mkdir()
    lock_path(path).mkdir()
    with caplog.at_level(logging.DEBUG, logger="test"):
        assert _update(path, "a") == Update(None) and _update(path, "b") == Update(None)
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and str(lock_path(path)) in warned[0].getMessage()
    lock_path(path).rmdir()
    lock_path(path).symlink_to(tmp_path / "elsewhere")   # followed, it would make a file there
    assert _update(path, "a") == Update(None) and not (tmp_path / "elsewhere").exists()
    assert not path.exists()


def test_a_newer_version_s_table_is_read_as_nothing_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "t.json"
    path.parent.mkdir()
    path.write_bytes(b'{"v": 2}')

    def parse(data: Any) -> dict[str, int]:
        raise Newer("version 2")

    assert update(path, 1000, parse, _adding("a"), _dump, "test table",
                  logger=logging.getLogger("test")) == Update(None)
    assert path.read_bytes() == b'{"v": 2}'


def test_a_lock_linked_to_another_file_leaves_that_file_as_it_is(tmp_path: Path) -> None:
    """A lock file planted as a link to a file of the user's: the lock's open (``O_TRUNC``) does
    not follow it, so that file keeps its bytes and the table is not written. filelock follows
    such a link before 3.20.1 (an emptied file), hence the project's lower bound."""
    path = tmp_path / "cache" / "t.json"
    path.parent.mkdir()
    precious = tmp_path / "notes.txt"
    precious.write_bytes(b"kept")
    lock_path(path).symlink_to(precious)
    assert _update(path, "a") == Update(None)
    assert precious.read_bytes() == b"kept" and not path.exists()


#: A child process that learns one entry per store on an event loop (one try of the lock: busy
#: while the test holds it), says so, and ends when told.
_LEARNS_THEN_EXITS = """
import asyncio, sys
from pathlib import Path
from hermes_core.agent.prompt.calibration_store import CalibrationStore
from hermes_core.agent.served_as import ServedAs
served, calibration = ServedAs(Path(sys.argv[1])), CalibrationStore(Path(sys.argv[2]))
async def turn():
    served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
    calibration.put("claude-x", 1.25)
asyncio.run(turn())
print("kept out", flush=True)
sys.stdin.readline()
"""


def _learning_child(tmp_path: Path) -> tuple[Any, Path, Path]:
    import subprocess
    import sys
    cache = tmp_path / "cache"
    cache.mkdir()
    served, calibration = cache / "served_as.json", cache / "calibration.json"
    child = subprocess.Popen([sys.executable, "-c", _LEARNS_THEN_EXITS, str(served),
                              str(calibration)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             env={"PYTHONPATH": str(Path(__file__).resolve().parents[1]),
                                  "PATH": "/usr/bin:/bin"})
    return child, served, calibration


def test_entries_a_busy_lock_kept_out_are_written_when_the_process_exits(tmp_path: Path) -> None:
    """A busy lock keeps a store's news for its next write; a process that stopped first (a CLI
    run, a worker recycled) lost it. They are written at interpreter exit, the lock free by then."""
    child, served, calibration = _learning_child(tmp_path)
    holders = [FileLock(lock_path(p)) for p in (served, calibration)]
    for holder in holders:
        holder.acquire()
    assert child.stdout is not None and child.stdout.readline() == "kept out\n"
    assert not served.exists() and not calibration.exists()
    for holder in holders:
        holder.release()
    _out, err = child.communicate("\n", timeout=60)
    assert child.returncode == 0 and err == ""
    assert json.loads(served.read_text())["served_as"] == [
        ["azure", "prod-chat", "gpt-4o-2024-08-06"]]
    assert json.loads(calibration.read_text())["ratios"] == {"claude-x": 1.25}


def test_an_exit_with_the_lock_still_held_ends_without_writing_or_raising(tmp_path: Path) -> None:
    """The flush at exit waits a bounded time for the lock, and a lock never freed costs the
    entries (as before), not the exit."""
    child, served, calibration = _learning_child(tmp_path)
    holders = [FileLock(lock_path(p)) for p in (served, calibration)]
    for holder in holders:
        holder.acquire()
    try:
        assert child.stdout is not None and child.stdout.readline() == "kept out\n"
        _out, err = child.communicate("\n", timeout=60)
    finally:
        for holder in holders:
            holder.release()
    assert child.returncode == 0 and err == ""
    assert not served.exists() and not calibration.exists()


#: A child process whose served-as news a busy lock kept out; at its exit the store's own lock is
#: taken 0.6 s (of an injected clock) into the exit's budget, as when another thread is still
#: busy with the store; every wait the exit's flush asks for is printed, in order.
_EXIT_WAITS = """
import asyncio, atexit, json, sys
from pathlib import Path
from hermes_core import kept_table
from hermes_core.agent.served_as import ServedAs
served = ServedAs(Path(sys.argv[1]))
async def turn():
    served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
asyncio.run(turn())
now, waits = [0.0], []
class TakenAfterAWhile:
    def __init__(self, lock):
        self.lock = lock
    def acquire(self, blocking=True, timeout=-1):
        waits.append(["store", timeout])
        now[0] += 0.6
        return self.lock.acquire()
    def release(self):
        self.lock.release()
served._lock = TakenAfterAWhile(served._lock)
file_lock = kept_table.FileLock
def recorded(path, timeout, blocking, mode):
    waits.append(["file", timeout if blocking else 0.0])
    return file_lock(path, timeout=timeout, blocking=blocking, mode=mode)
kept_table.FileLock = recorded
atexit.register(lambda: print(json.dumps(waits), flush=True))   # runs last
atexit.unregister(kept_table.flush_pending)
atexit.register(kept_table.flush_pending, kept_table.EXIT_WAIT, lambda: now[0])
print("kept out", flush=True)
sys.stdin.readline()
"""


def test_the_exit_s_flush_waits_at_most_its_budget_in_all(tmp_path: Path) -> None:
    """The flush at exit is given :data:`EXIT_WAIT` for every wait together; a store whose own
    lock was busy waited that long for it and then as long again for the file's lock (2 s, not
    1). The second wait gets what the first left."""
    import subprocess
    import sys
    served = tmp_path / "served_as.json"
    child = subprocess.Popen([sys.executable, "-c", _EXIT_WAITS, str(served)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    with FileLock(lock_path(served)):
        assert child.stdout is not None and child.stdout.readline() == "kept out\n"
        out, err = child.communicate("\n", timeout=60)
    assert child.returncode == 0 and err == ""
    waits = json.loads(out)
    assert [kind for kind, _ in waits] == ["store", "file"]
    assert waits[0][1] == kept_table.EXIT_WAIT
    assert waits[1][1] == pytest.approx(kept_table.EXIT_WAIT - 0.6)
    assert not served.exists()


@pytest.mark.parametrize(("folder", "umask", "expected"), [
    (0o755, 0o022, 0o644),    # a home of one user: as the umask makes it
    (0o2775, 0o022, 0o664),   # a group's shared home: the group may take the lock
    (0o775, 0o077, 0o660),
    (0o777, 0o022, 0o666),    # anyone may replace the table there, so may take its lock
    (0o1777, 0o022, 0o644),   # sticky: others cannot replace the table; nor are they let in
])
def test_a_lock_file_s_mode_lets_in_whoever_may_write_the_table_s_folder(
        folder: int, umask: int, expected: int) -> None:
    assert kept_table.lock_mode(folder, umask) == expected


@pytest.mark.parametrize("made_before", [False, True], ids=["new lock", "lock made before"])
def test_a_lock_made_in_a_group_s_shared_folder_is_writable_by_the_group(
        tmp_path: Path, made_before: bool) -> None:
    """A home shared by the users of one group (``chmod 2775``): the lock file took the umask's
    mode (0644 under 022), so the first user's lock refused every other user of the group, who
    could still replace the table itself by a rename. Made in a process whose umask is 022. The
    mode is given only to a lock file being made: one an earlier release made (0644) stayed so,
    refusing the group for good; its owner, holding it, now adds what the folder grants."""
    import subprocess
    import sys
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o2775)
    lock = lock_path(cache / "served_as.json")
    if made_before:
        lock.touch()
        lock.chmod(0o644)
    code = ("import os, sys; os.umask(0o022)\n"
            "from hermes_core.agent.served_as import ServedAs\n"
            "ServedAs(sys.argv[1]).learn('azure', 'prod-chat', 'gpt-4o')\n")
    subprocess.run([sys.executable, "-c", code, str(cache / "served_as.json")], check=True,
                   timeout=60, env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert (cache / "served_as.json").exists() and lock.stat().st_mode & 0o777 == 0o664


def test_a_lock_s_mode_is_never_widened_through_a_link(tmp_path: Path) -> None:
    """Another user of a group's folder may put a link where the lock was, at a file of ours:
    that file keeps its mode."""
    precious = tmp_path / "precious"
    precious.write_bytes(b"kept")
    precious.chmod(0o600)
    link = tmp_path / ".served_as.json.lock"
    link.symlink_to(precious)
    kept_table._grant(link, 0o664)
    assert precious.stat().st_mode & 0o777 == 0o600


#: A process with a served-as entry a busy lock kept out; freed, it forks a child that never uses
#: the store and ends as a script does (its exit's flush runs), once the parent has learned and
#: written a newer entry for the same deployment.
_FORKS_THEN_LEARNS_AGAIN = """
import asyncio, os, sys
from pathlib import Path
from hermes_core.agent.served_as import ServedAs
served = ServedAs(Path(sys.argv[1]))
async def turn():
    served.learn("azure", "prod-chat", "gpt-4o-2024-05-13")
asyncio.run(turn())
print("kept out", flush=True)
sys.stdin.readline()
told, tell = os.pipe()
child = os.fork()
if child == 0:
    os.read(told, 1)
    sys.exit(0)
served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
os.write(tell, b"x")
print(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]), flush=True)
"""


def test_a_forked_child_leaves_the_parent_s_kept_out_news_to_the_parent(tmp_path: Path) -> None:
    """A child forked while its parent held news a busy lock kept out wrote that news at its own
    exit, over what the parent had written since: the newer entry lost to the stale one. The
    parent writes its news; a child writes what it learns itself."""
    import subprocess
    import sys
    served = tmp_path / "served_as.json"
    child = subprocess.Popen([sys.executable, "-c", _FORKS_THEN_LEARNS_AGAIN, str(served)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    with FileLock(lock_path(served)):
        assert child.stdout is not None and child.stdout.readline() == "kept out\n"
    out, _err = child.communicate("\n", timeout=60)
    assert (child.returncode, out) == (0, "0\n")
    assert json.loads(served.read_text())["served_as"] == [
        ["azure", "prod-chat", "gpt-4o-2024-08-06"]]


#: A process whose exit will flush kept-out news forks while another thread is noting a store
#: (``pending`` holding its lock); the child ends as a script does. Prints the child's exit code,
#: or "hung" when it had not ended after 20 s (then it is killed).
_FORKS_WHILE_A_STORE_IS_NOTED = """
import os, sys, threading, time
from hermes_core import kept_table
class Store:
    def flush_pending(self, wait, clock):
        pass
store = Store()
kept_table.pending(store)
held, done = threading.Event(), threading.Event()
def noting():
    with kept_table._pending_lock:
        held.set()
        done.wait()
threading.Thread(target=noting, daemon=True).start()
held.wait()
child = os.fork()
if child == 0:
    sys.exit(0)
done.set()
for _ in range(400):
    ended, status = os.waitpid(child, os.WNOHANG)
    if ended:
        print(os.waitstatus_to_exitcode(status), flush=True)
        break
    time.sleep(0.05)
else:
    os.kill(child, 9)
    os.waitpid(child, 0)
    print("hung", flush=True)
"""


def test_a_child_forked_while_a_store_was_being_noted_exits(tmp_path: Path) -> None:
    """The exit's flush takes the module's lock; a child forked while another thread held it
    inherited it held, with no thread to free it, and never ended."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _FORKS_WHILE_A_STORE_IS_NOTED],
                          capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert (done.returncode, done.stdout) == (0, "0\n")
