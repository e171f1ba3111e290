"""Running tool calls whose tools misbehave: generators, coroutines, base exceptions, values or
errors whose text hangs, arguments changed in place, hung calls beside a later round."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
import json
import threading
import time
import typing
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import AfterValidator, BaseModel

from hermes_core.agent.tools.schema import tool
from hermes_core.types import ToolCall
from tests.agent.tools.conftest import SECRET, run_beside_a_fine_tool


class Point(BaseModel):
    x: int
    y: int


def _sync_wrapper(fn: Any) -> Any:
    """A plain (not async) decorator, as logging or retry decorators often are."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    return wrapper


@pytest.mark.parametrize("use_async", [False, True])
def test_an_async_tool_behind_a_sync_decorator_is_awaited(runner_factory: Any,
                                                          use_async: bool) -> None:
    """A decorator that is a plain function hides the coroutine function: its call returns a
    coroutine, which is awaited for its result, not sent to the model as "<coroutine object>"."""
    @_sync_wrapper
    async def double(x: int) -> int:
        """Twice x."""
        await asyncio.sleep(0)
        return 2 * x

    runner = runner_factory([double])
    calls = [ToolCall("a", "double", '{"x": 21}')]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output) == ("ok", "42")


_USER: contextvars.ContextVar[str] = contextvars.ContextVar("user")


@pytest.mark.parametrize("use_async", [False, True])
def test_tools_see_the_context_variables_of_the_code_that_runs_them(runner_factory: Any,
                                                                    use_async: bool) -> None:
    """A request's user or trace id set in a context variable before ``chat`` reaches every
    tool, sync or async, whether the turn runs through ``chat`` or ``achat``."""
    def who() -> str:
        """The user."""
        return _USER.get("nobody")

    async def awho() -> str:
        """The user, async."""
        return _USER.get("nobody")

    runner = runner_factory([who, awho])
    calls = [ToolCall("a", "who"), ToolCall("b", "awho")]

    async def arun() -> Any:
        _USER.set("alice")
        return await runner.arun(calls)

    def run() -> Any:
        _USER.set("alice")
        return runner.run(calls)

    results = asyncio.run(arun()) if use_async else contextvars.copy_context().run(run)
    assert [r.output for r in results] == ["alice", "alice"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_generator_tool_is_answered_with_what_it_yields(runner_factory: Any,
                                                          use_async: bool) -> None:
    """An ``async def`` with ``yield`` was answered with its repr ("<async_generator object
    ...>"), a plain generator was run by the renderer in the agent's thread, past the timeout."""
    def lines(n: int) -> Iterator[str]:
        """Lines."""
        for i in range(n):
            yield f"line {i}"

    async def alines(n: int) -> AsyncIterator[str]:
        """Async lines."""
        for i in range(n):
            await asyncio.sleep(0)
            yield f"line {i}"

    runner = runner_factory([lines, alines])
    calls = [ToolCall("1", "lines", '{"n": 2}'), ToolCall("2", "alines", '{"n": 2}')]
    results = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert [(r.output, r.status) for r in results] == [('["line 0", "line 1"]', "ok")] * 2


@pytest.mark.parametrize("use_async", [False, True])
def test_a_generator_that_hangs_after_its_first_item_times_out(runner_factory: Any,
                                                               use_async: bool) -> None:
    release = threading.Event()

    @tool(timeout_s=0.05)
    def slow_lines() -> Iterator[str]:
        """Lines, slowly."""
        yield "first"
        release.wait(10)
        yield "late"

    runner = runner_factory([slow_lines])
    try:
        calls = [ToolCall("c", "slow_lines")]
        (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    finally:
        release.set()
    assert (r.status, r.output) == ("timeout", "error: slow_lines timed out after 0.05s")


@pytest.mark.parametrize("use_async", [False, True])
def test_a_generator_is_drawn_only_as_far_as_its_answer_is_shown(runner_factory: Any,
                                                                 use_async: bool) -> None:
    """A tool that yields without end (tailing a log, paging an API) was drawn whole before its
    answer was cut at MAX_OUTPUT_CHARS: with no timeout the turn never ended and the list grew
    until memory ran out (here the generators stop at 20,000 items, all drawn before). Drawing
    stops once the answer is past what the model is shown, the generator is closed (its
    ``finally`` runs) and the answer says more was left."""
    from hermes_core.agent.tools.render import MAX_OUTPUT_CHARS
    drawn = {"sync": 0, "async": 0}
    closed: list[str] = []

    def follow() -> Iterator[str]:
        """Follow the log."""
        try:
            for i in range(20_000):
                drawn["sync"] += 1
                yield f"line {i} " + "x" * 90
        finally:
            closed.append("sync")

    async def afollow() -> AsyncIterator[dict[str, int]]:
        """Follow the log, async."""
        try:
            for i in range(20_000):
                drawn["async"] += 1
                yield {"line": i, "bytes": i * 100}
        finally:
            closed.append("async")

    runner = runner_factory([follow, afollow])
    calls = [ToolCall("1", "follow"), ToolCall("2", "afollow")]
    out = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    for r in out:
        assert r.status == "ok" and len(r.output) < MAX_OUTPUT_CHARS + 200
        assert r.output.endswith(f"[... truncated: the first {MAX_OUTPUT_CHARS} characters; "
                                 "the tool yielded more, not drawn]")
    assert out[0].output.startswith('["line 0 x') and out[1].output.startswith('[{"line": 0')
    assert drawn["sync"] < 1_100 and drawn["async"] < 4_000
    assert sorted(closed) == ["async", "sync"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_huge_error_message_is_cut_like_a_huge_result(runner_factory: Any,
                                                        use_async: bool) -> None:
    """An exception carrying a whole response body or a process's output (megabytes) was sent
    whole: the 100,000-character cap held for results only."""
    from hermes_core.agent.tools.render import MAX_OUTPUT_CHARS

    def fetch() -> str:
        """Fetch the page."""
        raise RuntimeError("upstream said: " + "<p>oops</p>" * 200_000)

    runner = runner_factory([fetch])
    calls = [ToolCall("c", "fetch")]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert r.status == "error" and r.output.startswith("error: fetch raised RuntimeError: upstream")
    assert len(r.output) < MAX_OUTPUT_CHARS + 200 and "truncated" in r.output


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_whose_own_work_was_cancelled_is_its_error_not_the_turn_s_end(
        runner_factory: Any, use_async: bool) -> None:
    """An async tool awaiting a task something else cancelled (a client closed under it) raises
    CancelledError of its own: ``arun`` took it for the turn being cancelled and cancelled the
    turn, ``run`` let it out of the round (a BaseException), ending the chat with a traceback."""
    async def fetch() -> str:
        """Fetch the page."""
        inner = asyncio.ensure_future(asyncio.sleep(10))
        await asyncio.sleep(0)
        inner.cancel()
        return str(await inner)

    first, second = run_beside_a_fine_tool(runner_factory, fetch, use_async)
    assert (first.status, first.output) == (
        "error", "error: fetch raised CancelledError: its own work was cancelled")
    assert (second.status, second.output) == ("ok", "fine")


@pytest.mark.parametrize("use_async", [False, True])
def test_a_generator_s_nan_items_are_named_by_their_index(runner_factory: Any,
                                                         use_async: bool) -> None:
    def readings() -> Iterator[dict[str, float]]:
        """Sensor readings."""
        yield {"t": 1.5}
        yield {"t": float("nan")}

    runner = runner_factory([readings])
    calls = [ToolCall("1", "readings")]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert r.output == ('[{"t": 1.5}, {"t": null}]\n'
                        "[note: JSON has no NaN or Infinity; null stands for $[1].t (NaN)]")


@pytest.mark.parametrize("use_async", [False, True])
def test_each_item_a_generator_yields_is_encoded_once(runner_factory: Any, use_async: bool) -> None:
    """Each item was encoded to measure the answer as it was drawn, then the whole list again
    to write it: twice the work, and a serializer run twice per item."""
    from pydantic import model_serializer

    encoded: list[int] = []

    class Row(BaseModel):
        n: int

        @model_serializer
        def _as_json(self) -> dict[str, int]:
            encoded.append(self.n)
            return {"n": self.n}

    def rows() -> Iterator[Any]:
        """Rows."""
        yield from (Row(n=i) for i in range(3))

    runner = runner_factory([rows])
    calls = [ToolCall("1", "rows")]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert r.output == '[{"n": 0}, {"n": 1}, {"n": 2}]'
    assert encoded == [0, 1, 2]


class _Abort(BaseException):
    """A library's own BaseException (gevent's Timeout, pytest's outcomes are such)."""


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("raised", [_Abort("stop here"), GeneratorExit()], ids=["own", "genexit"])
def test_a_tool_raising_a_base_exception_is_that_call_s_error_not_the_turn_s_end(
        runner_factory: Any, use_async: bool, kind: str, raised: BaseException) -> None:
    """Only ``Exception`` was caught: any other BaseException a tool raised (from its worker
    thread, or its task) came out of the round and ended the turn, the other calls' answers
    lost. Ctrl-C and the turn's own cancellation still end it."""
    def odd() -> str:
        """Aborts."""
        raise raised

    async def aodd() -> str:
        """Aborts."""
        raise raised

    chosen = odd if kind == "sync" else aodd
    chosen.__name__ = "odd"
    first, second = run_beside_a_fine_tool(runner_factory, chosen, use_async)
    assert (first.status, first.output) == (
        "error", f"error: odd raised {type(raised).__name__}: {raised}".rstrip(": "))
    assert (second.status, second.output) == ("ok", "fine")


@pytest.mark.parametrize("use_async", [False, True])
def test_an_exception_group_names_the_errors_inside_it(runner_factory: Any,
                                                       use_async: bool) -> None:
    """An async tool using a TaskGroup fails with an ExceptionGroup, whose message only counts
    ("unhandled errors in a TaskGroup (1 sub-exception)"): the model was never told what
    failed."""
    async def fetch_all() -> str:
        """Fetch pages at once."""
        async def one(url: str) -> None:
            raise ConnectionError(f"{url} refused the connection")

        async with asyncio.TaskGroup() as group:
            group.create_task(one("a.example"))
            group.create_task(one("b.example"))
        return "fetched"

    first, _ = run_beside_a_fine_tool(runner_factory, fetch_all, use_async)
    assert first.output == (
        "error: fetch_all raised ExceptionGroup: unhandled errors in a TaskGroup (2 "
        "sub-exceptions): ConnectionError: a.example refused the connection; ConnectionError: "
        "b.example refused the connection")


@pytest.mark.parametrize("use_async", [False, True])
def test_a_call_s_timeout_counts_from_its_own_start_not_from_the_round_s(
        runner_factory: Any, use_async: bool) -> None:
    """Twenty calls in one round share ``max_workers`` threads: a call queued behind the first
    ones was given only what was left of the round's time, and one that ran 0.3 s of its 1 s was
    answered "timed out after 1s" (the model told to retry work that had succeeded)."""
    @tool(timeout_s=1.0)
    def lookup(n: int) -> int:
        """Look a number up (0.3 s)."""
        threading.Event().wait(0.3)
        return n

    runner = runner_factory([lookup], max_workers=4)
    calls = [ToolCall(f"c{i}", "lookup", json.dumps({"n": i})) for i in range(20)]
    results = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert [(r.status, r.output) for r in results] == [("ok", str(i)) for i in range(20)]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_queued_call_still_times_out_once_it_has_run_its_own_time(
        runner_factory: Any, use_async: bool) -> None:
    """Counting from a call's start must not let a hung call that started late run forever."""
    release = threading.Event()

    @tool(timeout_s=0.2)
    def hang(n: int) -> str:
        """Never returns in time."""
        release.wait(10)
        return "late"

    runner = runner_factory([hang], max_workers=2)
    calls = [ToolCall(f"c{i}", "hang", json.dumps({"n": i})) for i in range(5)]
    try:
        started = time.perf_counter()
        results = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
        took = time.perf_counter() - started
    finally:
        release.set()
    assert [r.status for r in results] == ["timeout"] * 5
    assert 0.5 <= took < 2.5   # three waves of 0.2 s, not 0.2 s for all nor forever


class _Traced:
    """A value whose text says which thread made it (its ``__str__`` is how it is shown)."""

    made_on: typing.ClassVar[list[int]] = []

    def __str__(self) -> str:
        self.made_on.append(threading.get_ident())
        return "traced"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_an_async_round_makes_a_tool_s_answer_text_off_the_event_loop(runner_factory: Any,
                                                                      kind: str) -> None:
    """A result was encoded and scrubbed on the event loop: a tool returning a 5 MB text held
    every other task of an async server for 1-2 s (measured 0.8 s for the text, 1.2 s for a
    100,000-key dict)."""
    def traced() -> Any:
        """Returns a traced value."""
        return _Traced()

    async def atraced() -> Any:
        """Returns a traced value."""
        return _Traced()

    chosen = traced if kind == "sync" else atraced
    chosen.__name__ = "traced"
    runner = runner_factory([chosen])
    _Traced.made_on.clear()

    async def turn() -> Any:
        return threading.get_ident(), await runner.arun([ToolCall("c", "traced")])

    loop_thread, (r,) = asyncio.run(turn())
    assert (r.status, r.output) == ("ok", '"traced"')
    assert _Traced.made_on and loop_thread not in _Traced.made_on


@pytest.mark.parametrize("status", ["ok", "error"])
def test_a_huge_answer_is_scrubbed_only_as_far_as_the_model_is_shown_it(runner_factory: Any,
                                                                        status: str) -> None:
    """All 5 MB of an answer (or of an error message) went through the redactor before the
    first 100,000 characters were kept: 1.3 s of regexes for text nobody would see. The head
    scrubbed, with a margin so a key across the cut is still whole (the test above)."""
    from hermes_core.agent.tools.render import MAX_OUTPUT_CHARS

    def dump() -> str:
        """Dumps a huge text."""
        if status == "error":
            raise RuntimeError("y" * 5_000_000)
        return "y" * 5_000_000

    scrubbed: list[int] = []

    def secrets() -> list[str]:
        scrubbed.append(0)
        return [SECRET]

    runner = runner_factory([dump], secrets=secrets)
    runner._scrub = lambda text, _own=runner._scrub: (scrubbed.append(len(text)), _own(text))[1]
    (r,) = runner.run([ToolCall("c", "dump")])
    assert r.status == status and "of 5000" in r.output
    assert max(scrubbed) < 2 * MAX_OUTPUT_CHARS


@pytest.mark.parametrize("name, raw, says", [
    ("add", '{"a": 1, "b": 2, "c": 3}',
     "error: invalid arguments for add: c: no such parameter (the parameters are: a, b)"),
    ("add", '{"a": 1, "bb": 2}',
     "error: invalid arguments for add: b: Field required; bb: no such parameter; did you mean "
     "'b'? (the parameters are: a, b)"),
    ("add", '{"a": 1, "b": ',
     "error: invalid arguments for add: not valid JSON: Expecting value at character 14 of 14 "
     "(the text ends before the JSON does)"),
    ("add", '{"a": 1 "b": 2}',
     "error: invalid arguments for add: not valid JSON: Expecting ',' delimiter at character 8 "
     "of 15"),
    ("Add", '{"a": 1, "b": 2}',
     "error: unknown tool 'Add'; did you mean 'add'? The tools are: add, look_up"),
    ("functions.look_up", "{}",
     "error: unknown tool 'functions.look_up'; did you mean 'look_up'? The tools are: add, "
     "look_up"),
    ("lookup", "{}", "error: unknown tool 'lookup'; did you mean 'look_up'? The tools are: add, "
     "look_up"),
    ("weather", "{}", "error: unknown tool 'weather'; the tools are: add, look_up"),
], ids=["extra-key", "misspelt-key", "truncated", "malformed", "case", "prefixed", "near",
        "unknown"])
def test_a_call_the_tool_cannot_take_is_told_what_to_send_instead(
        runner_factory: Any, name: str, raw: str, says: str) -> None:
    """Told "c: Extra inputs are not permitted", "Expecting value" or "unknown tool 'Add'", the
    model had to guess the names it may use, or where its JSON went wrong."""
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    def look_up() -> str:
        """Look up."""
        return "found"

    (r,) = runner_factory([add, look_up]).run([ToolCall("c", name, raw)])
    assert r.output == says


@pytest.mark.parametrize("use_async", [False, True])
def test_the_result_sink_sees_the_arguments_as_sent_not_as_the_tool_left_them(
        runner_factory: Any, use_async: bool) -> None:
    """The audit record was made after the call from the very objects the tool was given: a
    tool that drains its list or edits its model was recorded as called with what it left
    (``items=[]``), not with what the model sent."""
    seen: list[Any] = []

    def drain(items: list[int], where: Point) -> int:
        """Drain a queue."""
        n = len(items)
        items.clear()
        where.x = 0
        return n

    runner = runner_factory([drain], on_result=lambda call, args, result: seen.append(args))
    calls = [ToolCall("c", "drain", '{"items": [1, 2, 3], "where": {"x": 5, "y": 6}}')]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output) == ("ok", "3")
    assert seen == [{"items": [1, 2, 3], "where": Point(x=5, y=6)}]


#: A parameter whose validated value is an open file (which no deep copy takes); the tool closes it.
_OPENED = AfterValidator(lambda p: open(p, encoding="utf-8"))   # noqa: SIM115


@pytest.mark.parametrize("use_async", [False, True])
def test_an_argument_that_cannot_be_copied_leaves_the_others_recorded_as_sent(
        runner_factory: Any, use_async: bool, tmp_path: Path) -> None:
    """One value a deep copy refuses (a file a validator opened, a lock) made the whole record
    share the tool's objects again: the list the tool drained was recorded as ``items=[]``. Each
    value is copied on its own; the one that cannot be is shared, and the call runs."""
    seen: list[Any] = []
    path = tmp_path / "in.txt"
    path.write_text("x", encoding="utf-8")

    def drain(log: typing.Annotated[str, _OPENED], items: list[int]) -> int:
        """Drain a queue into a log."""
        with log:
            n = len(items)
            items.clear()
        return n

    runner = runner_factory([drain], on_result=lambda call, args, result: seen.append(args))
    calls = [ToolCall("c", "drain", json.dumps({"log": str(path), "items": [1, 2, 3]}))]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output) == ("ok", "3")
    assert seen[0]["items"] == [1, 2, 3] and seen[0]["log"].name == str(path)


@pytest.mark.parametrize("use_async", [False, True])
def test_a_round_does_not_queue_behind_another_round_s_hung_calls(runner_factory: Any,
                                                                  use_async: bool) -> None:
    """Two turns on one agent share its runner. A turn whose tools hang with no timeout held
    every place (``max_workers``), and the other turn's call, under a 0.5 s timeout, waited for
    a place until those tools ended (its timeout counts from its own start): forever, for a
    hung tool. A round's calls no longer queue behind another round's."""
    release = threading.Event()

    def hang() -> str:
        """Hangs until released."""
        release.wait(30)
        return "late"

    def quick() -> str:
        """Answers at once."""
        return "quick"

    runner = runner_factory([hang, tool(quick, timeout_s=0.5)], max_workers=2)
    other = threading.Thread(target=runner.run, args=([ToolCall("h1", "hang"),
                                                       ToolCall("h2", "hang")],))
    other.start()
    try:
        deadline = time.monotonic() + 5
        while len(runner._began) < 2 and time.monotonic() < deadline:   # both hung calls run
            time.sleep(0.01)
        began = time.monotonic()
        calls = [ToolCall("q", "quick")]
        (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
        took = time.monotonic() - began
    finally:
        release.set()
        other.join()
    assert (r.status, r.output) == ("ok", "quick")
    assert took < 0.5


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_tool_raising_keyboard_interrupt_off_the_main_thread_is_that_call_s_error(
        runner_factory: Any, use_async: bool, kind: str) -> None:
    """Python delivers Ctrl-C to the main thread only, so a KeyboardInterrupt raised in a
    tool's own thread (a sync tool; an async one run from ``run``) is the tool's doing (a
    wrapped command-line function, a library's "abort"): it ended the whole turn, the other
    calls' answers lost. On the main thread it may be the user's Ctrl-C and still ends it."""
    def odd() -> str:
        """Interrupts itself."""
        raise KeyboardInterrupt

    async def aodd() -> str:
        """Interrupts itself."""
        raise KeyboardInterrupt

    chosen = odd if kind == "sync" else aodd
    chosen.__name__ = "odd"
    if kind == "async" and use_async:   # a task on this (the main) thread's loop
        with pytest.raises(KeyboardInterrupt):
            run_beside_a_fine_tool(runner_factory, chosen, use_async)
        return
    first, second = run_beside_a_fine_tool(runner_factory, chosen, use_async)
    assert (first.status, first.output) == ("error", "error: odd raised KeyboardInterrupt")
    assert (second.status, second.output) == ("ok", "fine")


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_coroutine_a_tool_returns_is_awaited_for_its_value(runner_factory: Any,
                                                             use_async: bool, kind: str) -> None:
    """An ``async def`` returning another coroutine (``return fetch(city)``, the await left
    out) was answered "coroutine has no JSON form", and Python warned that it was never
    awaited; a sync tool's returned coroutine was already awaited. Both are now."""
    async def fetch(city: str) -> str:
        await asyncio.sleep(0)
        return f"sunny in {city}"

    def weather(city: str) -> Any:
        """Weather."""
        return fetch(city)

    async def aweather(city: str) -> Any:
        """Weather."""
        return fetch(city)

    chosen = weather if kind == "sync" else aweather
    chosen.__name__ = "weather"
    runner = runner_factory([chosen])
    calls = [ToolCall("c", "weather", '{"city": "Oslo"}')]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
        gc.collect()
    assert (r.status, r.output) == ("ok", "sunny in Oslo")


class _Stuck:
    """A value whose text never comes (its ``__str__`` waits on a lock nobody releases)."""

    gate = threading.Event()

    def __str__(self) -> str:
        self.gate.wait(20)
        return "stuck"


def _run_then_open_the_gate(runner: Any, name: str, use_async: bool) -> tuple[Any, float]:
    """One call of ``name`` in a sync or an async round: its result and the seconds it took;
    the stuck text's gate is opened after (so the abandoned thread ends), then reset."""
    began = time.monotonic()
    try:
        calls = [ToolCall("c", name)]
        (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
        took = time.monotonic() - began
    finally:
        _Stuck.gate.set()
    _Stuck.gate.clear()
    return r, took


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_value_whose_text_hangs_is_answered_at_the_call_s_timeout(
        runner_factory: Any, use_async: bool, kind: str) -> None:
    """A sync tool's value is made text in its own thread, under its timeout; an async tool's
    was made text in ``asyncio.to_thread``, under none: a ``__str__`` that hangs held the turn
    (and ``asyncio.run`` waits for the default executor's threads when it ends)."""
    def stuck() -> Any:
        """Returns a stuck value."""
        return _Stuck()

    async def astuck() -> Any:
        """Returns a stuck value."""
        return _Stuck()

    chosen = stuck if kind == "sync" else astuck
    chosen.__name__ = "stuck"
    r, took = _run_then_open_the_gate(runner_factory([tool(chosen, timeout_s=0.3)]), "stuck",
                                      use_async)
    assert (r.status, r.output) == ("timeout", "error: stuck timed out after 0.3s")
    assert took < 3


@pytest.mark.parametrize("use_async", [False, True])
def test_an_exception_whose_text_hangs_is_answered_at_the_call_s_timeout(
        runner_factory: Any, use_async: bool) -> None:
    """A tool's exception was described (``str(e)``) on the agent's thread after the tool
    ended: one whose ``__str__`` hangs held the turn past every timeout."""
    class Wedged(Exception):
        def __str__(self) -> str:
            _Stuck.gate.wait(20)
            return "wedged"

    def fail() -> str:
        """Fails oddly."""
        raise Wedged

    r, took = _run_then_open_the_gate(runner_factory([tool(fail, timeout_s=0.3)]), "fail",
                                      use_async)
    assert (r.status, r.output) == ("timeout", "error: fail timed out after 0.3s")
    assert took < 3


@pytest.mark.parametrize("use_async", [False, True])
def test_a_sync_tool_running_its_own_event_loop_works_in_either_round(
        runner_factory: Any, use_async: bool) -> None:
    """``asyncio.run`` inside a sync tool (a sync wrapper over an async client) raises "cannot
    be called from a running event loop" when called on a loop's thread; tools run in threads
    of their own, so it works from ``run`` and from ``arun`` alike."""
    async def inner(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    def double(n: int) -> int:
        """Doubles through an async client."""
        return asyncio.run(inner(n))

    runner = runner_factory([double])
    calls = [ToolCall(f"c{i}", "double", json.dumps({"n": i})) for i in range(4)]
    results = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert [r.output for r in results] == ["0", "2", "4", "6"]


def _keep(items: list[int] = [1], seen: dict[str, int] = {}) -> int:  # noqa: B006
    """Appends to its arguments and its defaults."""
    items.append(len(items))
    seen["n"] = seen.get("n", 0) + 1
    return len(items) * 10 + seen["n"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_that_changes_its_arguments_or_defaults_changes_no_later_call(
        runner_factory: Any, use_async: bool) -> None:
    """A mutable default (``items=[1]``) changed by one call is Python's classic trap: each call
    gets its own copy of the default (pydantic's), and the model's own lists are the call's."""
    runner = runner_factory([_keep])
    calls = [ToolCall("a", "_keep"), ToolCall("b", "_keep", '{"items": [5, 6]}')]
    for _ in range(3):
        results = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
        assert [r.output for r in results] == ["21", "31"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_returning_coroutines_without_end_is_answered_at_its_timeout(
        runner_factory: Any, use_async: bool) -> None:
    """An async tool that returns a call of itself (``return again()``, a retry without its
    await): each awaited coroutine handed back another without ever yielding to the loop, so
    ``arun`` spun on the event loop past the call's 0.3 s timeout, forever."""
    async def again() -> Any:
        """Again."""
        return again()

    runner = runner_factory([again], timeout_s=0.3)
    calls = [ToolCall("c", "again")]
    answered: list[Any] = []
    worker = threading.Thread(target=lambda: answered.extend(
        asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)), daemon=True)
    worker.start()
    worker.join(10)
    assert len(answered) == 1, "the turn never ended"
    assert answered[0].status == "error" and "again" in answered[0].output
