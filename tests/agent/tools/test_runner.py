"""Running one message's tool calls: concurrency, order, timeouts, approval, errors as results."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import gc
import io
import json
import subprocess
import sys
import threading
import time
import typing
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import AfterValidator, BaseModel

from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.runner import ToolRunner
from hermes_core.agent.tools.schema import tool
from hermes_core.types import ToolCall

SECRET = "sk-proj-runnerSECRET0123456789abcdef"


def _pair_of_async_tools() -> list[Any]:
    """Two async tools that finish only if both run at the same time."""
    first, second = asyncio.Event(), asyncio.Event()

    async def left() -> str:
        """Left."""
        first.set()
        await asyncio.wait_for(second.wait(), 10)
        return "L"

    async def right() -> str:
        """Right."""
        second.set()
        await asyncio.wait_for(first.wait(), 10)
        return "R"

    return [left, right]


@pytest.fixture
def runner_factory() -> Iterator[Any]:
    made: list[ToolRunner] = []

    def make(tools: list[Any], **kw: Any) -> ToolRunner:
        r = ToolRunner(ToolRegistry(tools), **kw)
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


def test_async_tools_run_as_concurrent_tasks_results_in_call_order(runner_factory: Any) -> None:
    runner = runner_factory(_pair_of_async_tools())
    calls = [ToolCall("b", "right"), ToolCall("a", "left")]
    results = asyncio.run(runner.arun(calls))
    assert [(r.call_id, r.output, r.status) for r in results] == [("b", "R", "ok"), ("a", "L", "ok")]


def test_async_tool_called_from_sync_code_runs_in_its_own_loop(runner_factory: Any) -> None:
    async def double(x: int) -> int:
        """Double."""
        await asyncio.sleep(0)
        return 2 * x

    (result,) = runner_factory([double]).run([ToolCall("c", "double", '{"x": 21}')])
    assert (result.output, result.status) == ("42", "ok")


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_past_its_timeout_is_answered_with_a_timeout(runner_factory: Any,
                                                            use_async: bool) -> None:
    release = threading.Event()

    @tool(timeout_s=0.05)
    def hang() -> str:
        """Never returns in time."""
        release.wait(10)
        return "late"

    runner = runner_factory([hang])
    try:
        calls = [ToolCall("c", "hang")]
        (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    finally:
        release.set()
    assert (r.status, r.output) == ("timeout", "error: hang timed out after 0.05s")


def test_unknown_tool_names_the_tools_there_are(runner_factory: Any) -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    (r,) = runner_factory([add]).run([ToolCall("c", "multiply", "{}")],
                                     {"skill_view": lambda call: "body"})
    assert r.status == "unknown"
    assert r.output == "error: unknown tool 'multiply'; the tools are: skill_view, add"


def test_builtins_answer_their_calls(runner_factory: Any) -> None:
    (r,) = runner_factory([]).run([ToolCall("c", "skill_view", '{"name": "x"}')],
                                  {"skill_view": lambda call: f"body of {call.arguments}"})
    assert (r.status, r.output) == ("ok", 'body of {"name": "x"}')


@pytest.mark.parametrize("approve, says", [
    (None, "no approver is configured"),
    (lambda name, args: 1 / 0, "did not approve"),     # a failing callback refuses
    (lambda name, args: args["path"] != "/", "did not approve"),
])
def test_approval_refusals(runner_factory: Any, approve: Any, says: str) -> None:
    ran: list[str] = []

    @tool(needs_approval=True)
    def rm(path: str) -> str:
        """Remove."""
        ran.append(path)
        return "ok"

    (r,) = runner_factory([rm], approve=approve).run([ToolCall("c", "rm", '{"path": "/"}')])
    assert r.status == "refused" and says in r.output and ran == []


async def _async_refuses(name: str, args: Any) -> bool:
    return False


async def _async_approves(name: str, args: Any) -> bool:
    return True


@pytest.mark.parametrize("approve, runs", [
    (_async_refuses, False),                 # a coroutine is truthy: it used to approve
    (_async_approves, True),                 # awaited, so an async approver works
    (lambda name, args: "no", False),        # not a bool: refused, never taken as a yes
    (lambda name, args: None, False),
])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_only_a_true_answer_approves_and_async_approvers_are_awaited(
        runner_factory: Any, approve: Any, runs: bool, mode: str) -> None:
    ran: list[str] = []

    @tool(needs_approval=True)
    def rm(path: str) -> str:
        """Remove."""
        ran.append(path)
        return "removed"

    runner = runner_factory([rm], approve=approve)
    calls = [ToolCall("c", "rm", '{"path": "/"}')]
    (r,) = runner.run(calls) if mode == "sync" else asyncio.run(runner.arun(calls))
    assert (r.status == "ok") is runs and (ran == ["/"]) is runs
    if not runs:
        assert r.status == "refused" and "did not approve" in r.output


def test_an_async_approver_is_awaited_also_when_sync_code_runs_inside_an_event_loop(
        runner_factory: Any) -> None:
    """``agent.chat`` called from a notebook cell (a loop running in the thread): asyncio.run
    cannot run there, so an approver that said yes was taken for a failure and refused."""
    @tool(needs_approval=True)
    def rm(path: str) -> str:
        """Remove."""
        return "removed"

    runner = runner_factory([rm], approve=_async_approves)

    async def cell() -> Any:
        return runner.run([ToolCall("c", "rm", '{"path": "/tmp/x"}')])

    (r,) = asyncio.run(cell())
    assert (r.status, r.output) == ("ok", "removed")


def test_an_approved_call_runs(runner_factory: Any) -> None:
    @tool(needs_approval=True)
    def rm(path: str) -> str:
        """Remove."""
        return f"removed {path}"

    runner = runner_factory([rm], approve=lambda name, args: True)
    (r,) = runner.run([ToolCall("c", "rm", '{"path": "/tmp/x"}')])
    assert (r.status, r.output) == ("ok", "removed /tmp/x")


def test_errors_name_the_exception_without_traceback_or_secret(runner_factory: Any) -> None:
    def leak() -> str:
        """Fails with a key in its message."""
        raise PermissionError(f"bad key {SECRET}")

    runner = runner_factory([leak], secrets=lambda: [SECRET])
    (r,) = runner.run([ToolCall("c", "leak")])
    assert r.status == "error"
    assert r.output.startswith("error: leak raised PermissionError: bad key [key-")
    assert SECRET not in r.output and "Traceback" not in r.output


def test_result_sink_sees_every_call_and_a_failing_sink_costs_nothing(runner_factory: Any) -> None:
    seen: list[tuple[str, Any, str]] = []

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    def sink(call: ToolCall, args: Any, result: Any) -> None:
        seen.append((call.id, args, result.status))
        raise OSError("disk full")

    runner = runner_factory([add], on_result=sink)
    results = runner.run([ToolCall("1", "add", '{"a": 1, "b": 2}'), ToolCall("2", "add", "{}")])
    assert next(r.output for r in results) == "3"
    # in the order they finished (the invalid one is answered before anything runs)
    assert sorted(seen, key=lambda s: s[0]) == [("1", {"a": 1, "b": 2}, "ok"), ("2", None, "invalid")]


class Point(BaseModel):
    x: int
    y: int


class _Bare:
    """A class with no JSON form and no text of its own: its str is its repr."""


@dataclasses.dataclass
class _Blob:
    name: str
    data: bytes


def _cycle() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("value, why", [
    (_Bare(), "test_runner._Bare has no JSON form"),
    ({"rows": [_Bare()]}, "test_runner._Bare has no JSON form"),
    (len, "builtin_function_or_method has no JSON form"),
    (_Blob("a.png", b"\x89PNG\xff"), "it holds bytes that are not UTF-8 text"),
    ({"data": b"\x00\xff"}, "it holds bytes that are not UTF-8 text"),
    (_cycle(), "it holds itself"),
    ({"n": 10 ** 5000}, "ValueError: Exceeds the limit (4300 digits)"),
], ids=["object", "nested-object", "function", "binary-field", "binary-in-dict", "cycle",
        "int-past-str-limit"])
def test_a_value_with_no_json_form_is_an_error_naming_the_tool_and_the_type(
        runner_factory: Any, use_async: bool, value: Any, why: str) -> None:
    """An object with no JSON form was sent as its repr ("<_Bare object at 0x7f..>", a cycle as
    "{'self': {...}}"), and bytes that are not UTF-8 inside a dict or a dataclass as their raw
    repr ("b'\\x89PNG..."), the whole dataclass turned to its repr for one field: each is now
    the tool's error, saying what it returned, and the round's other calls keep their answers."""
    def odd() -> Any:
        """Returns an odd value."""
        return value

    first, second = _run_beside_a_fine_tool(runner_factory, odd, use_async)
    assert first.status == "error"
    assert first.output.startswith("error: odd returned a value that cannot be shown as text (")
    assert why in first.output and "0x" not in first.output and "PNG" not in first.output
    assert (second.status, second.output) == ("ok", "fine")


@pytest.mark.parametrize("secret", [SECRET, "zq9Horse7battery.Staple-42"])
@pytest.mark.parametrize("before_cut", [5, 12, 20])
def test_a_key_across_the_output_cut_leaves_no_piece_of_itself(runner_factory: Any, secret: str,
                                                               before_cut: int) -> None:
    """The output was cut at MAX_OUTPUT_CHARS before it was redacted: a key straddling the cut
    was no longer whole and its head went to the model (and the audit log) in clear."""
    from hermes_core.agent.tools.render import MAX_OUTPUT_CHARS

    def dump() -> str:
        """Dumps a long text."""
        return "x" * (MAX_OUTPUT_CHARS - before_cut) + secret + " and more"

    runner = runner_factory([dump], secrets=lambda: [secret])
    (r,) = runner.run([ToolCall("c", "dump")])
    assert r.status == "ok" and "truncated" in r.output
    assert secret[:before_cut] not in r.output.replace("x" * 1000, "")


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("cannot print me")


class _Opaque:
    pass


class _Holder(BaseModel):
    model_config = {"arbitrary_types_allowed": True}
    inner: _Opaque


def _run_beside_a_fine_tool(runner_factory: Any, odd: Any, use_async: bool) -> Any:
    """Run ``odd`` (call id "a") and a tool answering "fine" (call id "b") in one round, sync or
    async: what goes wrong with one call must leave the other's answer."""
    def fine() -> str:
        """Fine."""
        return "fine"

    runner = runner_factory([odd, fine])
    calls = [ToolCall("a", odd.__name__), ToolCall("b", "fine")]
    return asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("value", [_Unprintable(), _Holder(inner=_Opaque())],
                         ids=["str-raises", "model-not-serialisable"])
def test_a_return_value_that_cannot_be_rendered_is_an_error_result(runner_factory: Any,
                                                                   use_async: bool,
                                                                   value: Any) -> None:
    def odd() -> Any:
        """Returns something that cannot become text."""
        return value

    first, second = _run_beside_a_fine_tool(runner_factory, odd, use_async)
    assert first.status == "error"
    assert first.output.startswith("error: odd returned a value that cannot be shown as text")
    assert (second.status, second.output) == ("ok", "fine")


@pytest.mark.parametrize("use_async", [False, True])
def test_arguments_nested_too_deep_to_parse_are_invalid_not_a_crash(runner_factory: Any,
                                                                    use_async: bool) -> None:
    def echo(x: int = 0) -> str:
        """Echo."""
        return "ran"

    runner = runner_factory([echo])
    calls = [ToolCall("a", "echo", "[" * 100_000)]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert r.status == "invalid"
    assert r.output == "error: invalid arguments for echo: nested too deeply"


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("is_async_tool", [False, True])
def test_a_tool_that_calls_exit_is_answered_with_an_error(runner_factory: Any, use_async: bool,
                                                          is_async_tool: bool) -> None:
    """A command-line function wrapped as a tool (argparse refusing its arguments) raises
    SystemExit: that ends the call, not the agent."""
    def cli() -> str:
        """A command line."""
        raise SystemExit(2)

    async def acli() -> str:
        """A command line, async."""
        raise SystemExit(2)

    fn = acli if is_async_tool else cli
    runner = runner_factory([fn])
    calls = [ToolCall("a", fn.__name__)]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output) == ("error", f"error: {fn.__name__} exited (status 2)")


def test_tools_left_hanging_do_not_starve_later_calls(runner_factory: Any) -> None:
    """A timed-out sync tool keeps its worker thread (Python cannot stop it): once every worker
    hangs, a later call must still run, not time out in the queue without having started."""
    release = threading.Event()
    started: list[str] = []

    @tool(timeout_s=0.05)
    def hang() -> str:
        """Never returns in time."""
        release.wait(10)
        return "late"

    @tool(timeout_s=5)
    def quick() -> str:
        """Quick."""
        started.append("quick")
        return "done"

    runner = runner_factory([hang, quick], max_workers=2)
    try:
        hung = runner.run([ToolCall("1", "hang"), ToolCall("2", "hang")])
        assert [r.status for r in hung] == ["timeout", "timeout"]
        (r,) = runner.run([ToolCall("3", "quick")])
    finally:
        release.set()
    assert (r.status, r.output, started) == ("ok", "done", ["quick"])


ROOT = Path(__file__).resolve().parents[3]

# A tool that never returns (it waits on an event nobody sets), left behind by a timeout or by a
# cancelled turn; the script then ends. Each way names how the runner lets go of the call.
_HUNG_SCRIPT = """
import asyncio, sys, threading
from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.runner import ToolRunner
from hermes_core.agent.tools.schema import tool
from hermes_core.types import ToolCall

started = threading.Event()

@tool(timeout_s=float(sys.argv[2]))
def forever() -> str:
    \"\"\"Waits on an event nobody sets.\"\"\"
    started.set()
    threading.Event().wait()
    return "never"

runner = ToolRunner(ToolRegistry([forever]))
calls = [ToolCall("c", "forever")]
way = sys.argv[1]
if way == "run":
    print(runner.run(calls)[0].status)
elif way == "arun":
    print(asyncio.run(runner.arun(calls))[0].status)
elif way.startswith("interrupt"):   # Ctrl-C while the tool runs
    import os, signal   # a real SIGINT: it also wakes a main thread already waiting on a lock
    # as a terminal's Python has it: a shell's background job (CI's) starts with SIGINT ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # the kernel hands a process's signal to any thread: "interrupt-elsewhere" makes it another
    send = ((lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT))
            if way == "interrupt-elsewhere" else (lambda: os.kill(os.getpid(), signal.SIGINT)))
    threading.Thread(target=lambda: (started.wait(), send())).start()
    try:
        runner.run(calls)
    except KeyboardInterrupt:
        print("interrupted")
else:   # the turn is cancelled while the tool runs
    async def cancelled() -> str:
        task = asyncio.ensure_future(runner.arun(calls))
        await asyncio.to_thread(started.wait)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "not cancelled"
    print(asyncio.run(cancelled()))
"""


@pytest.mark.parametrize(("way", "timeout_s", "says"), [
    ("run", "0.05", "timeout"), ("arun", "0.05", "timeout"), ("cancel", "3600", "cancelled"),
    ("interrupt", "3600", "interrupted"), ("interrupt-elsewhere", "3600", "interrupted")])
def test_a_tool_left_hanging_does_not_hold_the_process_at_exit(way: str, timeout_s: str,
                                                               says: str) -> None:
    """Python joins the threads of every ``ThreadPoolExecutor`` at exit, also after
    ``shutdown(wait=False)``: a script whose tool timed out (or whose turn was cancelled) while the
    tool still ran waited for the tool when it ended. The ``timeout`` below only catches a hang."""
    try:
        done = subprocess.run([sys.executable, "-c", _HUNG_SCRIPT, way, timeout_s],
                              capture_output=True, text=True, timeout=60, cwd=ROOT,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the script did not end after its tool was let go ({way}): {e.stdout!r}")
    assert (done.returncode, done.stdout.strip()) == (0, says), done.stderr[-2000:]


def test_an_async_tool_that_swallows_its_cancellation_still_times_out(runner_factory: Any) -> None:
    """A tool catching every exception around its await (``except BaseException: retry``) takes
    the timeout's cancellation for one more failure: the turn must not wait for it to give up
    (it used to, and then reported the late result as a success)."""
    import time

    @tool(timeout_s=0.05)
    async def stubborn() -> str:
        """Retries whatever happens, for up to a second."""
        until = time.monotonic() + 1.0
        while time.monotonic() < until:
            try:
                await asyncio.sleep(0.01)
            except BaseException:   # the point of the test
                pass
        return "gave up"

    (r,) = asyncio.run(runner_factory([stubborn]).arun([ToolCall("c", "stubborn")]))
    assert (r.status, r.output) == ("timeout", "error: stubborn timed out after 0.05s")


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("timeout_s", [None, 30.0])
def test_a_tool_raising_its_own_timeout_error_is_its_error_not_the_runners_timeout(
        runner_factory: Any, use_async: bool, timeout_s: float | None) -> None:
    """A tool whose own request timed out (``socket.timeout`` is ``TimeoutError``) failed in its
    own way: the answer names its error; it must not claim the runner's limit ran out (nor, with
    no limit set, end the turn formatting a limit that does not exist)."""
    def fetch() -> str:
        """Fetches a page."""
        raise TimeoutError("the upstream read timed out")

    runner = runner_factory([fetch], timeout_s=timeout_s)
    calls = [ToolCall("c", "fetch")]
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output) == (
        "error", "error: fetch raised TimeoutError: the upstream read timed out")


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("no text")


@pytest.mark.parametrize("use_async", [False, True])
def test_an_exception_that_cannot_be_shown_as_text_is_still_an_error_result(
        runner_factory: Any, use_async: bool) -> None:
    """An exception whose ``__str__`` raises (a C extension's, a home-made one) is the tool's
    error, named by its type; it does not end the turn, and the other calls keep their answers."""
    def broken() -> str:
        """Fails oddly."""
        raise _Unprintable

    first, second = _run_beside_a_fine_tool(runner_factory, broken, use_async)
    assert (first.call_id, first.status) == ("a", "error")
    assert first.output.startswith("error: broken raised _Unprintable")
    assert (second.call_id, second.status, second.output) == ("b", "ok", "fine")


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

    first, second = _run_beside_a_fine_tool(runner_factory, fetch, use_async)
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
    first, second = _run_beside_a_fine_tool(runner_factory, chosen, use_async)
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

    first, _ = _run_beside_a_fine_tool(runner_factory, fetch_all, use_async)
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
            _run_beside_a_fine_tool(runner_factory, chosen, use_async)
        return
    first, second = _run_beside_a_fine_tool(runner_factory, chosen, use_async)
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
    ("sync", False), ("sync", True), ("async", False), ("async", True), ("executor", False)])
def test_a_read_of_a_call_past_its_timeout_ends_and_the_next_line_is_the_next_reader_s(
        runner_factory: Any, typed_stdin: Any, use_async: bool, kind: str) -> None:
    """A tool asking the person with nobody answering: past its timeout the call was answered
    "timed out", but its thread went on waiting on stdin and took the next line the person
    typed, meant for the chat's prompt. The call's read now ends as at the end of the input
    (``input()`` raises EOFError, so its thread ends), and the line typed next is read by the
    next reader.

    ``executor``: an async tool asking through ``loop.run_in_executor(None, ...)`` (asyncio's
    own idiom for a blocking call) from sync code (``run``, as the REPL runs tools): the loop's
    executor copied no context, so the read was no call's, went on past the timeout and took
    the next line, and the question went to the process's stdout, not to the call's answer.
    (From ``arun`` the loop, and its executor, are the caller's: not given up.)"""
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
    elif kind == "executor":
        async def ask_person() -> str:
            """Ask the person where to go."""
            return await asyncio.get_running_loop().run_in_executor(None, ask)
    else:
        def ask_person() -> str:   # type: ignore[misc]  # the sync twin
            """Ask the person where to go."""
            return ask()

    calls = [ToolCall("c", "ask_person")]
    runner = runner_factory([ask_person], timeout_s=0.3)
    (r,) = asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
    assert (r.status, r.output) == ("timeout", "error: ask_person timed out after 0.3s; it "
                                               "printed:\nOslo or Bergen?")
    assert ended.wait(10), "the call's read went on after the call was let go of"
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


def test_a_child_forked_while_a_tool_thread_held_the_runner_s_lock_runs_tools(
        runner_factory: Any, in_forked_child: Any, held_by_a_thread: Any) -> None:
    """A tool's thread inside the runner's lock (taking its place, ending) when another thread
    forked: a tool using multiprocessing's fork, or a server forking an agent that had run tools."""
    def double(x: int) -> int:
        """Double."""
        return 2 * x

    runner = runner_factory([double])

    def child() -> object:
        (result,) = runner.run([ToolCall("c", "double", '{"x": 21}')])
        runner.close()
        return result.output, result.status

    with held_by_a_thread(runner._lock):
        assert in_forked_child(child) == ("42", "ok")
