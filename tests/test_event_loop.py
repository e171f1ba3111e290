"""Tests of ``hermes_core/event_loop.py``: whether the calling thread runs an event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hermes_core.event_loop import on_event_loop


def test_on_event_loop_is_true_inside_a_running_loop_only() -> None:
    async def inside() -> bool:
        return on_event_loop()

    assert asyncio.run(inside()) is True
    assert on_event_loop() is False


def test_a_child_forked_from_a_coroutine_runs_no_loop_and_starts_its_own(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A coroutine forks (a fork-started multiprocessing pool made inside ``async def``): the
    child runs the worker's function, not the parent's loop, which Python 3.11 still named as
    running there, so every line of the worker was taken as written from an event loop, and
    ``asyncio.run`` refused to start a loop of its own."""
    async def work() -> int:
        return 42

    def child() -> object:
        return on_event_loop(), asyncio.run(work())

    async def fork_here() -> object:
        return in_forked_child(child)

    assert asyncio.run(fork_here()) == (False, 42)
