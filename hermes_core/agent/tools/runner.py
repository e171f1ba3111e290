"""Running the tool calls of one assistant message.

Every call gets an answer the model can read, whatever happens: an unknown name, arguments that
are not JSON or fail validation, a refused approval, an exception or a timeout all become a short
``error: ...`` result (never a traceback), and the turn goes on. The calls of one message run
concurrently (a thread each for sync tools, a task each for async ones) and their results come
back in call order, as both APIs require.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import copy
import difflib
import inspect
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from hermes_core.agent.tools.executors import borrow, run_own_loop
from hermes_core.agent.tools.printed import Printed, captured
from hermes_core.agent.tools.registry import ToolRegistry, folded
from hermes_core.agent.tools.render import (
    MAX_OUTPUT_CHARS,
    Unrenderable,
    adraw,
    cut,
    draw,
    render_output,
    scrubbed,
    text_of,
)
from hermes_core.agent.tools.schema import Tool, validation_message
from hermes_core.forked import renew_in_child
from hermes_core.redact import redact
from hermes_core.types import ToolCall, ToolResult, ToolStatus

log = logging.getLogger("hermes_core.agent.tools")

#: ``approve(tool_name, arguments) -> bool``: asked before each call of a tool that needs approval
#: (an ``async def`` approver is awaited). Only ``True`` approves.
Approver = Callable[[str, Mapping[str, Any]], bool | Awaitable[bool]]
#: A built-in tool answered by the agent itself (``skill_view``): the call in, the text out.
Builtin = Callable[[ToolCall], str]
#: Told of every finished call (the audit log): the call, its validated arguments (or None), result.
ResultSink = Callable[[ToolCall, Mapping[str, Any] | None, ToolResult], None]


class _Exited(Exception):
    """A tool raised SystemExit (a command-line function wrapped as a tool, argparse refusing its
    arguments). In a worker thread it would be re-raised in the agent's thread and end the
    process; it ends the call instead."""

    def __init__(self, code: object) -> None:
        super().__init__(f"status {code}")


class _CancelledInside(Exception):
    """A tool raised ``CancelledError`` of its own (it awaited a task something else cancelled),
    not because its call was cancelled: a BaseException, it ended the round in ``run`` and, in
    ``arun``, was taken for the whole turn's cancellation."""


class _Raised(Exception):
    """A tool raised a BaseException that is not an ``Exception`` (a library's own, as gevent's
    ``Timeout`` or pytest's outcomes are; ``GeneratorExit``): only ``Exception`` was caught, so
    it came out of the round and ended the turn. Ctrl-C (``KeyboardInterrupt``) still does."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__()
        self.raised = raised


def _maybe_ctrl_c(e: BaseException) -> bool:
    """Whether ``e`` may be the user's Ctrl-C, which ends the turn: a KeyboardInterrupt on the
    main thread. Python delivers signals there only, so one raised in a tool's own thread is the
    tool's doing (a wrapped command-line function's, a library's "abort"): that call's error."""
    return isinstance(e, KeyboardInterrupt) and threading.current_thread() is threading.main_thread()


class _Told(Exception):
    """A call's failure, already put in words in the call's own thread: describing it
    (``str(e)``) runs the tool's code, and one whose ``__str__`` hangs held the agent's thread
    past every timeout."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _own(e: BaseException) -> BaseException:
    """What the call's error reports: ``e``, or a BaseException ``e`` carries as a tool's."""
    return e.raised if isinstance(e, _Raised) else e


class _TimedOut(Exception):
    """The runner's own limit for a call ran out; a ``TimeoutError`` the tool raised itself (its
    own request timing out) is the tool's error, not this."""


def _described(e: BaseException, depth: int = 0) -> str:
    """``Type: message``; for an exception group (a TaskGroup's), its errors after it: its own
    message only counts them ("unhandled errors in a TaskGroup (2 sub-exceptions)"), and the
    model must know what failed to do anything else. At most five, one level of nesting."""
    text = text_of(e)
    own = f"{type(e).__name__}: {text}" if text else type(e).__name__
    if not isinstance(e, BaseExceptionGroup) or depth > 1:
        return own
    inner = [_described(x, depth + 1) for x in e.exceptions[:5]]
    more = f"; and {len(e.exceptions) - 5} more" if len(e.exceptions) > 5 else ""
    return f"{own}: {'; '.join(inner)}{more}"


def _call_sync(call: Callable[[Mapping[str, Any]], Any], args: Mapping[str, Any]) -> Any:
    """``call(args)``: a tool's ``invoke``, which calls its function with the arguments."""
    try:
        value = call(args)
        if inspect.isawaitable(value):
            # an async tool behind a plain decorator (``functools.wraps`` keeps no mark of the
            # coroutine function): its coroutine is the work, not the result. Awaited here, in
            # the worker thread, on a loop of its own; the call's timeout still holds
            value = _run_awaitable(value)
        if inspect.isgenerator(value):
            # a tool that yields: its items are the result, drawn here under the timeout (left
            # to the renderer, its body ran in the agent's thread, unbounded)
            value = draw(value)
        elif inspect.isasyncgen(value):   # an ``async def`` with ``yield``: not a coroutine
            value = _run_awaitable(adraw(value))
        return value
    except SystemExit as e:
        raise _Exited(e.code) from None
    except asyncio.CancelledError:   # nothing cancels a worker thread's call: the tool's own
        raise _CancelledInside from None
    except BaseException as e:
        if isinstance(e, Exception) or _maybe_ctrl_c(e):
            raise
        raise _Raised(e) from None


async def _call_async(call: Callable[[Mapping[str, Any]], Any], args: Mapping[str, Any]) -> Any:
    # caught inside the coroutine: a SystemExit reaching the task machinery stops the event loop
    try:
        value = await call(args)
        if inspect.isawaitable(value):   # ``return fetch(city)``, its await left out
            value = await _awaited(value)
        if inspect.isasyncgen(value):
            value = await adraw(value)
        return value
    except SystemExit as e:
        raise _Exited(e.code) from None
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():   # its call was cancelled (a timeout, the turn)
            raise
        raise _CancelledInside from None
    except BaseException as e:
        if isinstance(e, Exception) or _maybe_ctrl_c(e):
            raise
        raise _Raised(e) from None


#: How many awaitables deep a tool's value is awaited (``return fetch(city)`` is one deep).
_AWAITED_DEPTH = 8


async def _awaited(value: Awaitable[Any]) -> Any:
    """``value`` awaited, and what it gives while that is awaitable, at most
    :data:`_AWAITED_DEPTH` deep: a coroutine returning a call of itself (a retry, its await left
    out) never yields to the loop, and awaited without end it held the loop past every timeout."""
    for _ in range(_AWAITED_DEPTH):
        value = await value
        if not inspect.isawaitable(value):
            return value
    if inspect.iscoroutine(value):
        value.close()   # never run: no "never awaited" warning for it
    raise TypeError(f"it returned awaitables more than {_AWAITED_DEPTH} deep (a coroutine "
                    "returning a call of itself?)")


def _run_awaitable(value: Awaitable[Any]) -> Any:
    """``value`` awaited to its result from sync code, whether or not a loop runs here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_own_loop(_awaited(value))
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hermes-approve") as helper:
        return helper.submit(asyncio.run, _awaited(value)).result()


async def _printing(printed: Printed, call: Callable[[Mapping[str, Any]], Any],
                    args: Mapping[str, Any]) -> Any:
    """An async tool's value, what it prints kept in ``printed`` (its task's own context holds
    the capture)."""
    with captured(printed):
        return await _call_async(call, args)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """A timed-out tool that ends later: its outcome is read, so asyncio logs no "exception was
    never retrieved" for a result nobody waits for any more."""
    if not task.cancelled():
        task.exception()


def _tell(loop: asyncio.AbstractEventLoop, begun: asyncio.Future[None]) -> None:
    """From a tool's thread: mark ``begun`` done on ``loop`` (gone already: the turn ended)."""
    def mark() -> None:
        if not begun.done():
            begun.set_result(None)

    with contextlib.suppress(RuntimeError):   # the loop closed
        loop.call_soon_threadsafe(mark)


def _unwritten(calls: Sequence[ToolCall], i: int, cut_off: bool) -> bool:
    """Whether ``calls[i]`` was cut before any of its arguments: the last call of a reply that
    reached its token limit, carrying none ("" on OpenAI's wire, the ``{}`` an Anthropic
    ``tool_use`` block starts with). Only a reply's last call can be cut; a whole one with no
    arguments ends the reply, so one that reached the limit was still being written."""
    return cut_off and i == len(calls) - 1 and (calls[i].arguments or "").strip() in ("", "{}", "null")


def _unknown(name: str, names: Sequence[str]) -> str:
    """The answer to a call of a tool there is not, naming the one it most likely meant: the
    same name in other case, with ``-`` for ``_``, after a namespace ("functions.look_up", the
    harmony format's name for a recipient), or one close in spelling."""
    def key(n: str) -> str:
        return folded(n.rsplit(".", 1)[-1])

    same = [n for n in names if key(n) == key(name)]
    near = same or difflib.get_close_matches(key(name), names, n=1, cutoff=0.8)
    listed = ", ".join(names) or "none"
    if near:
        return f"error: unknown tool {name!r}; did you mean {near[0]!r}? The tools are: {listed}"
    return f"error: unknown tool {name!r}; the tools are: {listed}"


def _not_parsed(e: ValueError) -> str:
    """Why arguments did not parse, with where JSON went wrong: told only "Expecting value", a
    model could not tell its text was cut short from a comma it left out."""
    if not isinstance(e, json.JSONDecodeError):
        return str(e)
    ended = " (the text ends before the JSON does)" if e.pos >= len(e.doc.rstrip()) else ""
    return f"not valid JSON: {e.msg} at character {e.pos} of {len(e.doc)}{ended}"


def _copied(value: Any) -> Any:
    """A deep copy of ``value``, or ``value`` itself when it cannot be copied (a lock, a file)."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _cut_text(name: str, when: str) -> str:
    return (f"error: this call of {name} was cut off: the reply reached its output token limit "
            f"(max_tokens) {when}; not run. Make the call smaller (e.g. do the work in several "
            "calls)")


def _with_printed(text: str, printed: Printed | None) -> str:
    """A failed call's error and, after it, what the call printed: a command-line function
    wrapped as a tool prints why it fails before it raises, exits 1 or hangs, and the model told
    only "exited (status 1)" cannot tell a missing file from a refused connection."""
    if printed is None or not printed.total:
        return text
    return f"{text}; it printed:\n{printed.plain.removesuffix(chr(10))}"


def _failure_text(name: str, e: BaseException) -> str:
    """What the model is told of a call that raised ``e`` (its timeout aside)."""
    if isinstance(e, _Exited):
        return f"error: {name} exited ({e})"
    if isinstance(e, _CancelledInside):
        return f"error: {name} raised CancelledError: its own work was cancelled"
    if isinstance(e, Unrenderable):
        return f"error: {name} returned a value that cannot be shown as text ({e})"
    e = _own(e)
    log.debug("tool %s raised", name, exc_info=e)
    return f"error: {name} raised {_described(e)}"


@dataclass(frozen=True, slots=True)
class _Ready:
    """A call that runs (``tool`` and ``args`` set) or is already answered (``result`` set)."""

    call: ToolCall
    tool: Tool | None = None
    args: Mapping[str, Any] | None = None
    result: ToolResult | None = None
    #: ``args`` as they were before the tool ran, for the result sink (``_as_sent``)
    sent: Mapping[str, Any] | None = None


# How often a blocking wait for a tool wakes. A Ctrl-C the kernel delivers to another thread of
# the process (the tool's, say) only flags it: a main thread parked on a lock with no timeout never
# runs the handler, and the turn ignored Ctrl-C until the tool ended (forever for a hung one).
_WAKE_S = 0.2

#: How much of what a tool printed beside its answer is logged.
_PRINT_LOGGED = 300


class ToolRunner:
    """Answers tool calls with the registry's tools (and the agent's built-ins).

    ``approve`` is asked for tools marked ``needs_approval``; without one, such calls are refused.
    ``timeout_s`` applies to tools that set none. ``secrets`` returns the keys to redact from what
    goes back to the model. Sync tools run in daemon threads of the runner's (``close``), at most
    ``max_workers`` of one round's at once.
    """

    def __init__(self, registry: ToolRegistry, *, approve: Approver | None = None,
                 timeout_s: float | None = None, on_result: ResultSink | None = None,
                 secrets: Callable[[], Iterable[str]] = tuple, max_workers: int = 8,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.registry = registry
        self.approve = approve
        self.timeout_s = timeout_s
        self.on_result = on_result
        self._secrets = secrets
        self._clock = clock
        self.max_workers = max_workers
        # the calls holding a place, each with its round's places (:meth:`_places`)
        self._held: dict[concurrent.futures.Future[Any], threading.Semaphore] = {}
        self._live: set[concurrent.futures.Future[Any]] = set()   # calls not yet ended
        # when each running call took its place (``time.monotonic``): its timeout counts from
        # there, not from the round's start, which a call queued behind ``max_workers`` others
        # had spent waiting
        self._began: dict[concurrent.futures.Future[Any], float] = {}
        self._count = 0
        self._lock = threading.Lock()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): a lock of its own (one a tool's thread
        held at the fork hung the child's first call), and none of the parent's calls: their
        threads are not in the child, and its close must not wait on their futures' locks."""
        self._lock = threading.Lock()
        self._held, self._live, self._began = {}, set(), {}

    # ------------------------------------------------------------------ preparing

    def _scrub(self, text: str) -> str:
        return redact(text, list(self._secrets()))

    def _result(self, call: ToolCall, output: str, status: ToolStatus, started: float,
                args: Mapping[str, Any] | None = None) -> ToolResult:
        # a result was cut when rendered; an error message (a response body, a process's
        # output) may be as long, and is scrubbed only as far as it is kept
        if status == "ok":
            text = self._scrub(output)
        else:
            head, total = scrubbed(output, MAX_OUTPUT_CHARS, self._scrub)
            text = cut(head, MAX_OUTPUT_CHARS, total)
        result = ToolResult(call.id, call.name, text, status,
                            round((self._clock() - started) * 1000, 3))
        if self.on_result is not None:
            try:
                self.on_result(call, args, result)
            except Exception as e:   # the audit failing costs the record, not the turn
                log.warning("tool result sink failed: %s", e)
        return result

    def _prepare(self, call: ToolCall, builtins: Mapping[str, Builtin],
                 cut_off: bool = False, unwritten: bool = False) -> _Ready:
        """``cut_off``: the reply ended at its token limit, so arguments that do not parse or
        validate are most likely cut short, and the model is told so (told only "Expecting ','
        delimiter" it would send the same long call again, to be cut again). ``unwritten``: the
        call is a cut reply's last and carries no argument (:func:`_unwritten`): cut at its name,
        it is not run, though every parameter has a default."""
        started = self._clock()
        builtin = builtins.get(call.name)
        if unwritten and (builtin is not None or self.registry.get(call.name) is not None):
            return _Ready(call, result=self._result(call, _cut_text(
                call.name, "before its arguments were written"), "invalid", started))
        if builtin is not None:
            try:
                return _Ready(call, result=self._result(call, builtin(call), "ok", started))
            except Exception as e:
                return _Ready(call, result=self._result(
                    call, f"error: {call.name} failed: {type(e).__name__}: {text_of(e)}", "error",
                    started))
        tool = self.registry.get(call.name)
        if tool is None:
            return _Ready(call, result=self._result(
                call, _unknown(call.name, [*builtins, *self.registry.names]), "unknown", started))
        try:
            args = tool.parse(call.arguments)
        except (ValidationError, ValueError) as e:   # not JSON, not an object, or not valid
            reason = (validation_message(e, parameters=list(tool.parameters.get("properties", {})))
                      if isinstance(e, ValidationError) else _not_parsed(e))
            text = (_cut_text(tool.name, f"before the arguments were complete ({reason})")
                    if cut_off else f"error: invalid arguments for {tool.name}: {reason}")
            return _Ready(call, result=self._result(call, text, "invalid", started))
        if tool.needs_approval:
            refused = self._refusal(tool, args)
            if refused:
                return _Ready(call, result=self._result(call, refused, "refused", started, args))
        return _Ready(call, tool, args, sent=self._as_sent(args))

    def _as_sent(self, args: Mapping[str, Any]) -> Mapping[str, Any]:
        """What the result sink is told the call was given: a copy taken before it runs. The
        tool gets the validated objects themselves, and one that drains a list or edits a model
        was recorded as called with what it left. Each value on its own: one that cannot be
        copied (a file a validator opened) is shared, and the others are still copied."""
        if self.on_result is None:
            return args
        return {name: _copied(value) for name, value in args.items()}

    def _refusal(self, tool: Tool, args: Mapping[str, Any]) -> str:
        """Empty when the call may run, else the text the model is told."""
        if self.approve is None:
            return f"error: {tool.name} needs approval and no approver is configured; not run"
        try:
            ok = self.approve(tool.name, dict(args))
            if inspect.isawaitable(ok):
                # an async approver (natural beside achat): its coroutine is truthy, so taken
                # as it stands every call would be approved unasked. It is awaited on a loop of
                # its own: here when this thread has none (``arun`` prepares in a worker
                # thread), else in a helper thread (sync ``chat`` from a notebook's loop)
                ok = _run_awaitable(ok)
        except Exception as e:
            log.warning("approval callback failed for %s: %s", tool.name, e)
            ok = False
        if not isinstance(ok, bool):
            # only True approves: "no", 0 or None are not a person saying yes
            log.warning("approval callback for %s returned %s, not bool: the call is refused",
                        tool.name, type(ok).__name__)
        return "" if ok is True else f"error: the user did not approve this call of {tool.name}; not run"

    def _timeout(self, tool: Tool) -> float | None:
        return tool.timeout_s if tool.timeout_s is not None else self.timeout_s

    def _failure(self, r: _Ready, e: BaseException, started: float,
                 printed: Printed | None = None) -> ToolResult:
        """The answer to a call that failed with ``e``, what it printed (so far) after it."""
        assert r.tool is not None
        if isinstance(e, _TimedOut):
            return self._result(r.call, _with_printed(
                f"error: {r.tool.name} timed out after {self._timeout(r.tool):g}s", printed),
                "timeout", started, r.sent)
        text = e.text if isinstance(e, _Told) else _failure_text(r.tool.name, e)
        return self._result(r.call, _with_printed(text, printed), "error", started, r.sent)

    # ------------------------------------------------------------------ sync

    def _start(self, fn: Callable[..., Any], *args: Any,
               places: threading.Semaphore | None, on_start: Callable[[], None] | None = None
               ) -> concurrent.futures.Future[Any]:
        """``fn(*args)`` in a daemon thread of its own, in a copy of the caller's context, as a
        future; ``on_start`` is told (in that thread) once it holds a place and runs, the moment
        its timeout counts from (``_began``). Not a ``ThreadPoolExecutor``: Python joins every
        executor thread at exit, also after ``shutdown(wait=False)``, so a tool hung past its
        timeout (or a cancelled turn's) held the process when its script ended. A daemon thread
        ends with the process; what the tool was doing is cut off there, and its result was
        already discarded. It runs once it holds one of ``places`` (its round's; None: at once);
        a call let go of gives its place up at once."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        ctx = contextvars.copy_context()

        def work() -> None:
            if places is not None:
                places.acquire()
                with self._lock:
                    self._held[future] = places
            try:
                if not future.set_running_or_notify_cancel():   # cancelled while queued
                    return
                with self._lock:
                    self._began[future] = time.monotonic()
                if on_start is not None:
                    on_start()
                try:
                    value = ctx.run(fn, *args)
                except BaseException as e:   # the caller reads it from the future
                    future.set_exception(e)
                else:
                    future.set_result(value)
            finally:
                self._release(future)
                with self._lock:
                    self._live.discard(future)
                    self._began.pop(future, None)

        with self._lock:
            self._live.add(future)
            self._count += 1
            name = f"hermes-tool-{self._count}"
        threading.Thread(target=work, name=name, daemon=True).start()
        return future

    def _release(self, future: concurrent.futures.Future[Any]) -> None:
        """``future``'s place among its round's, given back once (by its thread when the tool
        ends, or by :meth:`_abandon` when the runner stops waiting, whichever comes first)."""
        with self._lock:
            places = self._held.pop(future, None)
        if places is not None:
            places.release()

    def _places(self) -> threading.Semaphore:
        """One round's places: ``max_workers`` of its calls run at once. Per round, not per
        runner: two turns on one agent share its runner, and a turn whose tools hang with no
        timeout held every place, so the other turn's calls waited for them (their timeouts count
        from their own start), for as long as the tools hung."""
        return threading.Semaphore(self.max_workers)

    def _abandon(self, future: concurrent.futures.Future[Any]) -> None:
        """A call the runner no longer waits for (past its timeout, or its turn cancelled). Not
        started: cancelled. Running: Python cannot stop its thread, which runs on for as long as
        the tool hangs, but gives up its place, so later calls do not queue behind hung ones."""
        if not future.cancel():
            self._release(future)

    @staticmethod
    def _invoke(tool: Tool, args: Mapping[str, Any]) -> Any:
        if tool.is_async:   # an async tool called from sync code: its own loop in this thread
            return run_own_loop(_call_async(tool.invoke, args))
        return _call_sync(tool.invoke, args)

    def run(self, calls: Sequence[ToolCall], builtins: Mapping[str, Builtin] | None = None, *,
            cut_off: bool = False) -> tuple[ToolResult, ...]:
        """Answer ``calls`` (blocking), results in call order; ``cut_off``: see ``_prepare``."""
        ready = [self._prepare(c, builtins or {}, cut_off, _unwritten(calls, i, cut_off))
                 for i, c in enumerate(calls)]
        started = self._clock()
        # each call in a copy of the caller's context (as ``arun`` does, and as asyncio does for
        # a task): a user or trace id the author set before ``chat`` reaches the tool. A copy
        # each: one context cannot be entered by two threads at once
        places = self._places()
        printed = {i: Printed() for i, r in enumerate(ready) if r.result is None}
        futures = {i: self._start(self._rendered, r.tool.name, printed[i], self._invoke, r.tool,
                                  r.args or {}, places=places)
                   for i, r in enumerate(ready) if r.result is None and r.tool is not None}
        try:
            return self._collect(ready, futures, started, printed)
        except BaseException:   # Ctrl-C while tools run: the turn is cancelled, its calls let go
            for f in futures.values():
                self._abandon(f)
            for p in printed.values():
                p.let_go()
            raise

    def _rendered(self, name: str, printed: Printed, call: Callable[..., Any], *args: Any) -> str:
        """``call(*args)``'s value as the model's text, made in the tool's thread: a 5 MB answer
        encoded and scrubbed on the agent's thread (or its event loop) held it for seconds.
        What it prints is kept in ``printed`` (:mod:`printed`), not written to the process's
        stdout."""
        try:
            with captured(printed):
                value = call(*args)
        except Exception as e:   # put in words here too: its ``__str__`` is the tool's code
            raise _Told(self._told(name, e, printed)) from None
        return self._answered(name, value, printed)

    @staticmethod
    def _told(name: str, e: BaseException, printed: Printed) -> str:
        """:func:`_failure_text`, under the call's capture: describing ``e`` runs its code."""
        with captured(printed):
            return _failure_text(name, e)

    def _answered(self, name: str, value: Any, printed: Printed) -> str:
        """:meth:`_answer` under the call's capture (making a value text runs the tool's code:
        a ``__str__``, a lazy ``map``, and what that printed reached the process's stdout), a
        failure to make the text put in words as well; then what it printed beside its value
        logged."""
        try:
            with captured(printed):
                text, printed_is_answer = self._answer(value, printed)
        except Exception as e:
            raise _Told(self._told(name, e, printed)) from None
        if printed.total and not printed_is_answer and log.isEnabledFor(logging.INFO):
            # the scrub is regexes: not for a line nobody reads
            log.info("%s printed %d characters, not shown to the model: %r%s", name,
                     printed.total, self._scrub(printed.plain[:_PRINT_LOGGED]),
                     "..." if printed.total > _PRINT_LOGGED else "")
        return text

    async def _atext(self, name: str, printed: Printed,
                     call: Callable[[Mapping[str, Any]], Any], args: Mapping[str, Any]) -> str:
        """An async tool's answer: its value (or its error) made text in a thread of the
        runner's, within the call's task, so under its timeout: encoding megabytes on the loop
        stalled every other task, and a ``__str__`` that hangs held the turn."""
        try:
            value = await _printing(printed, call, args)
        except Exception as e:
            told = self._start(self._told, name, e, printed, places=None)
            raise _Told(await asyncio.wrap_future(told)) from None
        text: str = await asyncio.wrap_future(
            self._start(self._answered, name, value, printed, places=None))
        return text

    def _answer(self, value: Any, printed: Printed) -> tuple[str, bool]:
        """The text of a call that returned ``value`` and printed ``printed``, and whether that
        text is what it printed: a tool that returns nothing and prints (a command-line function
        wrapped as a tool) is answered with it, cut and scrubbed like a value; else the model
        reads what the tool returned."""
        if value is None and printed.total:
            text = printed.plain
            if printed.total == len(printed.text):   # whole: a last newline is no content
                return render_output(text.removesuffix("\n"), scrub=self._scrub), True
            head, _ = scrubbed(text, MAX_OUTPUT_CHARS, self._scrub)
            return cut(head, MAX_OUTPUT_CHARS, printed.total), True
        return render_output(value, scrub=self._scrub), False

    def _settle(self, ready: Sequence[_Ready],
                futures: Mapping[int, concurrent.futures.Future[Any]]) -> set[int]:
        """Wait until every call in ``futures`` has ended or run past its own timeout (counted
        from when it took its place); returns the places of those that ran past, let go of.
        Each wait is short (:data:`_WAKE_S`) and covers every call, not one in call order: a
        queued call waits for the place a later hung call holds, which only its timeout frees."""
        pending, late = dict(futures), set()
        while pending:
            now, nearest = time.monotonic(), _WAKE_S
            for i, f in list(pending.items()):
                tool = ready[i].tool
                limit = self._timeout(tool) if tool is not None else None
                with self._lock:
                    began = self._began.get(f)
                if f.done():
                    del pending[i]
                elif limit is not None and began is not None:
                    if now >= began + limit:
                        self._abandon(f)
                        late.add(i)
                        del pending[i]
                    else:
                        nearest = min(nearest, began + limit - now)
            if pending:
                concurrent.futures.wait(pending.values(), timeout=nearest,
                                        return_when=concurrent.futures.FIRST_COMPLETED)
        return late

    def _collect(self, ready: Sequence[_Ready], futures: Mapping[int, concurrent.futures.Future[Any]],
                 started: float, printed: Mapping[int, Printed]) -> tuple[ToolResult, ...]:
        late = self._settle(ready, futures)
        for i in late:
            printed[i].let_go()
        out: list[ToolResult] = []
        for i, r in enumerate(ready):
            if r.result is not None:
                out.append(r.result)
                continue
            if i in late:
                out.append(self._failure(r, _TimedOut(), started, printed[i]))
                continue
            try:
                text = futures[i].result()
            except Exception as e:   # a TimeoutError here is the tool's own
                out.append(self._failure(r, e, started, printed[i]))
                continue
            out.append(self._result(r.call, text, "ok", started, r.sent))
        return tuple(out)

    # ------------------------------------------------------------------ async

    async def arun(self, calls: Sequence[ToolCall], builtins: Mapping[str, Builtin] | None = None,
                   *, cut_off: bool = False) -> tuple[ToolResult, ...]:
        """Answer ``calls`` without blocking the event loop, results in call order.

        Preparing (validation, the approval callback, a built-in reading a skill file) runs in a
        worker thread: an approval prompt may wait on a person."""
        ready = await asyncio.to_thread(
            lambda: [self._prepare(c, builtins or {}, cut_off, _unwritten(calls, i, cut_off))
                     for i, c in enumerate(calls)])
        places = self._places()

        async def one(r: _Ready) -> ToolResult:
            if r.result is not None:
                return r.result
            assert r.tool is not None
            started = self._clock()
            args = dict(r.args or {})
            thread: concurrent.futures.Future[Any] | None = None
            printed = Printed()
            if r.tool.is_async:   # its ``run_in_executor(None, ...)`` work as the call's
                give_back = borrow(asyncio.get_running_loop())
                work: Awaitable[Any] = self._atext(r.tool.name, printed, r.tool.invoke, args)
            else:   # a thread of the runner's, not the loop's pool: one hung tool is let go of
                loop = asyncio.get_running_loop()
                begun: asyncio.Future[None] = loop.create_future()
                thread = self._start(self._rendered, r.tool.name, printed, _call_sync,
                                     r.tool.invoke, args, places=places,
                                     on_start=lambda: _tell(loop, begun))
                work = asyncio.wrap_future(thread)
            task = asyncio.ensure_future(work)
            if r.tool.is_async:
                task.add_done_callback(lambda _: give_back())
            try:
                if thread is not None:   # its timeout counts once it has a place to run in
                    await asyncio.wait((task, begun), return_when=asyncio.FIRST_COMPLETED)
                # not wait_for: it waits for the cancelled tool to finish, and a tool that
                # swallows its cancellation (``except BaseException: retry``) would hold the
                # turn for as long as it likes
                done, _ = await asyncio.wait((task,), timeout=self._timeout(r.tool))
                if not done:
                    task.cancel()
                    task.add_done_callback(_retrieve)
                    if thread is not None:
                        self._abandon(thread)
                    printed.let_go()
                    raise _TimedOut
                text = task.result()   # made text in a thread (``_rendered``, ``_atext``)
            except asyncio.CancelledError:
                task.cancel()
                if thread is not None:
                    self._abandon(thread)
                printed.let_go()
                raise
            except Exception as e:
                return self._failure(r, e, started, printed)
            return self._result(r.call, text, "ok", started, r.sent)

        return tuple(await asyncio.gather(*(one(r) for r in ready)))

    def close(self) -> None:
        """Cancel the calls still queued for a place (a tool already running finishes in the
        background, in a daemon thread that does not hold the process at exit)."""
        with self._lock:
            waiting = list(self._live)
        for future in waiting:
            future.cancel()   # only a call not yet running is cancelled
