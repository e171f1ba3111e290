"""Tests of ``hermes_core/agent/pool/probe.py``: a learned limit is raised back to what a window
admitted for free, and past it only after long quiet spells, on both backends."""

from __future__ import annotations

import pytest

from hermes_core.agent.pool.probe import (
    PROBE_MAX_WINDOWS,
    PROBE_WINDOWS,
    LimitProbe,
    probe_after_429,
    probe_after_success,
    probe_raise,
)
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy, PoolStateBackend
from hermes_core.testing import FakeClock

W = 10.0


@pytest.mark.parametrize(("learned", "probe", "now", "raised_to"), [
    (2, LimitProbe(proven=5, since=100.0), 109.0, None),     # a window has not passed
    (2, LimitProbe(proven=5, since=100.0), 110.0, 3),        # back toward what was admitted
    (5, LimitProbe(proven=5, since=100.0), 110.0, None),     # past it: a long quiet spell first
    (5, LimitProbe(proven=5, since=100.0), 100.0 + PROBE_WINDOWS * W, 6),
    (5, LimitProbe(proven=5, since=100.0, backoff=60), 100.0 + PROBE_WINDOWS * W, None),
    (7, LimitProbe(proven=7, since=100.0, backoff=1, raised=True), 110.0, 8),   # climbing on
])
def test_probe_raise(learned: int, probe: LimitProbe, now: float, raised_to: int | None) -> None:
    got = probe_raise(learned, probe, now, W)
    assert (got[0] if got else None) == raised_to
    if got is not None:
        assert got[1].since == now and got[1].raised


def test_probe_after_success_counts_what_one_window_admitted() -> None:
    p = LimitProbe()
    for i in range(4):                                   # sent and answered inside one window
        p = probe_after_success(p, 100.0 + i, 100.5 + i, W, 5)
    assert (p.proven, p.counted, p.count_from) == (4, 4, 100.0)
    p = probe_after_success(p, 103.5, 110.2, W, 5)       # answered past that window: a new count
    assert (p.proven, p.counted, p.count_from) == (4, 1, 103.5)
    assert probe_after_success(p, 90.0, 110.5, W, 5) == p   # in flight longer than a window
    raised = LimitProbe(proven=5, raised=True, count_from=200.0, counted=5)
    assert probe_after_success(raised, 201.0, 202.0, W, 6).backoff == 1   # 6 > 5 admitted: climb
    assert probe_after_success(raised, 201.0, 202.0, W, 4).backoff == PROBE_WINDOWS


@pytest.mark.parametrize(("probe", "before", "after", "expected"), [
    (LimitProbe(proven=5), 5, 2, LimitProbe(proven=5, since=50.0)),     # a cut: proven kept
    (LimitProbe(proven=5, raised=True), 4, 3,
     LimitProbe(proven=3, since=50.0)),                                  # came down since
    (LimitProbe(proven=5, raised=True), 6, 5,
     LimitProbe(proven=5, since=50.0, backoff=2 * PROBE_WINDOWS)),       # probe refused
    (LimitProbe(proven=5, raised=True, backoff=1), 9, 8,
     LimitProbe(proven=5, since=50.0, backoff=PROBE_WINDOWS)),
    (LimitProbe(proven=5, raised=True, backoff=PROBE_MAX_WINDOWS), 6, 5,
     LimitProbe(proven=5, since=50.0, backoff=PROBE_MAX_WINDOWS)),
])
def test_probe_after_429(probe: LimitProbe, before: int, after: int,
                         expected: LimitProbe) -> None:
    assert probe_after_429(probe, before, after, 50.0) == expected


def _run(backend: PoolStateBackend, clock: FakeClock, server_limit: dict[float, int],
         transient_at: float, until: float) -> tuple[list[float], list[int]]:
    """A headerless server with a sliding window of ``server_limit`` (from each time on) per W:
    every W seconds the callers send until the pool refuses; at ``transient_at`` the server
    refuses the third request of the round though it has room. Returns when it refused (round
    times) and the learned limit after each round."""
    keys = [KeySpec("a")]
    pol = PoolPolicy(learn_limits=True, window_s=W, max_in_flight=64)
    admitted: list[float] = []
    refused: list[float] = []
    learned: list[int] = []
    start = clock.t
    for k in range(int(until / W)):
        t = start + k * W
        clock.t = t
        limit = [v for at, v in sorted(server_limit.items()) if at <= k * W][-1]
        sent = 0
        while True:
            r = backend.acquire("p", keys, pol)
            if r.fingerprint is None:
                break
            sent += 1
            admitted = [a for a in admitted if a > t - W]
            if len(admitted) >= limit or (k * W == transient_at and sent == 3):
                refused.append(k * W)
                backend.release("p", "a", Outcome("rate_limited", 0.0), pol, lease=r.lease)
            else:
                admitted.append(t)
                backend.release("p", "a", Outcome("ok"), pol, lease=r.lease)
            assert sent < 50
        lr = backend.snapshot("p", keys, pol).keys[0].learned_rpm
        learned.append(lr if lr is not None else 0)
    return refused, learned


def test_a_transient_429_is_recovered_for_free_and_a_fixed_limit_pays_one_429_per_probe(
        clocked_backend: tuple[PoolStateBackend, FakeClock]) -> None:
    """Server limit 5 per window, fixed. The pool learns 5 from its first 429. A transient 429
    at the third request of a round teaches 2; the limit climbs back one per window to 5 with
    no request refused (a window admitted 5). Past 5 it probes once after 30 quiet windows (one
    refusal, back to 5), then waits twice as long."""
    backend, clock = clocked_backend
    refused, learned = _run(backend, clock, {0.0: 5}, transient_at=100.0, until=1100.0)
    assert learned[0] == 5 and learned[10] == 2
    assert learned[11:14] == [3, 4, 5]
    probe_at = 130.0 + PROBE_WINDOWS * W
    assert refused == [0.0, 100.0, probe_at, probe_at + 2 * PROBE_WINDOWS * W]
    assert set(learned[14:]) == {5}


def test_a_limit_the_server_raised_is_found(
        clocked_backend: tuple[PoolStateBackend, FakeClock]) -> None:
    """The server goes from 5 to 8 per window: the probe after 30 quiet windows is admitted, the
    pool climbs one per window and stops at the 429 that says 8."""
    backend, clock = clocked_backend
    refused, learned = _run(backend, clock, {0.0: 5, 50.0: 8}, transient_at=-1.0, until=400.0)
    assert learned[0] == 5 and set(learned[1:30]) == {5}
    assert learned[30:35] == [6, 7, 8, 8, 8]
    assert refused == [0.0, 330.0]
    assert learned[-1] == 8


def test_a_stated_limit_is_never_probed(
        clocked_backend: tuple[PoolStateBackend, FakeClock]) -> None:
    backend, clock = clocked_backend
    keys = [KeySpec("a")]
    pol = PoolPolicy(learn_limits=True, window_s=W, max_in_flight=64)
    for k in range(40):
        clock.t = 1000.0 + k * W
        sent = 0
        while (r := backend.acquire("p", keys, pol)).fingerprint is not None:
            sent += 1
            backend.release("p", "a", Outcome("ok", limit=3), pol, lease=r.lease)
        assert sent <= 3
    assert backend.snapshot("p", keys, pol).keys[0].learned_rpm == 3
