"""Running one message's tool calls: concurrency, order, timeouts, approval, errors as results."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from hermes_core.agent.tools.schema import tool
from hermes_core.types import ToolCall
from tests.agent.tools.conftest import SECRET, run_beside_a_fine_tool


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

    first, second = run_beside_a_fine_tool(runner_factory, odd, use_async)
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


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("value", [_Unprintable(), _Holder(inner=_Opaque())],
                         ids=["str-raises", "model-not-serialisable"])
def test_a_return_value_that_cannot_be_rendered_is_an_error_result(runner_factory: Any,
                                                                   use_async: bool,
                                                                   value: Any) -> None:
    def odd() -> Any:
        """Returns something that cannot become text."""
        return value

    first, second = run_beside_a_fine_tool(runner_factory, odd, use_async)
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

    first, second = run_beside_a_fine_tool(runner_factory, broken, use_async)
    assert (first.call_id, first.status) == ("a", "error")
    assert first.output.startswith("error: broken raised _Unprintable")
    assert (second.call_id, second.status, second.output) == ("b", "ok", "fine")


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


def test_a_child_forked_while_another_thread_s_loop_awaited_a_tool_runs_tools_on_its_own_loop(
        runner_factory: Any, in_forked_child: Any) -> None:
    """``arun`` in one thread (its loop, its default executor's worker inside an async tool) and
    a fork from another: the child runs a new ``arun`` and an async tool from sync ``run``."""
    inside, leave = threading.Event(), threading.Event()

    async def wait_for_it() -> str:
        """Wait."""
        inside.set()
        await asyncio.to_thread(leave.wait, 60)
        return "waited"

    async def double(x: int) -> int:
        """Double."""
        return await asyncio.to_thread(lambda: 2 * x)

    def triple(x: int) -> int:
        """Triple."""
        return 3 * x

    runner = runner_factory([wait_for_it, double, triple])
    parent: list[Any] = []
    t = threading.Thread(target=lambda: parent.append(
        asyncio.run(runner.arun([ToolCall("p", "wait_for_it", "{}")]))))
    t.start()
    assert inside.wait(60)

    def child() -> object:
        ran = asyncio.run(runner.arun([ToolCall("a", "double", '{"x": 21}'),
                                       ToolCall("b", "triple", '{"x": 2}')]))
        (sync,) = runner.run([ToolCall("c", "double", '{"x": 4}')])
        return [r.output for r in ran] + [sync.output]

    try:
        assert in_forked_child(child) == ["42", "6", "8"]
    finally:
        leave.set()
        t.join(60)
    assert parent[0][0].output == "waited"
