"""The stdout wrapper that keeps what a tool call prints for that call."""

from __future__ import annotations

import contextvars
import io
import sys
from typing import Any

import pytest

from hermes_core.agent.tools.printed import (
    Printed,
    RoutedStdin,
    RoutedStdout,
    captured,
    handed_back,
)


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, as the user's stdout in ``hermes-core chat`` does."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("value", [b"raw", bytearray(b"raw"), 3, None])
def test_a_capture_refuses_what_a_text_stream_refuses(monkeypatch: pytest.MonkeyPatch,
                                                      value: object) -> None:
    """``sys.stdout.write(b"...")`` raises TypeError on a text stream; the capture took it, so a
    tool that catches it ran on, and the call then failed making the text ("sequence item 0:
    expected str instance, bytes found"). click probes ``stdout.write(b"")`` to tell a binary
    stream from a text one: every ``click.echo`` in a tool failed that way."""
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    with captured() as printed:
        with pytest.raises(TypeError, match="must be str"):
            sys.stdout.write(value)  # type: ignore[arg-type]
        print("after")
    assert (printed.text, printed.total) == ("after\n", 6)


def test_a_capture_is_no_terminal_while_the_stream_it_wraps_is(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a call prints is read by a model, not a terminal: ``isatty()`` forwarded the user's
    True, and click and rich wrote colour escapes into the tool's answer. Outside a call the
    wrapped stream answers."""
    monkeypatch.setattr(sys, "stdout", _Terminal())
    with captured():
        inside = sys.stdout.isatty()
    assert isinstance(sys.stdout, RoutedStdout)
    assert (inside, sys.stdout.isatty()) == (False, True)


def test_a_print_after_its_call_ended_reaches_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task or thread a tool starts in its context (``create_task``, ``asyncio.to_thread``)
    may print after the call has ended: the text went into the ended call's buffer, which nobody
    reads, and was lost (neither the model nor stdout nor the log had it)."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    with captured() as printed:
        print("during")
        later = contextvars.copy_context()
    later.run(print, "after")
    assert (printed.text, stream.getvalue()) == ("during\n", "after\n")


class _Person(io.StringIO):
    """The person at stdin: answers each line read, and notes what their screen (``screen``)
    showed at that moment, the question they were answering."""

    def __init__(self, answers: str, screen: io.StringIO) -> None:
        super().__init__(answers)
        self.screen = screen
        self.saw: list[str] = []

    def readline(self, size: int | None = -1) -> str:
        self.saw.append(self.screen.getvalue())
        return super().readline(size)


@pytest.mark.parametrize("ask", [
    lambda: (print("Which city?"), input())[1],
    lambda: input("Which city?\n"),
    lambda: (print("Which city?", flush=True), sys.stdin.readline())[1],
    lambda: (print("Which city?"), next(iter(sys.stdin)))[1],
], ids=["print-then-input", "input-prompt", "readline", "iterate"])
def test_what_a_call_printed_is_shown_to_the_person_before_it_reads_their_answer(
        monkeypatch: pytest.MonkeyPatch, ask: Any) -> None:
    """A tool that asks the person (a confirmation, LangChain's human-input tool: print the
    question, then ``input()``): the question went into the call's buffer and the person saw
    nothing while the turn waited on them. What the call printed since its last read is now
    shown before each read, and is still the call's (its answer or its log line)."""
    screen = io.StringIO()
    person = _Person("Bergen\nyes\n", screen)
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr(sys, "stdin", person)
    with captured() as printed:
        said = ask()
        print("thinking")
    assert (said.strip(), person.saw) == ("Bergen", ["Which city?\n"])
    assert (screen.getvalue(), printed.text) == ("Which city?\n", "Which city?\nthinking\n")


def test_a_read_outside_a_call_or_with_nothing_printed_shows_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a call's own unshown prints are shown: the REPL's ``input("you> ")`` and a call that
    printed nothing since its last read write nothing more."""
    screen = io.StringIO()
    person = _Person("one\ntwo\nthree\n", screen)
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr(sys, "stdin", person)
    with captured() as printed:
        print("first?")
        sys.stdin.readline()
        sys.stdin.readline()
    print("outside")
    sys.stdin.readline()
    assert person.saw == ["first?\n", "first?\n", "first?\noutside\n"]
    assert printed.text == "first?\n"


def test_a_call_s_stdin_has_its_descriptor_and_input_reads_through_the_wrapper(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In a call ``sys.stdin.fileno()`` is a descriptor of the stream's file (it was refused,
    so ``os.isatty`` and ``subprocess.run(stdin=sys.stdin)`` failed in a tool), and ``input()``
    still writes its prompt to the call's ``sys.stdout`` and reads ``sys.stdin.readline()``,
    which a call past its timeout gives up on: the call's stdin descriptor is another number
    for the same file (see ``test_input_in_a_call_on_a_terminal_is_given_up_past_its_timeout``).
    Outside a call it is the stream's own number."""
    import os

    r, w = os.pipe()
    with os.fdopen(r, encoding="utf-8") as source, os.fdopen(w, "w") as person:
        monkeypatch.setattr(sys, "stdin", source)
        person.write("Bergen\n")
        person.flush()
        with captured() as printed:
            inside = sys.stdin.fileno()
            said = input("Which city? ")
        assert (inside != r, os.path.sameopenfile(inside, r)) == (True, True)
        assert (said, printed.text, sys.stdin.fileno()) == ("Bergen", "Which city? ", r)


def test_a_subprocess_in_a_call_reads_the_stdin_it_is_given(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``subprocess.run(..., stdin=sys.stdin)`` in a tool failed (``fileno()`` refused in a
    call). The child reads the descriptor itself: what it reads is its business, bounded by the
    tool's own handling of the process (``timeout=``), not by the call's reader."""
    import os
    import subprocess

    r, w = os.pipe()
    with os.fdopen(r, encoding="utf-8") as source, os.fdopen(w, "w") as person:
        monkeypatch.setattr(sys, "stdin", source)
        person.write("Bergen\n")
        person.flush()
        with captured():
            done = subprocess.run([sys.executable, "-c", "print(input().upper())"],
                                  stdin=sys.stdin, capture_output=True, text=True, timeout=60,
                                  check=True)
        assert done.stdout == "BERGEN\n"


def test_a_call_s_stdin_descriptor_is_one_duplicate_read_as_the_stream_s_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In a call ``sys.stdin.fileno()`` is a duplicate of the stream's descriptor: not C's
    stdin, so ``input()`` never takes readline, yet a read of it (``os.read``, a subprocess
    given it) reads what the stream's does. One duplicate, kept; ``sys.stdout.fileno()`` is
    the stream's own in a call too."""
    import os

    r, w = os.pipe()
    with os.fdopen(r, encoding="utf-8") as source, os.fdopen(w, "w") as person:
        monkeypatch.setattr(sys, "stdin", source)
        monkeypatch.setattr(sys, "stdout", io.StringIO())
        person.write("typed\n")
        person.flush()
        with captured():
            twin = sys.stdin.fileno()
            again = sys.stdin.fileno()
            read = os.read(twin, 100)
            out = sys.stdout.fileno
        assert (twin != r, again == twin, read, sys.stdin.fileno() == r) == (
            True, True, b"typed\n", True)
        with pytest.raises(io.UnsupportedOperation):   # the StringIO's own answer
            out()



def test_a_descriptor_the_tool_closed_and_the_process_reused_stays_open_when_the_wrapper_goes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A tool may close the descriptor it was handed (``with os.fdopen(sys.stdin.fileno())``
    closes it on leaving); the number is then the next file's the process opens (a database, a
    log). The wrapper's closer, made with the duplicate, closed that number again when the
    wrapper went (``sys.stdin`` replaced, the process's exit): the other file's descriptor,
    closed under it. It closes the duplicate only while it is still that file."""
    import gc
    import os

    theirs_path = tmp_path / "theirs"
    theirs_path.write_bytes(b"theirs")
    (tmp_path / "in").write_text("typed\n")
    with (tmp_path / "in").open() as stream:
        monkeypatch.setattr(sys, "stdin", stream)
        monkeypatch.setattr(sys, "stdout", io.StringIO())
        sys.stdin = RoutedStdin(stream)   # type: ignore[assignment]
        with captured(), os.fdopen(sys.stdin.fileno()) as handed:
            twin = handed.fileno()
        theirs = os.open(theirs_path, os.O_RDONLY)
        try:
            sys.stdin = stream   # the wrapper goes
            gc.collect()
            assert (theirs, os.read(theirs, 6)) == (twin, b"theirs")
        finally:
            os.close(theirs)



_REDIRECTING = """
import os, subprocess, sys, tempfile
from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.runner import ToolRunner
from hermes_core.types import ToolCall

def quiet() -> str:
    \"\"\"Run a noisy program, what it writes to stdout kept.\"\"\"
    fd = sys.stdout.fileno()
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as kept:
        os.dup2(kept.fileno(), fd)
        try:
            subprocess.run([sys.executable, "-c", "print('from the program')"], check=True)
        finally:
            os.dup2(saved, fd)
            os.close(saved)
        kept.seek(0)
        return kept.read().decode()

(r,) = ToolRunner(ToolRegistry([quiet])).run([ToolCall("c", "quiet")])
print("RESULT", repr(r.output), flush=True)
"""


def test_a_tool_redirecting_stdout_s_descriptor_redirects_what_the_process_writes_there(
        ) -> None:
    """Redirecting stdout below Python (``os.dup2(f, sys.stdout.fileno())``, the idiom to keep
    or silence what a C library or a child process writes to descriptor 1) did nothing in a
    call: ``sys.stdout.fileno()`` was a duplicate there (kept off readline, see
    ``test_input_in_a_call_on_a_terminal_is_given_up_past_its_timeout``), so descriptor 1
    stayed the terminal and the program's output reached the process's stdout (the chat's
    reply) instead of the tool. A call's stdout descriptor is the stream's own again."""
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", _REDIRECTING], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, timeout=60,
                          check=True)
    assert done.stdout == "RESULT 'from the program\\n'\n"


_ON_A_TERMINAL = """
import os, sys, threading
from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.runner import ToolRunner
from hermes_core.types import ToolCall

ended = threading.Event()

def ask() -> str:
    \"\"\"Ask the person.\"\"\"
    print(f"tty={os.isatty(sys.stdin.fileno())}")
    try:
        return input("Which city? ")
    except EOFError:
        ended.set()
        raise

(r,) = ToolRunner(ToolRegistry([ask]), timeout_s=0.3).run([ToolCall("c", "ask")])
print("RESULT", r.status, repr(r.output), ended.wait(10), flush=True)
print("CHAT", repr(sys.stdin.readline()), flush=True)
"""


def _read_until(fd: int, marker: bytes, seen: bytearray) -> bytes:
    """What the terminal showed up to and with the line holding ``marker`` (a guard of 60 s
    against a child that hangs: it fails the test, it times nothing)."""
    import os
    import select

    for _ in range(600):
        at = seen.find(marker)
        if at >= 0 and b"\n" in seen[at:]:
            end = seen.index(b"\n", at) + 1
            shown = bytes(seen[:end])
            del seen[:end]
            return shown
        if select.select([fd], [], [], 0.1)[0]:
            try:
                seen.extend(os.read(fd, 4096))
            except OSError:   # the child is gone
                break
    raise AssertionError(f"the terminal never showed {marker!r}: {bytes(seen)!r}")


def test_input_in_a_call_on_a_terminal_is_given_up_past_its_timeout() -> None:
    """On a terminal (stdin and stdout both the pty) ``input()`` reads through readline below
    ``sys.stdin`` when both descriptors are C's own, and nothing gives that read up. With
    ``fileno()`` given in a call the tool sees its terminal (``tty=True``), its ``input()``
    still reads through the wrapper: past the timeout it ends (EOFError) and the line typed
    next is the next reader's."""
    import os
    import pty
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(root)}
    child = subprocess.Popen([sys.executable, "-c", _ON_A_TERMINAL], stdin=slave, stdout=slave,
                             stderr=slave, env=env, cwd=root)
    os.close(slave)
    seen = bytearray()
    try:
        result = _read_until(master, b"RESULT", seen)
        os.write(master, b"for the chat\n")
        chat = _read_until(master, b"CHAT", seen)
    finally:
        child.kill()
        child.wait()
        os.close(master)
    assert b"RESULT timeout 'error: ask timed out after 0.3s; it printed:\\ntty=True\\nWhich " \
           b"city? ' True" in result
    assert b"CHAT 'for the chat\\n'" in chat


@pytest.mark.parametrize(("printed", "plain"), [
    ("\x1b[1;31m3 files\x1b[0m changed", "3 files changed"),
    ("\x1b]8;id=1;https://example.com\x1b\\docs\x1b]8;;\x1b\\ 文档", "docs 文档"),
    ("\x1b]52;c;aGVsbG8=\x07copied", "copied"),
    ("\x1b[2K\x1b[1Gdone 100%", "done 100%"),
    ("no escape at all, tab\tand CR\r", "no escape at all, tab\tand CR\r"),
])
def test_what_a_call_printed_reads_plain_without_terminal_escapes(
        monkeypatch: pytest.MonkeyPatch, printed: str, plain: str) -> None:
    """Colours, hyperlinks (OSC 8, rich's links), a clipboard write (OSC 52) and cursor moves are
    a terminal's business; the model and the log read the text, which stays whole."""
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    with captured() as call:
        print(printed, end="")
    assert (call.plain, call.text) == (plain, printed)


def test_a_child_forked_while_a_thread_was_routing_stdout_routes_it(
        in_forked_child: Any, held_by_a_thread: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.agent.tools import printed

    monkeypatch.setattr(sys, "stdout", io.StringIO())   # not routed yet

    def child() -> object:
        printed.route_stdout()
        return isinstance(sys.stdout, RoutedStdout)

    with held_by_a_thread(printed._INSTALL):
        assert in_forked_child(child) is True



def test_outside_a_call_stdin_keeps_its_descriptor_while_a_given_up_read_waits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A call let go of while its read waited (no line typed yet) left that read running; the
    descriptor was refused outside calls too, for the rest of the process, so an application's
    own ``os.isatty(sys.stdin.fileno())``, ``select`` or ``subprocess(stdin=sys.stdin)`` failed.
    Outside a call it is the stream's; the line typed next still goes to the next reader."""
    import os
    import threading

    r, w = os.pipe()
    with os.fdopen(r, encoding="utf-8") as source, os.fdopen(w, "w") as person:
        monkeypatch.setattr(sys, "stdin", source)
        call = Printed()
        got: list[str] = []

        def asking() -> None:
            with captured(call):
                got.append(sys.stdin.readline())

        asker = threading.Thread(target=asking)
        asker.start()
        while handed_back() is None:   # the call's read has begun
            threading.Event().wait(0.01)
        call.let_go()
        asker.join()
        assert got == [""] and handed_back() is not None   # the read waits on
        assert sys.stdin.fileno() == r and not os.isatty(sys.stdin.fileno())
        person.write("for the chat\n")
        person.flush()
        assert sys.stdin.readline() == "for the chat\n" and handed_back() is None
