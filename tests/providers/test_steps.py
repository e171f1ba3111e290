"""One call body for sync and async: steps yielded, called or awaited, errors thrown back in."""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from hermes_core.providers.steps import Steps, arun, run

T = TypeVar("T")


def _step(fn: Callable[[], Any], use_async: bool) -> Callable[[], Any]:
    """``fn`` as the body yields it: plain for :func:`run`, a coroutine function for :func:`arun`."""
    if not use_async:
        return fn

    async def call() -> Any:
        return fn()
    return call


def _body(log: list[str], first: Callable[[], Any], second: Callable[[], Any],
          use_async: bool) -> Steps[str]:
    """A call's logic: a step whose ValueError it handles, then one whose result it returns;
    its ``finally`` stands for a request's deadline block, entered where it logs "open"."""
    log.append("open")
    try:
        try:
            got = yield _step(first, use_async)
        except ValueError as e:
            got = f"recovered from {e}"
        log.append(str(got))
        return f"{got} + {(yield _step(second, use_async))}"
    finally:
        log.append("closed")


def _drive(body: Steps[T], use_async: bool) -> T:
    return asyncio.run(arun(body)) if use_async else run(body)


@pytest.mark.parametrize("use_async", [False, True])
def test_each_step_result_is_sent_back_and_the_bodys_return_is_the_calls(use_async: bool) -> None:
    log: list[str] = []
    assert _drive(_body(log, lambda: "a", lambda: "b", use_async), use_async) == "a + b"
    assert log == ["open", "a", "closed"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_steps_error_is_raised_where_the_body_yielded_it_and_handled_there(
        use_async: bool) -> None:
    def cut() -> Any:
        raise ValueError("cut")
    log: list[str] = []
    assert _drive(_body(log, cut, lambda: "b", use_async), use_async) == "recovered from cut + b"
    assert log == ["open", "recovered from cut", "closed"]


@pytest.mark.parametrize("raised", [KeyboardInterrupt, asyncio.CancelledError, RuntimeError])
@pytest.mark.parametrize("use_async", [False, True])
def test_an_error_the_body_does_not_handle_closes_its_blocks_and_reaches_the_caller(
        use_async: bool, raised: type[BaseException]) -> None:
    """Ctrl-C or a cancelled task during a send: the request's deadline block is left (its
    ``finally`` runs) and the interruption itself reaches the caller, not swallowed."""
    def interrupted() -> Any:
        raise raised("now")
    log: list[str] = []
    with pytest.raises(raised):
        _drive(_body(log, interrupted, lambda: "b", use_async), use_async)
    assert log == ["open", "closed"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_body_that_needs_no_io_returns_at_once(use_async: bool) -> None:
    def nothing() -> Steps[int]:
        return 7
        yield  # a generator all the same

    assert _drive(nothing(), use_async) == 7


def _driver_lines() -> list[int]:
    """The lines of :func:`run` a signal can land on. A ``try:`` line is a no-op the tracer
    reports outside the block it opens (an exception raised there skips the ``finally``), where
    the interpreter never runs a signal handler."""
    source, first = inspect.getsourcelines(run)
    code = run.__code__
    return sorted({line for _, _, line in code.co_lines() if line is not None
                   and line > code.co_firstlineno and source[line - first].strip() != "try:"})


@pytest.mark.parametrize("line", _driver_lines())
def test_ctrl_c_at_any_line_of_the_driver_leaves_the_body_closed(line: int) -> None:
    """A signal lands between any two lines: one that lands in the driver (a step returned, the
    body not yet resumed) left the body suspended inside its deadline block until collected."""
    log: list[str] = []
    fired = False

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal fired
        if event == "line" and frame.f_lineno == line and not fired:
            fired = True
            raise KeyboardInterrupt
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code is run.__code__ else None

    body = _body(log, lambda: "a", lambda: "b", False)
    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        got = run(body)
    except KeyboardInterrupt:
        got = None
    finally:
        sys.settrace(old)
    assert (got is None) == fired
    assert log == [] or log[-1] == "closed"   # never entered, or left
