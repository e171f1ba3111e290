"""Reads of stdin a tool call can give up on, their text kept for whoever reads next.

A tool asking the person (print a question, then ``input()``) has ``llm.tool_timeout_s`` to get
its answer. Past it the call is answered "timed out" and the turn ends, but Python cannot stop
the call's thread, which went on waiting on the terminal: the next line the person typed, meant
for the chat's ``you> `` prompt, went to the abandoned call (on a terminal the prompt did not even
show: readline serves one reader at a time, and the call's ``input()`` held it).

So a read made in a call is not made in the call's thread. :class:`StdinReads` runs it in a
thread of its own, one read at a time, and the call waits for its text; a call let go of stops
waiting and is told the input ended (``input()`` raises ``EOFError``, so its thread ends too).
The read it started runs on, and its text, when the person types it, is kept for the next
reader: the chat's prompt, which asks :meth:`StdinReads.busy` before it reads. Nothing is ever
read ahead of a reader asking.

A forked child (a worker forked from a process that had run such a call) has none of the parent's
threads: the reading thread, kept after the first read, and a read it had under way are the
parent's, so the child starts afresh (:meth:`StdinReads.renew_after_fork`), keeping only texts
already read, as it keeps the stream's own buffer.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import TextIO

from hermes_core.forked import renew_in_child


class StdinReads:
    """The reads of one stream (``source``): at most one under way, each read's text handed to
    the first reader still waiting, or kept for the next one. Thread-safe."""

    def __init__(self, source: TextIO) -> None:
        self.source = source
        self._cond = threading.Condition()
        self._reading = False
        self._wanted: Callable[[TextIO], str] | None = None   # the read the thread is to make
        self._thread: threading.Thread | None = None   # started at the first read, then kept
        self._kept: deque[str] = deque()   # texts read for a reader that gave up first
        self._failed: BaseException | None = None   # a read that raised, for the next reader
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): a condition of its own, no reading
        thread (the parent's is not in the child, and a read asked of it waited for ever), and
        none of the parent's reads, under way or kept: what the person typed was the parent's."""
        self._cond = threading.Condition()
        self._reading, self._wanted, self._thread = False, None, None
        self._kept, self._failed = deque(), None

    def busy(self) -> bool:
        """Whether a read is under way or its text waits for a reader: reading ``source``
        directly now would race that read, or pass over a line the person already typed."""
        with self._cond:
            return self._reading or bool(self._kept) or self._failed is not None

    def read(self, how: Callable[[TextIO], str],
             given_up: Callable[[], bool] = lambda: False) -> str:
        """A text kept from a read nobody waited for any more, else ``how(source)`` run in the
        reading thread (asked for unless a read is under way: then its text is this reader's).
        Once ``given_up()`` (checked at each :meth:`wake`), "" as at the end of the input, and
        the read runs on for the next reader. Interruptible (Ctrl-C at a prompt)."""
        with self._cond:
            while True:
                if given_up():
                    return ""
                if self._kept:
                    return self._kept.popleft()
                if self._failed is not None:
                    failed, self._failed = self._failed, None
                    raise failed
                if not self._reading:
                    self._reading, self._wanted = True, how
                    if self._thread is None:   # one thread, kept: a tool reading a piped
                        # file line by line paid a thread's start for every line
                        self._thread = threading.Thread(target=self._serve, daemon=True,
                                                        name="hermes-stdin")
                        self._thread.start()
                    self._cond.notify_all()
                self._cond.wait()

    def _serve(self) -> None:
        """The reading thread: each read asked for, one at a time, for as long as the process
        runs (a daemon: a read still waiting on the terminal does not hold the exit)."""
        while True:
            with self._cond:
                while self._wanted is None:
                    self._cond.wait()
                how, self._wanted = self._wanted, None
            text, failed = "", None
            try:
                text = how(self.source)
            except BaseException as e:   # the reader waiting (or the next one) gets it
                failed = e
            with self._cond:
                self._reading = False
                if failed is None:
                    self._kept.append(text)
                else:
                    self._failed = failed
                self._cond.notify_all()

    def wake(self) -> None:
        """Have every waiting reader look again whether it gave up (a call let go of)."""
        with self._cond:
            self._cond.notify_all()
