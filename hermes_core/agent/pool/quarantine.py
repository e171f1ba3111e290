"""Quarantine of a key the provider rejected (401/403/402): pure decisions, both backends.

Why not remove such a key at once: a provider or a proxy run all day answers the odd 401 for a
valid key (an auth backend hiccup, a restart, a clock-skewed token), and removal for good, fleet
wide with Redis, let such a proxy empty the pool over a day. A rejected key is quarantined
instead: its breaker opens until the recheck (``opened_at + breaker_cooldown_s`` is the recheck
time), so exactly one request (the breaker's half-open probe, :mod:`.breaker`) tries it then; a
success restores it, another rejection doubles the wait (:func:`auth_recheck_after`), and the
``auth_max_strikes``-th rejection in a row removes it for good. A revoked key costs a handful of
requests spread over hours, never a stream of them. ``redis_lua.RELEASE`` ports
:func:`after_auth_failure`; the parity walk in the Redis tests holds them together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.agent.pool.breaker import BreakerState

if TYPE_CHECKING:
    from hermes_core.agent.pool.state import PoolPolicy


def auth_recheck_after(strikes: int, policy: PoolPolicy) -> float:
    """How long a key rejected ``strikes`` times in a row waits for its recheck: doubling from
    ``auth_recheck_s``, at most ``auth_recheck_max_s``."""
    if strikes <= 1:
        return min(policy.auth_recheck_s, policy.auth_recheck_max_s)
    # 2 ** 1024 overflows a float: past the cap long before that
    return min(policy.auth_recheck_max_s, policy.auth_recheck_s * 2.0 ** min(strikes - 1, 64))


def after_auth_failure(strikes: int, removed: bool, breaker: BreakerState, now: float,
                       probe: bool, policy: PoolPolicy) -> tuple[int, bool, BreakerState, bool]:
    """A key's (strikes, removed, breaker, changed) after the provider rejected it (401/403/402).

    A rejection of a request sent before the quarantine (not the probe) is the same news again:
    no second strike."""
    if removed:
        return strikes, True, breaker, False
    if strikes > 0 and not probe:
        return strikes, False, breaker, False
    strikes += 1
    if strikes >= policy.auth_max_strikes:
        return strikes, True, breaker, True
    recheck = now + auth_recheck_after(strikes, policy)
    return (strikes, False,
            BreakerState("open", breaker.failures, recheck - policy.breaker_cooldown_s), True)


def quarantine_recheck(strikes: int, removed: bool, breaker: BreakerState,
                       policy: PoolPolicy) -> float | None:
    """When a quarantined key's single recheck may go (None: not quarantined, or its recheck
    is out now)."""
    if removed or strikes <= 0 or breaker.mode != "open":
        return None
    return breaker.opened_at + policy.breaker_cooldown_s
