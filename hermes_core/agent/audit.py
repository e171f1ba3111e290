"""The audit log: one JSON line per call attempt and per tool call, never a secret.

A line recorded on an event loop must not make the loop wait for the disk (64 concurrent requests
share that one thread), so it is queued and a writer thread writes it, in batches: woken by the
first line after a quiet spell, the writer lets ``BATCH_S`` of lines gather, then writes them with
one write and one flush. Waking a thread per line cost the loop a thread switch per request; this
way a busy loop only appends to a deque, and a line reaches the file within ``BATCH_S``.

A line recorded anywhere else (a sync call, already off any loop) is written at once, after
everything still queued, so whoever reads the file after a sync call finds it there. Either way
the file holds the lines in the order they were recorded: every line leaves the queue and reaches
the file under one lock. :meth:`AuditLog.close`, :meth:`AuditLog.flush` and interpreter exit write
what is still queued.

Each write goes to the kernel at once, one ``write`` of whole lines on the ``O_APPEND``
descriptor, with no buffer of ours in between: a process forked while another thread had handed
lines to a buffered file and not flushed it yet held those bytes in its copy of the buffer, and
wrote them a second time at its own next line, its close or its exit.

A full disk can cut a write short: part of a line is in the file, and the rest fails. The lines
that write did not finish are kept (up to ``KEEP_UNWRITTEN`` bytes) and written first by the next
write, which also ends the half line with a newline before them: without it the next line went on
after the half line, and a JSON reader lost both. A file found ending inside a line when it is
opened (an earlier process killed inside a write, or whose disk filled) is ended the same way.
"""

from __future__ import annotations

import atexit
import errno
import json
import logging
import os
import re
import stat
import threading
import weakref
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from hermes_core.event_loop import on_event_loop
from hermes_core.forked import renew_in_child

if TYPE_CHECKING:
    from hermes_core.errors import Attempt

log = logging.getLogger(__name__)

_open_logs: weakref.WeakSet[AuditLog] = weakref.WeakSet()
#: How long the writer lets lines gather before one write (how late a line recorded on an event
#: loop may reach the file; close(), flush() and exit write at once).
BATCH_S = 0.05
# one encoder for every line: json.dumps with any option builds a new JSONEncoder per call
_JSON = json.JSONEncoder(ensure_ascii=False).encode
# Characters JSON may carry raw inside a string that a reader splitting lines as str.splitlines
# does (a log shipper, a viewer) takes for a line's end: a tool's argument would cut its record.
_SPLITTERS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SPLITS = re.compile("[\x85\u2028\u2029]")


def _encode(record: Mapping[str, Any]) -> str:
    """One record as one JSON line: only string content can hold a splitter, and its JSON
    escape is the same string to a JSON reader."""
    line = _JSON(record)
    return _SPLITS.sub(lambda m: _SPLITTERS[m.group()], line) if _SPLITS.search(line) else line
_NOT_A_FILE = "not a regular file (a pipe or socket?)"
#: The most bytes of lines a failed write keeps for the next one (a disk that stays full must
#: not grow the process without end); past it the oldest are dropped, and said so.
KEEP_UNWRITTEN = 1 << 20


def _ends_inside_a_line(path: Path) -> bool:
    """Whether the file's last byte is not a newline (the descriptor we append on is write-only);
    False when it cannot be read (a file we may only append to)."""
    try:   # non-blocking: a FIFO put in the file's place since is not waited on
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        return stat.S_ISREG(st.st_mode) and st.st_size > 0 and \
            os.pread(fd, 1, st.st_size - 1) != b"\n"
    except OSError:
        return False
    finally:
        os.close(fd)


class AuditLog:
    """Append-only JSONL of attempts and tool calls, kept open, thread-safe; see the module doc."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path).expanduser() if path else None
        self._lock = threading.Lock()        # the file, and taking lines off the queue
        self._file: BinaryIO | None = None   # kept open, unbuffered: an attempt costs one write
        self._queue: deque[Mapping[str, Any]] = deque()   # recorded on an event loop, not yet written
        self._wake = threading.Event()       # a line is queued
        self._closing = threading.Event()    # close(): stop gathering, write and end
        self._writer: threading.Thread | None = None
        self._stop = False
        self._start = threading.Lock()       # one writer thread at a time
        self._unwritten = b""   # whole lines a failed write did not put in the file, tried first next
        self._torn = False      # the file may end inside a line: the next write ends it first
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): locks and events of its own, no writer
        (the parent's thread is not in the child; the next queued line starts one), and none of
        the parent's queued lines, which the parent writes (written by both, each was twice).
        The open file is kept: appends of the two processes interleave as whole lines."""
        self._lock = threading.Lock()
        self._start = threading.Lock()
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._queue = deque()
        self._unwritten = b""   # the parent's to write (written by both, each was twice)
        self._writer = None
        self._stop = False

    def _open(self) -> BinaryIO:
        """The open file; reopened when it was moved or deleted (log rotation) since."""
        assert self.path is not None
        f = self._file
        if f is not None:
            try:
                if os.fstat(f.fileno()).st_nlink > 0 and self.path.exists():
                    return f
            except OSError:
                pass
            f.close()
            self._file = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # non-blocking: opening a FIFO with no reader would wait forever (the chat with it); one
        # is named as such rather than by the open's ENXIO ("no such device or address")
        try:
            if stat.S_ISFIFO(self.path.stat().st_mode):
                raise OSError(errno.EINVAL, _NOT_A_FILE)
        except FileNotFoundError:
            pass
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0),
                     0o666)
        try:
            mode = os.fstat(fd).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):   # a file, or /dev/null
                raise OSError(errno.EINVAL, _NOT_A_FILE)
            os.set_blocking(fd, True)
            self._torn = stat.S_ISREG(mode) and _ends_inside_a_line(self.path)
            f = self._file = os.fdopen(fd, "ab", buffering=0)
        except BaseException:
            os.close(fd)
            raise
        return f

    def write(self, request_id: str, attempt: Attempt, wall: float) -> None:
        if self.path is None:
            return
        record = {"time": round(wall, 6), "request_id": request_id, "provider": attempt.provider,
                  "model": attempt.model, "key": attempt.key_fingerprint, "status": attempt.status,
                  "latency_ms": round(attempt.latency_ms, 3), "retry_after": attempt.retry_after,
                  "decision": attempt.decision, "error": attempt.error,
                  "provider_request_id": attempt.request_id}
        if attempt.usage is not None:   # a failed attempt that was billed (see Reply.wasted)
            u = attempt.usage
            # "estimated": how many of them hermes_core counted as an estimate where the
            # provider reported none (an OpenAI stream cut before its usage chunk)
            record["billed_tokens"] = {"input": u.input_tokens, "output": u.output_tokens,
                                       "cache_read": u.cache_read_tokens,
                                       "cache_write": u.cache_write_tokens,
                                       "estimated": u.estimated_tokens}
        self.append(record)

    def append(self, record: Mapping[str, Any]) -> None:
        """One JSON line (a tool call's record too); the caller keeps secrets out of it and does not
        change ``record`` afterwards (on an event loop it is serialised later, by the writer)."""
        if self.path is None:
            return
        if on_event_loop():
            self._queue.append(record)
            # a running writer already woken (it clears the flag before it takes the queue) takes
            # this line too: only the first line after a write signals it, not every line
            writer = self._writer
            if not (self._wake.is_set() and not self._stop and writer is not None
                    and writer.is_alive()):
                self._ensure_writer()
                self._wake.set()
            return
        with self._lock:
            self._write_locked([*self._take_locked(), record])

    def flush(self) -> None:
        """Write every line recorded so far (the writer thread may still hold some)."""
        if self.path is None:
            return
        with self._lock:
            self._write_locked(self._take_locked())

    def close(self) -> None:
        """Write what is queued, stop the writer thread and close the file (a later line reopens
        it)."""
        writer = self._writer
        if writer is not None:
            self._stop = True
            self._closing.set()
            self._wake.set()
            if writer is not threading.current_thread():
                writer.join(timeout=10)
        with self._lock:
            if self.path is not None:
                self._write_locked(self._take_locked())
            if self._file is not None:
                self._file.close()
                self._file = None

    # -------------------------------------------------------------- internals

    def _take_locked(self) -> list[Mapping[str, Any]]:
        out = []
        while self._queue:
            out.append(self._queue.popleft())
        return out

    def _write_locked(self, records: list[Mapping[str, Any]]) -> None:
        if not records and not self._unwritten:
            return
        lines = self._unwritten + "".join(_encode(r) + "\n" for r in records).encode("utf-8")
        payload = lines
        sent = 0
        try:
            f = self._open()
            if self._torn:   # the file ends inside a line: end it, or the first line joins it
                payload = b"\n" + lines
            data = memoryview(payload)
            while sent < len(payload):   # a file takes it whole; after a short write the rest follows
                written = f.write(data[sent:])
                if not written:   # nothing taken: said like a failed write
                    raise OSError(errno.EIO, "no byte written")
                sent += written
        except OSError as e:
            log.warning("cannot write audit log %s: %s", self.path, e.strerror or e)
            self._keep_unwritten(payload, lines, sent)
            return
        self._unwritten = b""
        self._torn = False

    def _keep_unwritten(self, payload: bytes, lines: bytes, sent: int) -> None:
        """After a failed write of ``payload`` (``lines``, behind a newline when the file was
        torn) of which ``sent`` bytes reached the file: keep the lines it did not finish."""
        if sent:
            start = payload.rfind(b"\n", 0, sent) + 1   # the first line not whole in the file
            self._torn = sent > start
            lines = payload[start:]
        if len(lines) > KEEP_UNWRITTEN:
            cut = lines.index(b"\n", len(lines) - KEEP_UNWRITTEN) + 1
            log.warning("audit log %s: %d unwritten line(s) dropped, %d kept for the next write",
                        self.path, lines.count(b"\n", 0, cut), lines.count(b"\n", cut))
            lines = lines[cut:]
        self._unwritten = lines

    def _ensure_writer(self) -> None:
        if self._writer is not None and self._writer.is_alive() and not self._stop:
            return
        with self._start:
            if self._writer is not None and self._writer.is_alive() and not self._stop:
                return
            if self._writer is not None:
                self._writer.join(timeout=10)   # a close() is stopping it: let it finish first
            self._stop = False
            self._closing.clear()
            self._writer = threading.Thread(target=self._run, name="hermes-audit-writer", daemon=True)
            _open_logs.add(self)
            self._writer.start()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            self._closing.wait(BATCH_S)    # lines recorded meanwhile set _wake without a waiter
            with self._lock:
                self._write_locked(self._take_locked())
            if self._stop:
                return


@atexit.register
def _flush_at_exit() -> None:
    """The writer is a daemon thread: what it still holds at exit is written here."""
    for audit in list(_open_logs):
        audit.flush()
