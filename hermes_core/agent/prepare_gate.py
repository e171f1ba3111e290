"""Where an async turn builds its prompt: on the event loop, or in a worker thread.

A prompt build (file stats, retrieval, memory search, hooks) must not stall an event loop that 64
other requests share, so a costly one goes to a worker thread. A thread hop costs more than a
cheap build, though (a task, a future, a wake-up through the loop's self-pipe, the GIL handed over
and back): under a millisecond, less than one SDK call, a build runs on the loop.

The cost is measured on every build: in a thread by the thread's CPU clock; on the loop by the wall
clock, which also catches a build that blocked on the disk, but which also counts the time the
kernel gave the core to another process. On a busy machine that happens to a cheap build now and
then, and sending the next build to a thread for it costs a hop and teaches nothing (the thread's
build measures cheap again). So one slow build on the loop is not enough: ``STRIKES`` in a row
are (a build that really became costly stalls the loop ``STRIKES`` times, then moves).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: A build that took less than this (thread CPU time, or wall time on the loop) may run on the loop.
INLINE_PREPARE_S = 0.001
#: Consecutive slow builds on the loop before the next goes to a thread (one may be a preemption).
STRIKES = 2


@dataclass(slots=True)
class PrepareGate:
    """One session's record of what its prompt builds cost; decides where the next one runs.
    Pure: the caller measures (its own clocks) and reports."""

    threshold_s: float = INLINE_PREPARE_S
    strikes_needed: int = STRIKES
    #: the cost the decision stands on; inf until a build was measured (the first goes to a thread)
    cost_s: float = math.inf
    strikes: int = 0

    def inline(self, *, hooked: bool = False) -> bool:
        """Whether the next build runs on the event loop. Never with a ``pre_llm_call`` hook: it is
        the caller's code, of unknown cost."""
        return not hooked and self.cost_s < self.threshold_s

    def ran_inline(self, wall_s: float) -> None:
        """A build on the loop took ``wall_s`` (wall clock)."""
        if wall_s < self.threshold_s:
            self.cost_s, self.strikes = wall_s, 0
            return
        self.strikes += 1
        if self.strikes >= self.strikes_needed:
            self.cost_s, self.strikes = wall_s, 0

    def ran_in_thread(self, cpu_s: float) -> None:
        """A build in a worker thread took ``cpu_s`` of that thread's CPU time."""
        self.cost_s, self.strikes = cpu_s, 0
