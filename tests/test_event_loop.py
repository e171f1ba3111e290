"""Tests of ``hermes_core/event_loop.py``: whether the calling thread runs an event loop."""

from __future__ import annotations

import asyncio

from hermes_core.event_loop import on_event_loop


def test_on_event_loop_is_true_inside_a_running_loop_only() -> None:
    async def inside() -> bool:
        return on_event_loop()

    assert asyncio.run(inside()) is True
    assert on_event_loop() is False
