"""The pool's own clock: epoch seconds that move with the monotonic clock, never with a step of
the wall clock.

Why: every deadline, window entry and recheck in the pool is a time on the backend's clock, and
the wall clock jumps (an NTP step, a VM resumed from a snapshot, a person setting the date).
Stepped back an hour, a key whose window was full stayed out for an hour and a minute (its
entries lay in the future); stepped forward, every cool-down and quarantine ended at once. The
pool only ever needs differences of times, so it reads the wall clock once and advances by the
monotonic clock from there. Redis's shared clock (``TIME``) is another matter: the backend moves
its times onto this one by the offset it sees at each call.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class SteadyClock:
    """``wall()`` as read when made, advanced by ``monotonic()`` since: epoch seconds for
    display and for Redis offsets, immune to steps of the wall clock afterwards."""

    def __init__(self, wall: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._base = wall() - monotonic()

    def __call__(self) -> float:
        return self._base + self._monotonic()


#: The process's pool clock (the default of every pool backend).
STEADY = SteadyClock()
