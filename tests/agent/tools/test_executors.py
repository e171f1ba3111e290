"""``agent/tools/executors.py``: an async tool's ``run_in_executor(None, ...)`` work runs as its
call's, on the application's executor, which stays the loop's."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

import pytest

from hermes_core.types import ToolCall


def _printing_in_the_executor(name: str, gate: threading.Barrier | None = None) -> Any:
    """An async tool ``name`` printing from the loop's default executor (waiting at ``gate``
    there first: two calls in the executor at once)."""
    def work() -> None:
        if gate is not None:
            gate.wait()
        print(f"{name} from {threading.current_thread().name.split('_')[0]}")

    async def tool() -> None:   # answered with what it printed
        await asyncio.get_running_loop().run_in_executor(None, work)

    tool.__name__, tool.__doc__ = name, "Works in the loop's executor."
    return tool


def test_a_call_s_executor_work_is_the_call_s_on_the_application_s_executor(
        runner_factory: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """From ``arun`` the loop's default executor copied no context: what a tool's
    ``run_in_executor(None, ...)`` work printed went to the process's stdout, not the call's
    answer, and its read of stdin was not given up. It is now the call's, run on the executor
    the application set (its threads), which is the loop's default again once the calls end;
    work the application submits meanwhile, outside any call, is its own (printed to stdout)."""
    gate = threading.Barrier(2, timeout=10)
    runner = runner_factory([_printing_in_the_executor("first", gate),
                             _printing_in_the_executor("second", gate)])
    mine = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="mine")

    async def turn() -> tuple[Any, ...]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(mine)
        results = await runner.arun([ToolCall("a", "first"), ToolCall("b", "second")])
        own = await loop.run_in_executor(None, lambda: print("the application's") or "own")
        return (*results, own, loop._default_executor is mine)   # type: ignore[attr-defined]

    first, second, own, kept = asyncio.run(turn())
    assert (first.output, second.output) == ("first from mine", "second from mine")
    assert (own, kept, capsys.readouterr().out) == ("own", True, "the application's\n")


def test_the_loop_s_own_default_executor_is_its_default_again_after_the_calls(
        runner_factory: Any) -> None:
    """With no executor set by the application, the loop's own default (the one asyncio made)
    is its default again after the calls, whether they used it or not; ``asyncio.run`` shuts it
    down, as it would have."""
    async def quick() -> str:
        """Answers at once."""
        return "quick"

    runner = runner_factory([quick, _printing_in_the_executor("worker")])

    async def turn(name: str) -> tuple[str, object]:
        (r,) = await runner.arun([ToolCall("c", name)])
        executor = asyncio.get_running_loop()._default_executor   # type: ignore[attr-defined]
        return r.output, type(executor)

    plain = concurrent.futures.ThreadPoolExecutor
    assert asyncio.run(turn("quick")) == ("quick", plain)
    assert asyncio.run(turn("worker")) == ("worker from asyncio", plain)
