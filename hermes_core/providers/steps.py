"""One body for a call's sync and async forms: its logic a generator of steps, its I/O a driver.

A whole call's logic (render the payload, bound it, send it once more after a refusal it learned
from, map the SDK's errors, bill what was sent, read the answer) was written twice, once with
``await`` before the send and once without, and the two copies had to be kept equal by hand.
Here the logic is written once, as a generator that yields each piece of I/O as a callable of no
arguments and is sent what it returned, or thrown what it raised, exactly where inline code would
have had it. :func:`run` calls each step in this thread; :func:`arun` awaits it. The one place
the two forms differ is that line of each driver, not a flag buried in the logic: a step that
must be different in async code (``response.aread`` against ``response.read``) is chosen by the
body that yields it, in plain sight.

Everything a step raises, ``KeyboardInterrupt`` and ``CancelledError`` included, is thrown into
the body, so its ``with`` blocks (a request's deadline) close and its ``except`` clauses decide,
as they did inline. A Ctrl-C that lands in the driver itself, between a step's return and the
body's resumption, closes the body (``GeneratorExit`` at its ``yield``): its blocks are left at
once, in this thread and context, not when the generator is collected.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, TypeVar

T = TypeVar("T")

#: A call's logic: yields its I/O (called by :func:`run`, awaited by :func:`arun`), returns ``T``.
Steps = Generator[Callable[[], Any], Any, T]


def run(steps: Steps[T]) -> T:
    """Drive ``steps`` synchronously: each step is called and its result sent back (its
    exception thrown in); what the body returns is returned."""
    try:
        step = next(steps)
        while True:
            try:
                result = step()
            except BaseException as e:   # the body's own except clauses decide, as inline
                step = steps.throw(e)
            else:
                step = steps.send(result)
    except StopIteration as done:
        value: T = done.value
        return value
    finally:
        steps.close()   # an interruption between a step and its result leaves no block open


async def arun(steps: Steps[T]) -> T:
    """:func:`run` for an async call: each step returns an awaitable, awaited here."""
    try:
        step = next(steps)
        while True:
            try:
                result = await step()
            except BaseException as e:   # cancellation too: the body's deadline block closes
                step = steps.throw(e)
            else:
                step = steps.send(result)
    except StopIteration as done:
        value: T = done.value
        return value
    finally:
        steps.close()   # an interruption between a step and its result leaves no block open
