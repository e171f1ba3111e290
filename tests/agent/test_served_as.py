"""What a name asked for answered as: learned from replies, kept per provider, bounded."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from hermes_core import atomic_write, kept_table
from hermes_core.agent.served_as import FILE_NAME, ServedAs
from hermes_core.redact import Redactor
from tests.conftest import LockTries, came_true


def test_a_name_never_answered_for_is_itself() -> None:
    assert ServedAs().get("azure", "prod-chat") == "prod-chat"


def test_a_reply_teaches_what_its_name_runs_per_provider_and_the_latest_wins() -> None:
    served = ServedAs()
    served.learn("azure", "prod-chat", "gpt-4o-2024-05-13")
    served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")   # the deployment was moved
    assert served.get("azure", "prod-chat") == "gpt-4o-2024-08-06"
    assert served.get("azure-eu", "prod-chat") == "prod-chat"


def test_past_its_limit_the_name_learned_longest_ago_is_forgotten_first() -> None:
    served = ServedAs(limit=2)
    served.learn("p", "a", "A")
    served.learn("p", "b", "B")
    served.learn("p", "a", "A2")   # learned again: now the most recent
    served.learn("p", "c", "C")
    assert [served.get("p", n) for n in ("a", "b", "c")] == ["A2", "b", "C"]


def test_what_a_name_answered_as_is_read_by_the_next_process_on_the_home(tmp_path: Path) -> None:
    """Kept per process, a restart priced its first failed attempt at a deployment as "no price
    for prod-chat" until a reply came; the home keeps it for the next one."""
    path = tmp_path / "cache" / FILE_NAME
    ServedAs(path).learn("azure", "prod-chat", "gpt-4o-2024-08-06")
    assert ServedAs(path).get("azure", "prod-chat") == "gpt-4o-2024-08-06"


def test_two_processes_learning_at_once_keep_both_and_the_latest_of_one_name(
        tmp_path: Path) -> None:
    path = tmp_path / "cache" / FILE_NAME
    one, two = ServedAs(path), ServedAs(path)
    one.get("azure", "x"), two.get("azure", "x")   # both read the (empty) file first
    one.learn("azure", "prod-chat", "gpt-4o-2024-05-13")
    two.learn("azure", "eu-chat", "gpt-4o-mini-2024-07-18")
    two.learn("azure", "prod-chat", "gpt-4o-2024-08-06")   # moved since
    later = ServedAs(path)
    assert later.get("azure", "prod-chat") == "gpt-4o-2024-08-06"
    assert later.get("azure", "eu-chat") == "gpt-4o-mini-2024-07-18"


def test_a_reply_that_says_what_is_known_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache" / FILE_NAME
    served = ServedAs(path)
    served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
    path.write_text("left alone", encoding="utf-8")   # a write now would replace it
    served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
    served.learn("openai", "gpt-4o", "gpt-4o")   # a name that answers as itself: nothing to keep
    served.learn("fake", "gpt-4o", "")   # a reply that names no model says nothing
    assert served.get("fake", "gpt-4o") == "gpt-4o"
    assert path.read_text(encoding="utf-8") == "left alone"


def test_a_router_answering_as_two_models_in_turn_writes_each_once(tmp_path: Path) -> None:
    """A deployment that routes each request to one of several models (Azure's model-router, a
    gateway's "auto") names a different model than the reply before: each such reply read,
    merged and rewrote the file, ~7 ms of disk on every turn instead of once per model."""
    path = tmp_path / "cache" / FILE_NAME
    served = ServedAs(path)
    served.learn("azure", "model-router", "gpt-4.1-2025-04-14")
    served.learn("azure", "model-router", "o4-mini-2025-04-16")
    path.write_text("left alone", encoding="utf-8")   # a write now would replace it
    for _ in range(3):
        served.learn("azure", "model-router", "gpt-4.1-2025-04-14")
        served.learn("azure", "model-router", "o4-mini-2025-04-16")
    assert path.read_text(encoding="utf-8") == "left alone"
    assert served.get("azure", "model-router") == "o4-mini-2025-04-16"   # the latest, in memory


def test_the_file_is_bounded_to_the_names_learned_last(tmp_path: Path) -> None:
    path = tmp_path / "cache" / FILE_NAME
    served = ServedAs(path, limit=2)
    for name in ("a", "b", "c"):
        served.learn("p", name, name.upper() + "-1")
    later = ServedAs(path, limit=2)
    assert [later.get("p", n) for n in ("a", "b", "c")] == ["a", "B-1", "C-1"]
    assert len(json.loads(path.read_text(encoding="utf-8"))["served_as"]) == 2


@pytest.mark.parametrize("body", [
    "{not json", "[]", '{"version": 0, "served_as": []}', '{"version": 1}',
    '{"version": 1, "served_as": [["p", "a"]]}', '{"version": 1, "served_as": [["p", "a", 7]]}',
    '{"version": 1, "served_as": [["p", "a", "' + "x" * 5000 + '"]]}', "\udcff"])
def test_a_damaged_or_foreign_file_is_ignored_with_a_warning_naming_it_then_replaced(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, body: str) -> None:
    path = tmp_path / "cache" / FILE_NAME
    path.parent.mkdir()
    path.write_bytes(body.encode("utf-8", "surrogateescape"))
    served = ServedAs(path)
    with caplog.at_level(logging.WARNING, logger="hermes_core.served_as"):
        assert served.get("p", "a") == "a"
        served.get("p", "b")
    assert [r.getMessage() for r in caplog.records if str(path) in r.getMessage()] != []
    assert len(caplog.records) == 1   # said once
    served.learn("p", "a", "A")
    assert ServedAs(path).get("p", "a") == "A"


def test_a_secret_or_an_overlong_name_in_a_reply_is_never_written(tmp_path: Path) -> None:
    """The model a reply names is the server's text: a proxy echoing the key in it must not put
    the key in the home, nor a hostile one a megabyte per name."""
    path = tmp_path / "cache" / FILE_NAME
    key = "sk-proj-servedASsecret0123456789abcdef"
    served = ServedAs(path, scrub=Redactor([key]))
    served.learn("azure", "prod-chat", f"gpt-4o {key}")
    served.learn("azure", "eu-chat", "m" * 10_000)
    served.learn("azure", "us-chat", "gpt-4o-2024-08-06")
    text = path.read_text(encoding="utf-8")
    assert key not in text and "m" * 300 not in text and "gpt-4o-2024-08-06" in text
    assert served.get("azure", "prod-chat") == f"gpt-4o {key}"   # this process still knows


def test_a_home_that_refuses_the_write_keeps_it_for_the_process(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    served = ServedAs(blocker / FILE_NAME)
    served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
    assert served.get("azure", "prod-chat") == "gpt-4o-2024-08-06"
    assert blocker.read_text(encoding="utf-8").startswith("a file")


def test_a_store_that_learned_while_another_merged_keeps_its_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Merged without a lock, two stores on one home could each read the file, then each write
    what it had read plus its own: the last writer won and the other's entry was lost for good
    (marked written, never tried again). Here ``two`` learns while ``one`` is between its read
    and its write; both entries are in the file once ``two`` has seen its next reply."""
    path = tmp_path / "cache" / FILE_NAME
    one, two = ServedAs(path), ServedAs(path)
    one.learn("azure", "us-chat", "gpt-4o-2024-05-13")
    two.get("azure", "x")   # both have read the file
    real_read = atomic_write.read_cache
    reads = []

    def read_then_let_two_learn(p: object, limit: int = atomic_write.MAX_CACHE_BYTES) -> bytes:
        data = real_read(p, limit)   # type: ignore[arg-type]
        reads.append(p)
        if len(reads) == 1:   # one's merge read is done: two learns before one writes
            two.learn("azure", "eu-chat", "gpt-4o-mini-2024-07-18")
        return data

    monkeypatch.setattr(atomic_write, "read_cache", read_then_let_two_learn)
    one.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
    monkeypatch.setattr(atomic_write, "read_cache", real_read)
    two.learn("azure", "eu-chat", "gpt-4o-mini-2024-07-18")   # the next reply: nothing new
    later = ServedAs(path)
    assert later.get("azure", "prod-chat") == "gpt-4o-2024-08-06"
    assert later.get("azure", "eu-chat") == "gpt-4o-mini-2024-07-18"
    assert later.get("azure", "us-chat") == "gpt-4o-2024-05-13"


def test_processes_learning_at_once_lose_none_of_each_other_s_entries(tmp_path: Path) -> None:
    """Three processes, started together, each learn 40 names of their own (each a read, a
    merge and a rename); the file keeps all 120. Without the lock a write read before another's
    rename dropped that one's entry."""
    import subprocess
    import sys
    path = tmp_path / "cache" / FILE_NAME
    go = tmp_path / "go"
    code = ("import sys, time; from pathlib import Path\n"
            "from hermes_core.agent.served_as import ServedAs\n"
            "served = ServedAs(Path(sys.argv[1]))\n"
            "while not Path(sys.argv[3]).exists(): time.sleep(0.01)\n"
            "for n in range(40):\n"
            "    served.learn('azure', f'{sys.argv[2]}-{n}', f'model-{n}')\n"
            "served.learn('azure', f'{sys.argv[2]}-0', 'model-0')\n")   # one more reply
    writers = [subprocess.Popen([sys.executable, "-c", code, str(path), name, str(go)])
               for name in ("a", "b", "c")]
    go.touch()
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0]
    kept = json.loads(path.read_text(encoding="utf-8"))["served_as"]
    assert sorted(requested for _, requested, _ in kept) == sorted(
        f"{name}-{n}" for name in "abc" for n in range(40))


def test_a_reply_on_an_event_loop_tries_a_held_lock_once_and_writes_at_the_next_reply(
        tmp_path: Path, lock_tries: LockTries) -> None:
    """An async turn learns on the event loop: it must not wait there for another process's
    lock. One try; the entry is known to the process and written at the next reply."""
    path = tmp_path / "cache" / FILE_NAME
    path.parent.mkdir()
    holder = FileLock(kept_table.lock_path(path))
    holder.acquire()
    lock_tries.tries.clear()   # the holder's own
    served = ServedAs(path)

    async def reply(answered: str) -> None:
        served.learn("azure", "prod-chat", answered)

    asyncio.run(reply("gpt-4o-2024-08-06"))
    assert lock_tries.tries == ["refused"] and not path.exists()
    assert served.get("azure", "prod-chat") == "gpt-4o-2024-08-06"
    holder.release()
    asyncio.run(reply("gpt-4o-2024-08-06"))   # says what is known: the entry kept out goes in
    assert ServedAs(path).get("azure", "prod-chat") == "gpt-4o-2024-08-06"


def test_a_file_from_a_newer_version_is_ignored_and_never_written_over(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A newer hermes_core on the same home writes a version this one cannot read: replacing it
    with version 1 at the next thing learned lost the newer one's entries, and two versions on
    one home would overwrite each other at every write. It is left as it is."""
    path = tmp_path / "cache" / FILE_NAME
    path.parent.mkdir()
    newer = b'{"version": 2, "served_as": {"azure": {"prod-chat": "gpt-5"}}}'
    path.write_bytes(newer)
    served = ServedAs(path)
    with caplog.at_level(logging.WARNING, logger="hermes_core.served_as"):
        served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
        served.learn("azure", "eu-chat", "gpt-4o-mini")
    assert path.read_bytes() == newer
    assert served.get("azure", "prod-chat") == "gpt-4o-2024-08-06"   # known to this process
    assert [r.getMessage() for r in caplog.records if "newer" in r.getMessage()] != []


def test_a_child_forked_while_a_thread_was_learning_learns_and_reads(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    served = ServedAs(tmp_path / FILE_NAME)

    def child() -> object:
        served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")
        return served.get("azure", "prod-chat")

    with held_by_a_thread(served._lock):
        assert in_forked_child(child) == "gpt-4o-2024-08-06"



def test_a_forked_child_never_writes_what_the_parent_had_still_to_write(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """Entries a busy lock kept out are the parent's to write: the child's copy, written at its
    next reply, put back what the parent had learned since."""
    path = tmp_path / "cache" / FILE_NAME
    path.parent.mkdir()
    holder = FileLock(kept_table.lock_path(path))
    holder.acquire()
    served = ServedAs(path)

    async def reply(answered: str) -> None:
        served.learn("azure", "prod-chat", answered)

    asyncio.run(reply("gpt-4o-2024-05-13"))   # kept out: known to the process, not in the file
    holder.release()
    forked = tmp_path / "forked"

    def parent_learns_after_the_fork() -> None:
        if came_true(forked.exists):
            served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")

    def child() -> object:
        forked.touch()
        if not came_true(lambda: ServedAs(path).get("azure", "prod-chat") == "gpt-4o-2024-08-06"):
            return "the parent never wrote"
        served.learn("azure", "eu-chat", "gpt-4o-mini")
        return "learned"

    parent = threading.Thread(target=parent_learns_after_the_fork)
    parent.start()
    assert in_forked_child(child) == "learned"
    parent.join(60)
    assert ServedAs(path).get("azure", "prod-chat") == "gpt-4o-2024-08-06"
    assert ServedAs(path).get("azure", "eu-chat") == "gpt-4o-mini"
