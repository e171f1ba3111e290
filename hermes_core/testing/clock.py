"""A fake clock for tests of code that takes an injectable clock, sleep or async sleep.

Why one class: decision logic in hermes_core takes its clock as an argument (``clock=``,
``sleep=``, ``asleep=``), so a test can run hours of cool-downs and back-offs instantly. One
clock that every test shares keeps those doubles from drifting apart.

``FakeClock`` never reads the real time. ``sleep`` and ``asleep`` advance it and record how long
was asked for; ``advance`` moves it without recording; the ``t`` attribute can also be set or
incremented directly. It is safe to share between threads.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime

DEFAULT_START = 1_000_000.0
DEFAULT_WALL_START = 1_700_000_000.0


class FakeClock:
    """Monotonic and wall time that only move when told to.

    ``clock.monotonic`` (also ``clock()``), ``clock.time``, ``clock.sleep`` and ``clock.asleep``
    can each be handed to code in place of ``time.monotonic``, ``time.time``, ``time.sleep`` and
    ``asyncio.sleep``; ``clock.now`` where a clock gives a datetime. Wall time moves in step with
    monotonic time from ``wall_start``.
    """

    def __init__(self, start: float = DEFAULT_START, *, wall_start: float = DEFAULT_WALL_START) -> None:
        self._lock = threading.Lock()
        self._start = float(start)
        self._t = float(start)
        self._wall_start = float(wall_start)
        self.sleeps: list[float] = []

    @property
    def t(self) -> float:
        """The current monotonic reading; assign or ``+=`` to move the clock."""
        with self._lock:
            return self._t

    @t.setter
    def t(self, value: float) -> None:
        with self._lock:
            self._t = float(value)

    def monotonic(self) -> float:
        with self._lock:
            return self._t

    def __call__(self) -> float:
        return self.monotonic()

    def time(self) -> float:
        """Wall-clock seconds since the epoch, moving with the monotonic reading."""
        with self._lock:
            return self._wall_start + (self._t - self._start)

    def now(self) -> datetime:
        """The wall time as an aware UTC datetime: the clock a ``PromptBuilder`` takes
        (``PromptBuilder(home, settings, clock=clock.now)``), so a prompt's date line holds still
        in a test and moves only when the clock does."""
        return datetime.fromtimestamp(self.time(), UTC)

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` (never backward) and return the new reading."""
        with self._lock:
            self._t += max(0.0, float(seconds))
            return self._t

    def step_wall(self, seconds: float) -> None:
        """Step the wall clock alone by ``seconds`` (either way), as an NTP step or a person
        setting the date does; the monotonic reading does not move."""
        with self._lock:
            self._wall_start += float(seconds)

    def sleep(self, seconds: float) -> None:
        """Record the request and advance; returns at once. A negative request advances nothing."""
        with self._lock:
            self.sleeps.append(seconds)
            self._t += max(0.0, float(seconds))

    async def asleep(self, seconds: float) -> None:
        """``sleep`` for coroutines: advances, then yields to the event loop once, as a real
        ``asyncio.sleep`` would."""
        self.sleep(seconds)
        await asyncio.sleep(0)

    def __repr__(self) -> str:
        return f"FakeClock(t={self.t!r}, sleeps={len(self.sleeps)})"
