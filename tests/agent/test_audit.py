from __future__ import annotations

import asyncio
import json
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent import audit as audit_module
from hermes_core.agent.audit import AuditLog
from hermes_core.errors import Attempt


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_lines_recorded_on_an_event_loop_keep_their_order_and_none_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)
    counter = iter(range(1_000_000))

    async def task(t: int) -> None:
        for i in range(40):
            audit.append({"seq": next(counter), "task": t, "i": i})
            await asyncio.sleep(0)

    async def main() -> None:
        await asyncio.gather(*(task(t) for t in range(64)))

    asyncio.run(main())
    audit.close()
    got = rows(path)
    assert [r["seq"] for r in got] == list(range(64 * 40))      # call order, every line
    assert audit._writer is not None and not audit._writer.is_alive()


def test_the_event_loop_does_not_wait_for_the_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)
    audit._lock.acquire()      # the file busy (a slow disk): a write would wait here

    async def record() -> None:
        audit.append({"n": 1})

    try:
        done = threading.Thread(target=lambda: asyncio.run(record()))
        done.start()
        done.join(timeout=10)
        assert not done.is_alive()                 # the loop went on at once
        assert not path.exists()                   # the line is queued, not written
    finally:
        audit._lock.release()
    audit.flush()
    assert rows(path) == [{"n": 1}]
    audit.close()


def test_a_sync_line_lands_after_the_queued_ones_and_at_once(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)
    audit._lock.acquire()      # hold the writer so the loop's lines stay queued

    async def record() -> None:
        for i in range(3):
            audit.append({"n": i})

    asyncio.run(record())
    audit._lock.release()
    audit.append({"n": "sync"})                     # no loop running here: written before return
    assert [r["n"] for r in rows(path)] == [0, 1, 2, "sync"]
    audit.close()


def test_close_then_more_lines_reopen_the_file_and_restart_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)

    async def record(n: int) -> None:
        audit.append({"n": n})

    asyncio.run(record(1))
    audit.close()
    assert audit._file is None
    asyncio.run(record(2))
    audit.close()
    assert [r["n"] for r in rows(path)] == [1, 2]


def test_lines_queued_at_interpreter_exit_are_written(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    code = (
        "import asyncio, sys\n"
        "from hermes_core.agent.audit import AuditLog\n"
        "AuditLog._run = lambda self: None\n"    # a writer that never got to write
        "audit = AuditLog(sys.argv[1])\n"
        "async def main():\n"
        "    for i in range(2000):\n"
        "        audit.append({'n': i})\n"
        "asyncio.run(main())\n")   # no close(): the process simply ends
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
    assert [r["n"] for r in rows(path)] == list(range(2000))


def test_no_path_queues_nothing(tmp_path: Path) -> None:
    audit = AuditLog(None)

    async def record() -> None:
        audit.append({"n": 1})

    asyncio.run(record())
    audit.close()
    assert audit._writer is None and list(tmp_path.iterdir()) == []


def test_lines_recorded_while_the_writer_is_awake_reach_the_file_without_a_flush(
        tmp_path: Path) -> None:
    """Only the first line after a write signals the writer; the lines recorded meanwhile must be
    written by that same wake-up, not wait for a close or the next quiet spell."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)

    async def main() -> None:
        audit.append({"n": 0})
        await asyncio.sleep(0.2)            # written: the writer waits for the next line
        for i in range(1, 50):              # the first signals it, the rest find it awake
            audit.append({"n": i})
        for _ in range(500):                # no flush: only the writer thread writes here
            if path.exists() and len(rows(path)) == 50:
                return
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert [r["n"] for r in rows(path)] == list(range(50))
    audit.close()


def test_a_pipe_at_the_audit_path_is_never_written_and_said_so(tmp_path: Path, caplog) -> None:
    """audit.jsonl made a FIFO: with no reader the open blocked the chat forever, with one every
    line went down the pipe. Neither is a log; the lines are refused with a warning naming it."""
    import logging
    import os
    fifo = tmp_path / "audit.jsonl"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # so the unfixed open could not block
    try:
        log = AuditLog(fifo)
        with caplog.at_level(logging.WARNING, logger="hermes_core.agent.audit"):
            log.append({"event": "tool", "name": "x"})
            log.close()
        try:
            got = os.read(reader, 4096)
        except BlockingIOError:
            got = b""
        assert got == b""
        assert str(fifo) in caplog.text and "not a regular file" in caplog.text
    finally:
        os.close(reader)


def test_dev_null_as_the_audit_log_is_accepted_quietly(caplog) -> None:
    """``audit_log: /dev/null`` is a way to keep no log; a character device is written as a file."""
    import logging
    log = AuditLog("/dev/null")
    with caplog.at_level(logging.WARNING, logger="hermes_core.agent.audit"):
        log.append({"event": "tool", "name": "x"})
        log.close()
    assert "cannot write" not in caplog.text


def test_a_pipe_without_a_reader_is_named_as_a_pipe(tmp_path: Path, caplog) -> None:
    import logging
    import os
    fifo = tmp_path / "audit.jsonl"
    os.mkfifo(fifo)
    log = AuditLog(fifo)
    with caplog.at_level(logging.WARNING, logger="hermes_core.agent.audit"):
        log.append({"event": "tool", "name": "x"})
        log.close()
    assert str(fifo) in caplog.text and "not a regular file" in caplog.text


def test_a_value_with_a_line_separator_stays_on_its_records_line(tmp_path: Path) -> None:
    """JSON escapes ``\\n`` but, without ``ensure_ascii``, writes NEL and U+2028/2029 as they
    are: a reader splitting lines as ``str.splitlines`` does cut the record in two."""
    log = AuditLog(tmp_path / "audit.jsonl")
    records = [{"tool": "查询\u2028x", "arguments": {"q": "a\x85b\u2029c"}}, {"tool": "second"}]
    for record in records:
        log.append(record)
    log.close()
    text = (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line) for line in text.splitlines()] == records
    assert "查询" in text   # still written as text, not \\u escapes


def test_an_attempt_that_failed_after_it_was_billed_says_how_many_tokens(tmp_path: Path) -> None:
    from hermes_core.errors import Attempt
    from hermes_core.types import Usage

    log = AuditLog(tmp_path / "audit.jsonl")
    log.write("r1", Attempt("anthropic", "claude-sonnet-4-5", "sk-...abcd", "server_error", 80.0,
                            decision="retry", error="IncompleteResponse",
                            usage=Usage(900, 1, cache_read_tokens=30)), 1.0)
    log.write("r1", Attempt("anthropic", "claude-sonnet-4-5", "sk-...abcd", "ok", 90.0), 2.0)
    log.close()
    cut, ok = rows(tmp_path / "audit.jsonl")
    assert cut["billed_tokens"] == {"input": 900, "output": 1, "cache_read": 30, "cache_write": 0,
                                     "estimated": 0}
    assert "billed_tokens" not in ok   # an answer's tokens are on its reply


@pytest.mark.parametrize("lock,on_loop", [("_lock", False), ("_start", True)])
def test_a_child_forked_while_a_thread_held_an_audit_lock_writes_its_lines(
        tmp_path: Path, lock: str, on_loop: bool,
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A server forked its workers while a thread of the parent was writing (``_lock``) or
    starting the writer (``_start``): the worker's own lines, sync or from an event loop."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)

    def child() -> object:
        async def record() -> None:
            audit.append({"who": "child"})
        if on_loop:
            asyncio.run(record())
        else:
            audit.append({"who": "child"})
        audit.close()
        return rows(path)

    with held_by_a_thread(getattr(audit, lock)):
        assert in_forked_child(child) == [{"who": "child"}]
    audit.close()


def test_lines_the_parent_had_queued_at_a_fork_are_written_once_by_the_parent(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)

    async def record() -> None:
        audit.append({"who": "parent"})   # queued: the file is busy with an earlier batch

    def child() -> object:
        audit.append({"who": "child"})
        audit.close()
        return "closed"

    with held_by_a_thread(audit._lock):
        asyncio.run(record())
        assert in_forked_child(child) == "closed"
    audit.close()
    assert rows(path) == [{"who": "child"}, {"who": "parent"}]
@pytest.mark.parametrize("then", ["writes a line", "closes"])
def test_a_child_forked_between_a_write_and_its_flush_never_writes_the_parent_s_line(
        tmp_path: Path, then: str, in_forked_child: Callable[[Callable[[], object]], object],
        stopped_after_call: Callable[..., Any]) -> None:
    """A server forked its workers while a thread of the parent had handed a line to the file
    and not yet flushed it: the worker, writing a line of its own or closing the log (as at its
    exit), must not write the parent's line a second time."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)
    audit.append({"who": "first"})   # the file is open: the next line goes through its buffer

    def child() -> object:
        if then == "writes a line":
            audit.append({"who": "child"})
        audit.close()
        return "done"

    with stopped_after_call(audit_module, "write", lambda: audit.append({"who": "parent"})):
        assert in_forked_child(child) == "done"
    audit.close()
    written = sorted(r["who"] for r in rows(path))
    assert written == sorted(["first", "parent"] + (["child"] if then == "writes a line" else []))


def test_a_child_forked_from_a_coroutine_writes_its_line_at_once(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A fork-started worker made inside ``async def`` records a line and ends with
    ``os._exit`` (as multiprocessing's workers do): its line is in the file, not queued for a
    writer thread the exit cut short."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)

    def child() -> object:
        audit.append({"who": "child"})
        return "recorded"

    async def fork_here() -> object:
        return in_forked_child(child)

    assert asyncio.run(fork_here()) == "recorded"
    assert rows(path) == [{"who": "child"}]
    audit.close()


def readable(path: Path) -> list[object]:
    """What a JSON-lines reader gets back: each line that parses (a torn one is skipped)."""
    out: list[object] = []
    for line in path.read_bytes().split(b"\n"):
        try:
            out.append(json.loads(line)["n"])
        except ValueError:
            pass
    return out


def test_a_disk_that_fills_mid_batch_glues_no_later_line_to_the_torn_one_and_loses_none(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A full disk (here the child's file size limit) cut a write short: the loop sent the rest,
    which failed, and the half line stayed at the file's end. The next line, once there was room
    again, went on after it: glued to the half line, a JSON reader lost it too; and the line cut
    short was never written. The next write now ends the half line first, then writes the lines
    the failed one did not."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)
    audit.append({"n": 0})

    def fill_then_free() -> object:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 12, hard))
        audit.append({"n": 1, "pad": "x" * 40})      # cut after 12 bytes
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        audit.append({"n": 2})                        # room again
        audit.close()
        return "done"

    assert in_forked_child(fill_then_free) == "done"
    audit.close()
    assert readable(path) == [0, 1, 2]


def test_a_line_left_torn_by_an_earlier_process_keeps_the_next_line_readable(tmp_path: Path) -> None:
    """A process killed (SIGKILL) inside a write, or one whose disk filled, can leave the file
    ending inside a line; a later process's first line went on after it and was lost with it."""
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b'{"n": 0}\n{"n": 1, "pad": "xx')
    audit = AuditLog(path)
    audit.append({"n": 2})
    audit.append({"n": 3})
    audit.close()
    assert readable(path) == [0, 2, 3]


def test_a_disk_that_stays_full_keeps_a_bounded_tail_of_the_lines_and_says_what_it_dropped(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The lines a failed write keeps for the next one must not grow without end when the disk
    never frees (``/dev/full`` fails every write with ENOSPC): the newest are kept."""
    import logging
    monkeypatch.setattr(audit_module, "KEEP_UNWRITTEN", 64)
    audit = AuditLog("/dev/full")
    with caplog.at_level(logging.WARNING, logger="hermes_core.agent.audit"):
        for n in range(20):
            audit.append({"n": n})
    kept = audit._unwritten
    assert 0 < len(kept) <= 64 and kept.endswith(b'{"n": 19}\n')
    assert any("dropped" in r.getMessage() for r in caplog.records)
    audit.close()


def attempt(status: str) -> Attempt:
    return Attempt("openai", "gpt-x", "fp1234", status, 12.5)


def test_lines_are_written_through_one_open_file(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.jsonl"
    log = AuditLog(path)
    log.write("r1", attempt("ok"), 1.0)
    handle = log._file
    log.write("r2", attempt("rate_limited"), 2.0)
    assert log._file is handle and handle is not None        # not reopened per attempt
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(r["request_id"], r["status"]) for r in rows] == [("r1", "ok"), ("r2", "rate_limited")]
    log.close()
    assert log._file is None


def test_a_deleted_or_rotated_file_is_reopened(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    log.write("r1", attempt("ok"), 1.0)
    path.rename(tmp_path / "audit.jsonl.1")                   # rotation
    log.write("r2", attempt("ok"), 2.0)
    assert [json.loads(x)["request_id"] for x in path.read_text(encoding="utf-8").splitlines()] == ["r2"]
    path.unlink()                                             # deletion
    log.write("r3", attempt("ok"), 3.0)
    assert [json.loads(x)["request_id"] for x in path.read_text(encoding="utf-8").splitlines()] == ["r3"]
    log.close()


def test_no_path_writes_nothing(tmp_path: Path) -> None:
    log = AuditLog(None)
    log.write("r1", attempt("ok"), 1.0)
    assert log._file is None and list(tmp_path.iterdir()) == []
