"""Probing a learned request limit upward again (pure decisions, both backends).

A key whose server states no limit learns one from its 429s (:func:`.state.learned_after`), and
that only ever lowered it: a transient 429, or another client's burst on the same key, held the
key below its real limit for good, and a server that raised its limit was never taken up on it.
Here a learned limit the key is at rises again, by one at a time, on two clocks:

* up to the most successes a window has been seen to admit (``proven``): one per window without
  a 429. A fixed limit admitted that many, so these raises cost nothing against it;
* past ``proven``: only after :data:`PROBE_WINDOWS` windows without a 429, twice as long after
  each probe the server refuses (up to :data:`PROBE_MAX_WINDOWS`); a probe a window admitted
  whole goes on climbing, one per window, until a 429. Against a fixed limit each probe costs
  one refused request (at 30, 90, 210, ... windows); a limit that went up is found.

A refused raise within ``proven`` says the limit came down since: ``proven`` drops to what the
429 taught. A limit a server stated is never probed (it said what it is).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

#: Windows without a 429 before a learned limit is probed past what a window admitted.
PROBE_WINDOWS = 30
PROBE_MAX_WINDOWS = 960


@dataclass(frozen=True, slots=True)
class LimitProbe:
    """A key's upward probe of a learned limit. ``proven``: the most successes seen inside one
    window (sent after ``count_from`` and answered within a window of it: the server admitted
    them inside one of its windows); ``since``: the last 429 or raise; ``backoff``: windows
    without a 429 before a raise past ``proven``; ``raised``: the limit was raised since the
    last 429."""

    proven: int = 0
    since: float = 0.0
    backoff: int = PROBE_WINDOWS
    raised: bool = False
    count_from: float = -math.inf
    counted: int = 0


def probe_raise(learned: int, probe: LimitProbe, now: float,
                window_s: float) -> tuple[int, LimitProbe] | None:
    """A learned limit the key is at: one higher, or None while it must hold (see
    :data:`PROBE_WINDOWS`)."""
    quiet = now - probe.since
    if (learned < probe.proven and quiet >= window_s) or quiet >= probe.backoff * window_s:
        return learned + 1, replace(probe, since=now, raised=True)
    return None


def probe_after_success(probe: LimitProbe, sent_at: float, now: float, window_s: float,
                        learned: int | None) -> LimitProbe:
    """Count a success into ``proven``; once a window admitted a raised limit whole, the next
    raise waits one window only."""
    if probe.count_from <= sent_at and now < probe.count_from + window_s:
        start, counted = probe.count_from, probe.counted + 1
    elif now - sent_at < window_s:
        start, counted = sent_at, 1
    else:
        return probe
    proven = max(probe.proven, counted)
    # a window admitted a raised limit whole, more than any before: the limit went up, climb on
    # one per window
    backoff = (1 if learned is not None and probe.raised and counted >= learned > probe.proven
               else probe.backoff)
    return replace(probe, count_from=start, counted=counted, proven=proven, backoff=backoff)


def probe_after_429(probe: LimitProbe, before: int | None, after: int | None,
                    now: float) -> LimitProbe:
    """A 429 the key's learned limit counts (``before`` -> ``after``). A raise it refuses: back
    within ``proven``, the limit came down since that window (``proven`` drops to ``after``);
    past it, the next probe waits twice as long."""
    if not probe.raised:
        return replace(probe, since=now)
    if before is not None and before <= probe.proven:
        return replace(probe, since=now, raised=False,
                       proven=min(probe.proven, after if after is not None else probe.proven))
    return replace(probe, since=now, raised=False,
                   backoff=min(PROBE_MAX_WINDOWS, max(PROBE_WINDOWS, probe.backoff * 2)))
