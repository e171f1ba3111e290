"""What a tool prints, kept for its own call instead of written to the process's stdout.

``sys.stdout`` is one object for every thread, so a tool's ``print`` landed wherever the
process's output goes: in ``hermes-core chat``, into the middle of the streamed reply, read as
the model's words. ``contextlib.redirect_stdout`` is no way out: it swaps that one object for the
whole process while it is in force, taking the prints of every other thread (the REPL's, another
call's) and handing them back in a jumble.

So ``sys.stdout`` is wrapped once by :class:`RoutedStdout`, which looks up a context variable on
each write: set (by :func:`captured`, around one call), the text goes to that call's
:class:`Printed`; unset, to the stream it wraps, unchanged. A context variable, not a
thread-local: a sync tool runs in a thread of its own, in a copy of the caller's context, and an
async tool in a task, which has its own context too, so concurrent calls on one event loop are
told apart as well as calls in threads. A thread a tool starts itself begins with an empty context
(Python's ``threading``), so its prints go to stdout as before, as do the prints of a task the
tool started once the call is over (nobody reads its buffer then); so does anything written below
``sys.stdout`` (``sys.stdout.buffer``, ``os.write(1, ...)``, a subprocess's output).

A call that reads ``sys.stdin`` is asking the person (a confirmation, a human-input tool: print
the question, then ``input()``): kept, the question never reached them and the turn waited on an
answer to nothing. So ``sys.stdin`` is wrapped too (:class:`RoutedStdin`), and a call's read
first shows the person what the call printed since its last read. A call's read is made through
:mod:`~hermes_core.agent.tools.stdin_reads`, so a call past its timeout stops waiting and the
line typed next is the chat's; ``input()`` on a terminal would read below ``sys.stdin``
(readline) where nothing can give up on it, so in a call ``sys.stdin`` answers ``fileno()``
with a duplicate of its descriptor (:class:`Twin`), which ``input()`` does not take for C's
stdin, while ``sys.stdout.fileno()`` stays the stream's own (a tool redirecting it with
``os.dup2`` redirects descriptor 1).

Whoever replaces ``sys.stdout`` later (a test's capture, the CLI) simply wins: the next call wraps
the new stream.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from hermes_core.agent.tools.stdin_reads import StdinReads
from hermes_core.forked import child_lock

# what a terminal interprets rather than shows (ECMA-48): a control sequence (ESC [ ... final
# byte), an operating-system command (ESC ] ... BEL or ESC \\), or ESC and one character
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")

#: The most of one call's printed text kept (more is counted, not kept): a tool printing in a loop
#: must not grow without bound. Past the most a model is shown, with room for the scrub's margin.
KEEP_CHARS = 200_000


class Printed:
    """The text one call printed: its first :data:`KEEP_CHARS` characters and how many it
    printed in all. Written from the call's own thread or task only. ``ended``: the call is
    over; what a task or thread it started prints later goes to the stream, not to a buffer
    nobody reads any more."""

    __slots__ = ("_kept", "_parts", "_shown", "ended", "gone", "total")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._kept = 0
        self._shown = 0   # how many of ``_parts`` the person was shown (:meth:`unshown`)
        self.total = 0
        self.ended = False
        self.gone = False   # the runner stopped waiting for the call (see :meth:`let_go`)

    def let_go(self) -> None:
        """The runner no longer waits for this call (past its timeout, or its turn cancelled):
        a read of stdin it is waiting on ends as at the end of the input, and the line the
        person types next is the next reader's (:class:`RoutedStdin`)."""
        self.gone = True
        stdin = sys.stdin
        if isinstance(stdin, RoutedStdin):
            stdin.reads.wake()

    def write(self, text: str) -> int:
        if not isinstance(text, str):   # as a text stream refuses it (click probes with b"")
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.total += len(text)
        room = KEEP_CHARS - self._kept
        if room > 0:
            piece = text[:room]
            self._parts.append(piece)
            self._kept += len(piece)
        return len(text)

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def plain(self) -> str:
        """:attr:`text` without terminal escapes, as a model or a log reads it: ``isatty()`` is
        False in a call, but a console made before it (rich's ``Console()`` at import time, on
        the user's terminal) settled its colours then and wrote ``\\x1b[1;31m`` all the same."""
        text = self.text
        return _ESCAPE.sub("", text) if "\x1b" in text else text

    def unshown(self) -> str:
        """What was kept since the last call of this, now counted as shown."""
        end = len(self._parts)
        text = "".join(self._parts[self._shown:end])
        self._shown = end
        return text


_CALL: contextvars.ContextVar[Printed | None] = contextvars.ContextVar("hermes_printed",
                                                                      default=None)


def _call() -> Printed | None:
    """The capture of the call running in this context, if it is still running."""
    call = _CALL.get()
    return None if call is None or call.ended else call


def in_call() -> bool:
    """Whether this code runs in a tool call (one still running): its prints are the call's."""
    return _call() is not None


class RoutedStdout:
    """``sys.stdout`` as a tool call sees it: writes go to the call's :class:`Printed` while one
    is set in the writer's context, else to ``target``; every other attribute (``encoding``,
    ``buffer``, ``fileno``) is the target's. ``isatty`` is False in a call: what it prints is
    read by a model, and click or rich asked the user's terminal and wrote colour escapes."""

    def __init__(self, target: TextIO | None) -> None:
        self.target = target

    def write(self, text: str) -> int:
        call = _call()
        if call is not None:
            return call.write(text)
        if self.target is None:   # no stdout at all (pythonw): print() writes nowhere
            return len(text)
        return self.target.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if _call() is None and self.target is not None:
            self.target.flush()

    def isatty(self) -> bool:
        return _call() is None and self.target is not None and self.target.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


class Twin:
    """A duplicate of a descriptor (the same open file, another number), made once and kept;
    made again if a tool closed it or the descriptor now is another file (checked by
    :func:`_file_of`), and closed when this goes (with the wrapper holding it). Thread-safe."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self._lock = child_lock(threading.Lock())   # free in a forked child
        self._closer: weakref.finalize[Any, Any] | None = None

    def of(self, fd: int) -> int:
        """The duplicate of ``fd``."""
        with self._lock:
            if self._fd is None or _file_of(self._fd) != _file_of(fd):
                if self._closer is not None:   # the descriptor moved, or a tool closed it
                    self._closer()
                self._fd = os.dup(fd)
                self._closer = weakref.finalize(self, _close_if_still, self._fd,
                                                _file_of(self._fd))
            return self._fd


def _file_of(fd: int | None) -> tuple[int, ...] | None:
    """Which file descriptor ``fd`` is open on (None: not open)."""
    try:
        st = os.fstat(fd) if fd is not None else None
    except OSError:
        return None
    return None if st is None else (st.st_dev, st.st_ino, st.st_rdev)


def _close_if_still(fd: int, file: tuple[int, ...] | None) -> None:
    """Close the duplicate ``fd`` if it is still open on ``file``: a tool may have closed it
    (``with os.fdopen(sys.stdout.fileno(), "w")`` does), and the number be another file's by
    now (a database, a log), which closing it again would close under its owner. A number
    reused for the very same file (another duplicate of it, another open of ``/dev/null``)
    cannot be told apart."""
    if _file_of(fd) == file:
        with contextlib.suppress(OSError):
            os.close(fd)


def _show_unshown() -> None:
    """Before a call reads stdin: what it printed since its last read, written to the stream
    the person reads (the one ``sys.stdout`` wraps) and flushed."""
    call = _call()
    text = call.unshown() if call is not None else ""
    if not text:
        return
    out = sys.stdout
    stream = out.target if isinstance(out, RoutedStdout) else out
    if stream is not None:
        stream.write(text)
        stream.flush()


class RoutedStdin:
    """``sys.stdin`` as a tool call sees it: each read (and ``fileno()``) first shows the person
    what the call printed since its last read (:func:`_show_unshown`), and is made through
    :attr:`reads`, so a call let go of (:meth:`Printed.let_go`) stops waiting and the line the
    person types then is the next reader's. Outside a call, a read goes through :attr:`reads`
    while one is under way or its text is kept, else straight to ``source``; everything else is
    ``source``'s.

    ``fileno()`` is a descriptor of the stream's file, in a call or not, a given-up read
    waiting or not: a tool's ``os.isatty(sys.stdin.fileno())``, ``termios`` or
    ``subprocess.run(..., stdin=sys.stdin)``, like the application's own, is not ours to
    break. Only reads through this object are the call's and given up with it: a subprocess
    handed the descriptor reads it itself, its read bounded by the tool's own handling of the
    process (``subprocess.run(timeout=...)``), and so are ``os.read`` on it and
    ``sys.stdin.buffer``. ``input()`` still reads through this object in a call, also on a
    terminal. CPython's ``input()`` reads through readline below ``sys.stdin`` (where nothing
    can give the read up, and which serves one thread at a time) only when stdin's and
    stdout's descriptors are C's own 0 and 1 and both terminals; in a call ``fileno()`` is a
    duplicate (:class:`Twin`: the same open file, another number), so ``input()`` writes its
    prompt to ``sys.stdout`` and reads ``sys.stdin.readline()``. The duplicate is stdin's, not
    stdout's: a tool redirecting stdout below Python (``os.dup2(f, sys.stdout.fileno())``, to
    keep or silence what a C library or a child writes to descriptor 1) must redirect
    descriptor 1, and redirecting stdin so is rare. The chat's prompt asks :func:`handed_back`
    before it reads."""

    def __init__(self, source: TextIO) -> None:
        self.source = source
        self.reads = StdinReads(source)
        self._twin = Twin()

    def _read(self, how: Callable[[TextIO], str]) -> str:
        call = _call()
        if call is None and not self.reads.busy():
            return how(self.source)
        _show_unshown()
        return self.reads.read(how, (lambda: call.gone) if call is not None else _never)

    def readline(self, size: int | None = -1) -> str:
        return self._read(lambda s: s.readline(-1 if size is None else size))

    def read(self, size: int | None = -1) -> str:
        return self._read(lambda s: s.read(-1 if size is None else size))

    def readlines(self, hint: int = -1) -> list[str]:
        lines: list[str] = []
        while line := self.readline():
            lines.append(line)
            if 0 < hint <= sum(map(len, lines)):
                break
        return lines

    def fileno(self) -> int:
        fd = self.source.fileno()
        if _call() is None:
            return fd
        _show_unshown()
        return self._twin.of(fd)

    def __iter__(self) -> RoutedStdin:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)


def _never() -> bool:
    return False


def handed_back() -> StdinReads | None:
    """The reads of ``sys.stdin`` when a line read for a tool call that gave up on it is kept
    or still coming: the chat's prompt takes that line rather than reading on its own."""
    stdin = sys.stdin
    if isinstance(stdin, RoutedStdin) and stdin.reads.busy():
        return stdin.reads
    return None


# free in a forked child (one a thread held at the fork hung the child's first use)
_INSTALL = child_lock(threading.Lock())


def route_stdout() -> None:
    """Wrap ``sys.stdout`` in a :class:`RoutedStdout` and ``sys.stdin`` in a
    :class:`RoutedStdin`, each unless it is one already."""
    with _INSTALL:
        if not isinstance(sys.stdout, RoutedStdout):
            sys.stdout = RoutedStdout(sys.stdout)
        if sys.stdin is not None and not isinstance(sys.stdin, RoutedStdin):   # None: pythonw
            sys.stdin = RoutedStdin(sys.stdin)


@contextlib.contextmanager
def captured(printed: Printed | None = None) -> Iterator[Printed]:
    """What the code inside prints, in this context (and tasks it starts, while it runs): kept,
    not written. ``printed``: a call's capture to go on with (new if None): its value is made
    text after it returns, and that runs the tool's code too (a ``__str__``, a lazy ``map``)."""
    route_stdout()
    printed = Printed() if printed is None else printed
    printed.ended = False
    token = _CALL.set(printed)
    try:
        yield printed
    finally:
        printed.ended = True
        _CALL.reset(token)
