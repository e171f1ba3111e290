"""``agent/tools/stdin_reads.py``: reads of stdin a tool call can give up on, their text kept for
whoever reads next."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import TextIO

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


def test_a_read_given_up_on_leaves_its_line_to_the_next_reader(
        pipe: tuple[TextIO, TextIO]) -> None:
    """The first reader (a tool call) gives up before the person types: it is told the input
    ended, and the line typed afterwards is the next reader's, read once."""
    source, person = pipe
    reads = StdinReads(source)
    assert not reads.busy()   # nothing is read before someone asks
    made: list[int] = []
    gave_up = threading.Event()
    first: list[str] = []
    asker = threading.Thread(target=lambda: first.append(
        reads.read(_counted(made), gave_up.is_set)))
    asker.start()
    while not reads.busy():   # its read has begun
        threading.Event().wait(0.01)
    gave_up.set()
    reads.wake()
    asker.join()
    assert first == [""] and reads.busy()
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


def test_a_forked_child_reads_with_a_thread_of_its_own(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """The reading thread, started at the parent's first read and kept, is not in a forked child:
    the child's first read waited for ever for a text nobody would read."""
    import io

    reads = StdinReads(io.StringIO("first\nsecond\n"))
    assert reads.read(lambda s: s.readline()) == "first\n"
    assert in_forked_child(lambda: reads.read(lambda s: s.readline())) == "second\n"
