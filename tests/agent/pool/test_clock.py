"""Tests of ``hermes_core/agent/pool/clock.py``: the pool's clock does not follow a wall-clock
step (an NTP correction, a VM resumed, a person setting the date)."""

from __future__ import annotations

from hermes_core.agent.credential_pool import backend_from_settings
from hermes_core.agent.pool.clock import STEADY, SteadyClock
from hermes_core.agent.pool.state import InMemoryPoolState, KeySpec, Outcome, PoolPolicy
from hermes_core.config import Settings
from hermes_core.testing import FakeClock


def test_steady_clock_reads_epoch_seconds_and_ignores_wall_steps() -> None:
    fake = FakeClock(100.0, wall_start=1_700_000_000.0)
    steady = SteadyClock(fake.time, fake.monotonic)
    assert steady() == 1_700_000_000.0
    fake.step_wall(-3600.0)
    fake.advance(10.0)
    assert steady() == 1_700_000_010.0
    fake.step_wall(+86_400.0)
    assert steady() == 1_700_000_010.0


def test_a_wall_clock_stepped_back_does_not_hold_a_full_key_for_the_step() -> None:
    """A key whose window is full frees one window later, not one window plus the step: with
    the wall clock as the pool's, an hour's step back kept it out for an hour and a minute."""
    fake = FakeClock(100.0, wall_start=1_700_000_000.0)
    state = InMemoryPoolState(SteadyClock(fake.time, fake.monotonic))
    keys = [KeySpec("a", max_rpm=2)]
    pol = PoolPolicy(window_s=60.0)
    for _ in range(2):
        got = state.acquire("p", keys, pol)
        state.release("p", "a", Outcome("ok"), pol, lease=got.lease)
    refused = state.acquire("p", keys, pol)
    assert refused.fingerprint is None and refused.available_at is not None
    assert refused.available_at - refused.now == 60.0
    fake.step_wall(-3600.0)
    fake.advance(60.0)
    assert state.acquire("p", keys, pol).fingerprint == "a"


def test_the_pools_default_clocks_are_steady() -> None:
    assert InMemoryPoolState()._clock is STEADY
    settings = Settings()
    assert isinstance(backend_from_settings(settings), InMemoryPoolState)
    assert backend_from_settings(settings)._clock is STEADY   # type: ignore[attr-defined]
