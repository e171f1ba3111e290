"""Quarantine of a key the provider rejected (401/403/402): pure decisions, both backends.

Why not remove such a key at once: a provider or a proxy run all day answers the odd 401 for a
valid key (an auth backend hiccup, a restart, a clock-skewed token), and removal for good, fleet
wide with Redis, let such a proxy empty the pool over a day. A rejected key is quarantined
instead: its breaker opens until the recheck (``opened_at + breaker_cooldown_s`` is the recheck
time), so exactly one request (the breaker's half-open probe, :mod:`.breaker`) tries it then; a
success restores it, another rejection doubles the wait (:func:`auth_recheck_after`), and the
``auth_max_strikes``-th rejection in a row removes it for good. A revoked key costs a handful of
requests spread over hours, never a stream of them. ``lua_release.RELEASE`` ports
:func:`after_auth_failure`; the parity walk in the Redis tests holds them together.

What a process knows of a key's standing (:class:`Standing`) outlives Redis going away or
restarting empty: the local fallback starts from it, and :func:`merge_standing` (ported by
``lua_recovery.MERGE``) puts it back when the process rejoins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core.agent.pool.breaker import CLOSED, BreakerState, breaker_merge

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


@dataclass(frozen=True, slots=True)
class Standing:
    """A key's standing with its provider as one process knows it: rejections in a row, its
    breaker (open until the recheck while quarantined) and whether it is removed for good."""

    strikes: int = 0
    breaker: BreakerState = CLOSED
    removed: bool = False

    def shifted(self, offset: float) -> Standing:
        """The same standing on a clock ``offset`` seconds ahead (Redis's clock -> local)."""
        if self.breaker.mode == "closed":
            return self
        return Standing(self.strikes, BreakerState(self.breaker.mode, self.breaker.failures,
                                                   self.breaker.opened_at + offset),
                        self.removed)


def merge_standing(a: Standing, b: Standing) -> Standing:
    """Two views of a key's standing as one: what a process learnt while Redis was away (or
    before it restarted empty) and what Redis holds. Removal wins, the most strikes win (the
    next rejection counts from there, so the recheck keeps doubling instead of restarting at a
    minute) and the more cautious breaker wins (:func:`.breaker.breaker_merge`: in the same mode
    the later opening, so the later recheck). Symmetric: neither side is trusted more.

    A key one side saw answer again (strikes back to 0) while the other still holds it
    quarantined stays quarantined: its recheck, due by then, is the one request that restores
    it for both."""
    return Standing(max(a.strikes, b.strikes), breaker_merge(a.breaker, b.breaker),
                    a.removed or b.removed)
