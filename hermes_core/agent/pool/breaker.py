"""Circuit breaker as a pure state machine.

A breaker exists per key and per provider. It is data (:class:`BreakerState`) plus pure
transition functions taking ``now``, so the in-memory backend, a Redis Lua script and the tests
all share one definition of the arithmetic:

* ``closed``: calls flow; each retryable failure (5xx, 529, timeout, connection error) bumps
  ``failures``; a success resets it. Reaching ``threshold`` opens the breaker.
* ``open``: no calls until ``opened_at + cooldown``. The first caller after that becomes the one
  half-open probe.
* ``half_open``: exactly one probe is in flight; every other caller is refused. The probe's success
  closes the breaker, its failure re-opens it for another cool-down.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

BreakerMode = Literal["closed", "open", "half_open"]


@dataclass(frozen=True, slots=True)
class BreakerState:
    mode: BreakerMode = "closed"
    failures: int = 0
    opened_at: float = 0.0


CLOSED = BreakerState()


@dataclass(frozen=True, slots=True)
class BreakerCheck:
    """The answer to "may I call now?": ``allowed``, whether this call is the probe, the new state,
    and (when refused) the earliest time worth asking again."""

    allowed: bool
    probe: bool
    state: BreakerState
    retry_at: float | None = None


def breaker_check(state: BreakerState, now: float, cooldown: float) -> BreakerCheck:
    """Decide whether a call may go through; an elapsed open breaker hands out one probe."""
    if state.mode == "closed":
        return BreakerCheck(True, False, state)
    if state.mode == "open":
        reopen = state.opened_at + cooldown
        if now >= reopen:
            return BreakerCheck(True, True, replace(state, mode="half_open", opened_at=now))
        return BreakerCheck(False, False, state, reopen)
    # half_open: the single probe is out. If it never reported back (crashed caller), hand out a
    # new probe after another cool-down so the key is not stranded forever.
    stale = state.opened_at + cooldown
    if now >= stale:
        return BreakerCheck(True, True, replace(state, opened_at=now))
    return BreakerCheck(False, False, state, stale)


def breaker_success(state: BreakerState) -> BreakerState:
    """A call succeeded: the breaker closes and forgets earlier failures."""
    return CLOSED if state != CLOSED else state


def breaker_failure(state: BreakerState, now: float, threshold: int) -> BreakerState:
    """A retryable failure: count it; open at ``threshold``; a failed probe re-opens at once."""
    if state.mode == "half_open":
        return BreakerState("open", state.failures + 1, now)
    if state.mode == "open":
        return state
    failures = state.failures + 1
    if failures >= threshold:
        return BreakerState("open", failures, now)
    return BreakerState("closed", failures, state.opened_at)


_CAUTION = {"closed": 0, "half_open": 1, "open": 2}


def breaker_merge(a: BreakerState, b: BreakerState) -> BreakerState:
    """Two views of one breaker as one (the local fallback's and Redis's after an outage): the
    more cautious mode wins (open > half_open > closed); in the same mode, the later opening and
    the most failures. Like a deadline, a merged breaker only ever stays out longer."""
    if _CAUTION[a.mode] != _CAUTION[b.mode]:
        return a if _CAUTION[a.mode] > _CAUTION[b.mode] else b
    return BreakerState(a.mode, max(a.failures, b.failures), max(a.opened_at, b.opened_at))
