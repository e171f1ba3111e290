"""Fixtures for the provider tests: a clock the response deadlines read, stepped by the bodies."""

from __future__ import annotations

import pytest


class StepClock:
    """A monotonic clock that only moves when a test body says so (each trickled chunk)."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


@pytest.fixture
def clock() -> StepClock:
    return StepClock()
