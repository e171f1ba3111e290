"""The default executor an async tool's ``run_in_executor(None, ...)`` reaches, running a call's
work in the call's context.

``loop.run_in_executor(None, f)`` is asyncio's idiom for a blocking call (an ``input()``, a file
read). Unlike ``asyncio.to_thread`` it copies no context, so ``f`` ran as no call's: a question it
printed went to the process's stdout, and its read of stdin (:mod:`printed`) was not given up when
the call timed out; it took the chat's next line, and ``asyncio.run`` waited for it at its end.

Two loops run an async tool. From sync code (``ToolRunner.run``) it gets a loop of its own
(:func:`run_own_loop`), whose default executor is a :class:`CallContextExecutor`. From ``arun``
it runs on the caller's loop, whose default executor is the application's: while a call's task
runs there, :func:`borrow` puts a :class:`StandIn` in its place, which hands a submission made in
a live call to the application's executor in a copy of the call's context and every other
submission unchanged; when the loop's last such task ends, the application's executor is the
loop's default again (none, if it had none and nothing was submitted: the loop makes one when it
is first asked, as before). No thread is the stand-in's own.

Not covered: a thread the tool starts itself (``threading.Thread(target=input)``) begins with an
empty context, as Python makes every thread; a tool's own executor (``run_in_executor(pool,
...)``) is the tool's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from hermes_core.agent.tools.printed import in_call

T = TypeVar("T")


class CallContextExecutor(concurrent.futures.ThreadPoolExecutor):
    """The default executor of a loop of the runner's own: each function in a copy of the
    submitter's context, as ``asyncio.to_thread`` does. Every submission to it is a call's."""

    def submit(self, fn: Callable[..., Any], /, *args: Any,
               **kwargs: Any) -> concurrent.futures.Future[Any]:
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)


def run_own_loop(coro: Coroutine[Any, Any, T]) -> T:
    """``coro`` run to its end on a new loop in this thread (what ``asyncio.run`` does), its
    default executor a :class:`CallContextExecutor`."""
    with asyncio.Runner() as runner:
        runner.get_loop().set_default_executor(CallContextExecutor(thread_name_prefix="asyncio"))
        return runner.run(coro)


#: A loop whose default executor cannot be read (not asyncio's own event loop): left alone.
_UNKNOWN = object()


class StandIn(concurrent.futures.ThreadPoolExecutor):
    """A loop's default executor while tool calls run on it: a submission made in a live call
    (:func:`printed.in_call`) runs on ``inner`` in a copy of the submitter's context; any other
    goes to ``inner`` as it came. ``inner``: the application's default executor, or None when
    the loop had none yet: then one is made as the loop would make it, at the first
    submission. Used from the loop's thread only (asyncio's loops are not thread-safe)."""

    def __init__(self, loop: asyncio.AbstractEventLoop,
                 inner: concurrent.futures.ThreadPoolExecutor | None) -> None:
        super().__init__(max_workers=1)   # its own pool is never used: it starts no thread
        self.loop = loop
        self.inner = inner
        self.users = 0   # the call tasks running on ``loop`` that borrowed it

    def _target(self) -> concurrent.futures.ThreadPoolExecutor:
        if self.inner is None:
            self.inner = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="asyncio")
        return self.inner

    def submit(self, fn: Callable[..., Any], /, *args: Any,
               **kwargs: Any) -> concurrent.futures.Future[Any]:
        if in_call():
            return self._target().submit(contextvars.copy_context().run, fn, *args, **kwargs)
        return self._target().submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self.inner is not None:
            self.inner.shutdown(wait=wait, cancel_futures=cancel_futures)


def borrow(loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Make ``loop``'s default executor a :class:`StandIn` (or count one more user of the one
    in place); returns what gives it back, to be called once, when the call's task has ended."""
    current = getattr(loop, "_default_executor", _UNKNOWN)
    if isinstance(current, StandIn) and current.loop is loop:
        stand_in = current
    elif current is None or isinstance(current, concurrent.futures.ThreadPoolExecutor):
        stand_in = StandIn(loop, current)
        loop.set_default_executor(stand_in)
    else:
        return _nothing
    stand_in.users += 1

    def give_back() -> None:
        stand_in.users -= 1
        if stand_in.users or getattr(loop, "_default_executor", None) is not stand_in:
            return   # another call still runs, or the application set its own meanwhile
        loop._default_executor = stand_in.inner   # type: ignore[attr-defined]

    return give_back


def _nothing() -> None:
    pass
