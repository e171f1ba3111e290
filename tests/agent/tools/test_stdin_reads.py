"""``agent/tools/stdin_reads.py``: reads of stdin a tool call can give up on, their text kept for
whoever reads next."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

import pytest

from hermes_core.agent.tools.stdin_reads import StdinReads


@pytest.fixture
def pipe() -> Iterator[tuple[TextIO, TextIO]]:
    """A pipe's reading end (the stdin) and writing end (the person typing); both closed after
    the test, so a read still waiting ends."""
    r, w = os.pipe()
    reading, writing = os.fdopen(r, encoding="utf-8"), os.fdopen(w, "w", encoding="utf-8")
    yield reading, writing
    writing.close()
    reading.close()


def _counted(made: list[int]) -> Callable[[TextIO], str]:
    def readline(source: TextIO) -> str:
        made.append(1)
        return source.readline()
    return readline


def _given_up(reads: StdinReads, how: Callable[[TextIO], str]) -> str:
    """What a reader (a tool call, in a thread) that gave up once its read had begun got: its
    read goes on."""
    gave_up = threading.Event()
    got: list[str] = []
    asker = threading.Thread(target=lambda: got.append(reads.read(how, gave_up.is_set)))
    asker.start()
    while not reads.busy():   # its read has begun
        threading.Event().wait(0.01)
    gave_up.set()
    reads.wake()
    asker.join()
    return got[0]


def test_a_read_given_up_on_leaves_its_line_to_the_next_reader(
        pipe: tuple[TextIO, TextIO]) -> None:
    """The first reader (a tool call) gives up before the person types: it is told the input
    ended, and the line typed afterwards is the next reader's, read once."""
    source, person = pipe
    reads = StdinReads(source)
    assert not reads.busy()   # nothing is read before someone asks
    made: list[int] = []
    assert _given_up(reads, _counted(made)) == "" and reads.busy()
    person.write("for the chat\n")
    person.flush()
    assert reads.read(_counted(made)) == "for the chat\n"
    assert made == [1] and not reads.busy()


def test_a_reader_that_gave_up_before_reading_reads_nothing(pipe: tuple[TextIO, TextIO]) -> None:
    source, _ = pipe
    reads = StdinReads(source)
    assert reads.read(lambda s: s.readline(), lambda: True) == ""
    assert not reads.busy()


def test_a_read_that_fails_raises_in_the_reader_waiting(pipe: tuple[TextIO, TextIO]) -> None:
    source, _ = pipe
    reads = StdinReads(source)

    def broken(s: TextIO) -> str:
        raise OSError("stdin went away")

    with pytest.raises(OSError, match="stdin went away"):
        reads.read(broken)
    assert not reads.busy()


def test_a_child_forked_after_a_read_reads_in_a_thread_of_its_own(
        pipe: tuple[TextIO, TextIO],
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """The reading thread, started at the parent's first read and kept, is not in a forked
    child (``fork`` copies only the forking thread), yet the child was handed it: its first
    read was asked of nobody and waited for ever (a tool call's ``input()`` in a worker forked
    from a process that had run one was answered "timed out", the line it was sent unread)."""
    source, person = pipe
    reads = StdinReads(source)
    person.write("for the parent\n")
    person.flush()
    assert reads.read(lambda s: s.readline()) == "for the parent\n"

    def child() -> object:
        person.write("for the child\n")
        person.flush()
        return reads.read(lambda s: s.readline()), reads.busy()

    assert in_forked_child(child) == ("for the child\n", False)


def test_a_child_forked_while_a_read_was_under_way_is_not_busy_with_it(
        pipe: tuple[TextIO, TextIO],
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], contextlib.AbstractContextManager[None]]) -> None:
    """A read the parent's thread had under way at the fork (a call let go of, its line still
    to come) is the parent's: the child was left "busy" with it for ever, so its chat prompt and
    ``sys.stdin.fileno()`` waited on a read no thread of the child makes. And the condition held
    by a parent's thread at the fork (a read ending) was held in the child for ever."""
    source, person = pipe
    reads = StdinReads(source)
    _given_up(reads, lambda s: s.readline())

    def child() -> object:
        busy = reads.busy()
        return busy, reads.read(lambda s: "typed in the child\n")

    with held_by_a_thread(reads._cond):
        assert in_forked_child(child) == (False, "typed in the child\n")
    person.write("for the parent\n")
    person.flush()
    assert reads.read(lambda s: s.readline()) == "for the parent\n"
