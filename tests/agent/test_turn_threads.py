from __future__ import annotations

import asyncio
import contextvars
import threading

from hermes_core.agent import turn_threads
from hermes_core.agent.turn_threads import run_off_loop

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def test_work_runs_on_a_few_prepare_threads_with_the_callers_context() -> None:
    names: set[str] = set()
    gate = threading.Barrier(min(2, turn_threads.PREPARE_THREADS), timeout=10)

    def work(i: int) -> tuple[int, str]:
        names.add(threading.current_thread().name)
        if i < gate.parties:
            gate.wait()          # the first ones run at the same time: the pool is not one thread
        return i, WHO.get()

    async def main() -> list[tuple[int, str]]:
        WHO.set("caller")
        return await asyncio.gather(*(run_off_loop(work, i) for i in range(64)))

    got = asyncio.run(main())
    assert got == [(i, "caller") for i in range(64)]
    assert all(n.startswith("hermes-prepare") for n in names)
    assert 1 <= len(names) <= turn_threads.PREPARE_THREADS <= 4


def test_an_error_reaches_the_awaiting_caller() -> None:
    def boom() -> None:
        raise ValueError("no prompt today")

    async def main() -> str:
        try:
            await run_off_loop(boom)
        except ValueError as e:
            return str(e)
        return "no error"

    assert asyncio.run(main()) == "no prompt today"
