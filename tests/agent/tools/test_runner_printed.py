"""Running tool calls, what their tools print and read: kept for the call that printed it, shown
to the person before a read waits, cut and scrubbed like an answer, never coloured for the model."""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_core.agent.tools.schema import tool
from hermes_core.types import ToolCall
from tests.agent.tools.conftest import SECRET


def _printing_tool(kind: str, lines: list[str], returns: Any) -> Any:
    """A tool named ``chatty`` that prints ``lines`` (yielding to others between them) and
    returns ``returns``."""
    if kind == "async":
        async def chatty() -> Any:
            """Prints as it works."""
            for line in lines:
                print(line)
                await asyncio.sleep(0.001)
            return returns
        return chatty

    def chatty() -> Any:   # type: ignore[misc]  # the sync twin
        """Prints as it works."""
        for line in lines:
            print(line)
            time.sleep(0.001)
        return returns
    return chatty


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_what_a_tool_prints_stays_out_of_the_process_stdout_and_is_logged(
        runner_factory: Any, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
        use_async: bool, kind: str) -> None:
    """A tool's ``print`` went to the process's stdout: in ``hermes-core chat``, into the middle
    of the streamed reply, where the user took it for the model's words. It is the call's own
    now: logged (naming the tool, keys scrubbed), and the answer is what the tool returned."""
    runner = runner_factory([_printing_tool(kind, ["working on it", f"key {SECRET}"], 6)],
                            secrets=lambda: [SECRET])
    with caplog.at_level("INFO", logger="hermes_core.agent.tools"):
        calls = [ToolCall("c", "chatty")]
        (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output) == ("ok", "6")
    assert "working on it" not in capsys.readouterr().out
    said = [rec.getMessage() for rec in caplog.records if "printed" in rec.getMessage()]
    assert len(said) == 1 and said[0].startswith("chatty printed ")
    assert "working on it" in said[0] and SECRET not in caplog.text


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_tool_that_prints_its_answer_and_returns_nothing_is_answered_with_what_it_printed(
        runner_factory: Any, capsys: pytest.CaptureFixture[str], use_async: bool,
        kind: str) -> None:
    """A command-line function wrapped as a tool prints its output and returns None: the model
    was answered ``null`` (and the user saw the output mid-reply). What it printed is its
    answer, cut and scrubbed like any other."""
    lines = ["Oslo: sunny", "奥斯陆：晴", f"token {SECRET}"]
    runner = runner_factory([_printing_tool(kind, lines, None)], secrets=lambda: [SECRET])
    calls = [ToolCall("c", "chatty")]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert r.status == "ok"
    assert r.output.startswith("Oslo: sunny\n奥斯陆：晴\ntoken ") and SECRET not in r.output
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_printing_more_than_the_model_is_shown_is_cut_with_a_note(
        runner_factory: Any, use_async: bool) -> None:
    from hermes_core.agent.tools.render import MAX_OUTPUT_CHARS

    def flood() -> None:
        """Prints a lot."""
        for _ in range(3000):
            print("x" * 99)

    calls = [ToolCall("c", "flood")]
    runner = runner_factory([flood])
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert r.output.startswith("x" * 99 + "\n")
    assert r.output.endswith(f"[... truncated: the first {MAX_OUTPUT_CHARS} of 300000 characters]")


@pytest.mark.parametrize("use_async", [False, True])
def test_concurrent_calls_each_get_only_what_they_printed_and_other_prints_reach_stdout(
        runner_factory: Any, capsys: pytest.CaptureFixture[str], use_async: bool) -> None:
    """Sixteen calls print at once, sync and async alike, while a thread of the process that
    is no tool prints too: each call is answered with its own lines only, and the process's
    own print reaches its stdout (``redirect_stdout`` would have taken every thread's)."""
    tools = []
    for i in range(8):
        for kind in ("sync", "async"):
            made = _printing_tool(kind, [f"{kind}{i}"] * 30, None)
            tools.append(tool(made, name=f"{kind}{i}"))
    stop = threading.Event()

    def bystander() -> None:
        while not stop.is_set():
            print("not a tool")
            time.sleep(0.001)

    other = threading.Thread(target=bystander)
    other.start()
    try:
        runner = runner_factory(tools, max_workers=16)
        calls = [ToolCall(f"c{n}", t.name) for n, t in enumerate(tools)]
        results = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    finally:
        stop.set()
        other.join()
    assert [r.output for r in results] == ["\n".join([t.name] * 30) for t in tools]
    out = capsys.readouterr().out
    assert "not a tool" in out and not any(t.name in out for t in tools)


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_tool_that_echoes_with_click_is_answered_with_what_it_echoed(
        runner_factory: Any, monkeypatch: pytest.MonkeyPatch, use_async: bool, kind: str) -> None:
    """A command-line function wrapped as a tool (click's ``echo``/``secho``) failed: click
    probes ``stdout.write(b"")``, the capture took the bytes, and the call was "raised TypeError:
    sequence item 0: expected str instance, bytes found". On a terminal its colours reached the
    model as escapes: the capture said it was a terminal."""
    import click

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())

    def report() -> None:
        """Report."""
        click.echo("Oslo: sunny")
        click.secho("warning: wind", fg="red")

    async def areport() -> None:
        """Report."""
        report()

    chosen = report if kind == "sync" else areport
    chosen.__name__ = "report"
    runner = runner_factory([chosen])
    calls = [ToolCall("c", "report")]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output) == ("ok", "Oslo: sunny\nwarning: wind")


def test_what_a_task_an_async_tool_started_prints_after_the_call_reaches_stdout(
        runner_factory: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A tool that starts a task and returns (fire and forget): the task's print came after the
    call's capture had ended, went into that call's buffer, and was lost."""
    async def later() -> None:
        await asyncio.sleep(0.05)
        print("background done")

    async def kick() -> str:
        """Kick."""
        asyncio.get_running_loop().create_task(later())
        return "started"

    async def turn() -> Any:
        results = await runner_factory([kick]).arun([ToolCall("c", "kick")])
        await asyncio.sleep(0.3)
        return results

    (r,) = asyncio.run(turn())
    assert (r.output, capsys.readouterr().out) == ("started", "background done\n")


def _a_person_at_the_terminal(monkeypatch: pytest.MonkeyPatch, answers: str) -> list[str]:
    """What the screen (``sys.stdout``) showed at each line the person was asked for, filled as
    the test runs; ``sys.stdin`` gives ``answers`` a line at a time."""
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stdout", screen)
    seen: list[str] = []

    class Person(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            seen.append(screen.getvalue())
            return super().readline(size)

    monkeypatch.setattr(sys, "stdin", Person(answers))
    return seen


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_tool_asking_the_person_shows_its_question_before_it_waits_for_the_answer(
        runner_factory: Any, monkeypatch: pytest.MonkeyPatch, use_async: bool, kind: str) -> None:
    """A human-in-the-loop tool prints its question and reads the answer from stdin: the
    question went into the call's buffer, so in ``hermes-core chat`` the person saw nothing and
    the turn waited on them for good. The question now reaches the screen before the read."""
    seen = _a_person_at_the_terminal(monkeypatch, "Bergen\n")

    def ask() -> str:
        print("Oslo or Bergen?")
        return input().strip()

    if kind == "async":
        async def ask_person() -> str:
            """Ask the person where to go."""
            return f"they chose {await asyncio.to_thread(ask)}"
    else:
        def ask_person() -> str:   # type: ignore[misc]  # the sync twin
            """Ask the person where to go."""
            return f"they chose {ask()}"

    calls = [ToolCall("c", "ask_person")]
    runner = runner_factory([ask_person])
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output, seen) == ("ok", "they chose Bergen", ["Oslo or Bergen?\n"])


@pytest.fixture
def typed_stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``sys.stdin`` a pipe the test types into (the returned function writes a line), closed
    after the test, so a read still waiting on it ends."""
    import os

    r, w = os.pipe()
    stdin = io.TextIOWrapper(os.fdopen(r, "rb"), encoding="utf-8")
    writer = os.fdopen(w, "w", encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)

    def type_line(text: str) -> None:
        writer.write(text + "\n")
        writer.flush()

    yield type_line
    writer.close()


@pytest.mark.parametrize(("kind", "use_async"), [
    ("sync", False), ("sync", True), ("async", False), ("async", True), ("executor", False),
    ("executor", True), ("wrapped", False), ("wrapped", True)])
def test_a_read_of_a_call_past_its_timeout_ends_and_the_next_line_is_the_next_reader_s(
        runner_factory: Any, typed_stdin: Any, use_async: bool, kind: str) -> None:
    """A tool asking the person with nobody answering: past its timeout the call was answered
    "timed out", but its thread went on waiting on stdin and took the next line the person
    typed, meant for the chat's prompt. The call's read now ends as at the end of the input
    (``input()`` raises EOFError, so its thread ends), and the line typed next is read by the
    next reader.

    ``executor``: an async tool asking through ``loop.run_in_executor(None, ...)`` (asyncio's
    own idiom for a blocking call): the loop's executor copied no context, so the read was no
    call's, went on past the timeout and took the next line, and the question went to the
    process's stdout, not to the call's answer. From ``arun`` the loop is the caller's, and
    ``asyncio.run`` waited at its end for the abandoned read (for ever with nobody typing).
    ``wrapped``: the same tool behind a plain decorator (its coroutine awaited on a loop of the
    runner's own)."""
    ended = threading.Event()

    def ask() -> str:
        print("Oslo or Bergen?")
        try:
            return input()
        except EOFError:
            ended.set()
            raise

    if kind == "async":
        async def ask_person() -> str:
            """Ask the person where to go."""
            return await asyncio.to_thread(ask)
    elif kind in ("executor", "wrapped"):
        async def asking() -> str:
            return await asyncio.get_running_loop().run_in_executor(None, ask)

        def plain(fn: Any) -> Any:
            def inner() -> Any:
                return fn()
            inner.__name__, inner.__doc__ = "ask_person", "Ask the person where to go."
            return inner

        async def ask_person() -> str:
            """Ask the person where to go."""
            return await asking()
        if kind == "wrapped":
            ask_person = plain(asking)
    else:
        def ask_person() -> str:   # type: ignore[misc]  # the sync twin
            """Ask the person where to go."""
            return ask()

    calls = [ToolCall("c", "ask_person")]
    runner = runner_factory([ask_person], timeout_s=0.3)
    answered: list[Any] = []
    # in a thread: when the read is not given up, ``asyncio.run`` waits for it, which only the
    # fixture's closing of stdin ends, after the test
    turn = threading.Thread(target=lambda: answered.extend(
        asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)), daemon=True)
    turn.start()
    assert ended.wait(10), "the call's read went on after the call was let go of"
    turn.join()
    (r,) = answered
    assert (r.status, r.output) == ("timeout", "error: ask_person timed out after 0.3s; it "
                                               "printed:\nOslo or Bergen?")
    typed_stdin("a second message")
    assert sys.stdin.readline() == "a second message\n"


class _LoudValue:
    """A value whose text form prints (a debugging ``__str__``)."""

    def __str__(self) -> str:
        print("made my text")
        return "loud"


class _LoudError(Exception):
    def __str__(self) -> str:
        print("made my text")
        return "went wrong"


def _loud(kind: str, how: str) -> Any:
    """A tool named ``loud`` whose answer prints as it is made text, ``how``: its value's
    ``__str__``, the items of a lazy ``map`` it returns, or its exception's ``__str__``."""
    def made() -> Any:
        if how == "error":
            raise _LoudError
        if how == "map":
            return map(lambda x: print("made my text") or x, [1, 2])
        return _LoudValue()

    if kind == "async":
        async def loud() -> Any:
            """Loud."""
            return made()
        return loud

    def loud() -> Any:   # type: ignore[misc]  # the sync twin
        """Loud."""
        return made()
    return loud


@pytest.mark.parametrize("how", ["str", "map", "error"])
@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_what_a_value_prints_while_it_is_made_text_is_the_call_s_not_stdout_s(
        runner_factory: Any, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
        how: str, use_async: bool, kind: str) -> None:
    """Making a tool's value (or its error) text runs the tool's code too: a ``__str__``, a lazy
    ``map``. It ran after the call's capture had ended, so what that code printed went to the
    process's stdout (in ``hermes-core chat``, into the reply). It is the call's now: logged
    beside a value, told after an error (as any failed call's prints are)."""
    runner = runner_factory([_loud(kind, how)])
    with caplog.at_level("INFO", logger="hermes_core.agent.tools"):
        calls = [ToolCall("c", "loud")]
        (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert r.output == {
        "str": '"loud"', "map": "[1, 2]",
        "error": "error: loud raised _LoudError: went wrong; it printed:\nmade my text"}[how]
    assert capsys.readouterr().out == ""
    assert ("made my text" in caplog.text) is (how != "error")


def _failing(kind: str, how: str) -> Any:
    """A tool named ``fetch`` that prints why it fails, then fails: ``how`` is ``raise`` (an
    exception), ``exit`` (a command-line function's ``sys.exit(1)``) or ``hang`` (it never
    ends, and its call times out)."""
    def fail() -> None:
        print(f"cannot reach db.internal: connection refused {SECRET}")
        if how == "raise":
            raise ConnectionError("gave up")
        if how == "exit":
            sys.exit(1)

    if kind == "async":
        async def fetch() -> None:
            """Fetch."""
            fail()
            if how == "hang":
                await asyncio.sleep(30)
        return fetch

    def fetch() -> None:   # type: ignore[misc]  # the sync twin
        """Fetch."""
        fail()
        if how == "hang":
            time.sleep(30)
    return fetch


@pytest.mark.parametrize("how", ["raise", "exit", "hang"])
@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_failed_call_is_told_with_what_it_printed(
        runner_factory: Any, capsys: pytest.CaptureFixture[str], how: str, use_async: bool,
        kind: str) -> None:
    """A tool that prints why it fails and then raises, exits 1 or hangs past its timeout (a
    command-line function wrapped as a tool does all three): its print was the reason, and it was
    dropped; the model read "exited (status 1)" or "timed out" and not why, nor did the log
    have it. The error now ends with what the call printed, scrubbed and cut like any error."""
    runner = runner_factory([_failing(kind, how)], timeout_s=0.5, secrets=lambda: [SECRET])
    calls = [ToolCall("c", "fetch")]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    first = {"raise": "error: fetch raised ConnectionError: gave up",
             "exit": "error: fetch exited (status 1)",
             "hang": "error: fetch timed out after 0.5s"}[how]
    assert r.output.startswith(first + "; it printed:\ncannot reach db.internal: connection "
                               "refused ")
    assert SECRET not in r.output and capsys.readouterr().out == ""


@pytest.mark.parametrize("use_async", [False, True])
def test_click_s_prompt_and_confirm_in_a_tool_are_shown_before_they_wait(
        runner_factory: Any, monkeypatch: pytest.MonkeyPatch, use_async: bool) -> None:
    """``click.prompt`` and ``click.confirm`` echo their question to stdout, then read stdin:
    the person saw neither question. Each now shows before its read."""
    import click

    seen = _a_person_at_the_terminal(monkeypatch, "Bergen\ny\n")

    def book() -> str:
        """Book a table where the person says."""
        city = click.prompt("City")
        return f"{city} {click.confirm('Book it?')}"

    calls = [ToolCall("c", "book")]
    runner = runner_factory([book])
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.output, seen) == ("Bergen True", ["City: ", "City: Book it? [y/N]: "])


def test_pdb_in_a_tool_shows_what_it_says_before_each_command_it_reads(
        runner_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An author stepping through a tool with pdb: what pdb said (where it stopped, ``p x + 1``)
    went into the call's buffer, and only the ``(Pdb)`` prompts readline draws showed; it is
    shown before each command it reads now."""
    import pdb

    seen = _a_person_at_the_terminal(monkeypatch, "p x + 1\nc\n")

    def step() -> str:
        """Step through."""
        x = 41
        pdb.Pdb(nosigint=True, readrc=False).set_trace()
        return str(x)

    (r,) = runner_factory([step]).run([ToolCall("c", "step")])
    assert r.output == "41" and len(seen) == 2
    assert "-> return str(x)" in seen[0] and seen[1].endswith("(Pdb) 42\n(Pdb) ")


class _Terminal(io.StringIO):
    """The user's stdout in ``hermes-core chat``: a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("fails", [False, True])
@pytest.mark.parametrize("use_async", [False, True])
def test_a_console_made_before_the_call_colours_nothing_the_model_reads(
        runner_factory: Any, monkeypatch: pytest.MonkeyPatch, use_async: bool,
        fails: bool) -> None:
    """A rich ``Console()`` made at import time, on the user's terminal, settles its colours
    then: a tool printing through it in a call wrote ``\\x1b[1;31m`` into its answer (or its
    error), escapes the model reads as text. What a call printed reaches the model plain."""
    from rich.console import Console

    monkeypatch.setenv("TERM", "xterm-256color")
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stdout", _Terminal())
    console = Console()

    def report() -> None:
        """Report what changed."""
        console.print("[bold red]3 files[/bold red] changed")
        if fails:
            raise RuntimeError("disk full")

    calls = [ToolCall("c", "report")]
    runner = runner_factory([report])
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert r.output == ("error: report raised RuntimeError: disk full; it printed:\n"
                        if fails else "") + "3 files changed"
