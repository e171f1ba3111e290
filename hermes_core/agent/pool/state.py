"""The credential pool's state: pure decision functions and the state-backend seam.

Everything that must be shared between agent processes lives behind
:class:`PoolStateBackend`: blocked-until deadlines, removed keys, per-key request windows (RPM and
TPM), in-flight counts, breaker states and the round-robin cursor. The seam is shaped so that one
acquire is ONE backend call (:meth:`PoolStateBackend.acquire` checks breakers and deadlines, picks a
key, takes from its window and bumps its in-flight count atomically) and one outcome is ONE call
(:meth:`PoolStateBackend.release`). A Redis backend implements the same two calls as Lua scripts
using Redis ``TIME``; :class:`InMemoryPoolState` is the default, guarded by one lock.

The arithmetic (eligibility, cooldown deadlines, strategy choice, window free times) is in pure
functions below, with ``now`` and the random draw passed in, so both backends and the table tests
share one definition.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from hermes_core.agent.pool.breaker import (
    CLOSED,
    BreakerState,
    breaker_check,
    breaker_failure,
    breaker_success,
)
from hermes_core.agent.pool.clock import STEADY
from hermes_core.agent.pool.probe import (
    LimitProbe,
    probe_after_429,
    probe_after_success,
    probe_raise,
)
from hermes_core.agent.pool.quarantine import after_auth_failure, quarantine_recheck
from hermes_core.agent.pool.window import SlidingWindow
from hermes_core.forked import renew_in_child

Strategy = Literal["round_robin", "least_loaded", "fill_first", "random"]
STRATEGIES: tuple[Strategy, ...] = ("round_robin", "least_loaded", "fill_first", "random")
OutcomeKind = Literal["ok", "rate_limited", "removed", "failure", "released"]

#: The longest a 429 blocks a key before one request checks it again (a quarter hour). Retry-After
#: values of hours, weeks or years (or an overflowing "1e400" parsed as infinity) come from
#: quota-exhaustion pages and from proxies that lie: trusted up to a day, one such header took a
#: sole key out of a chat for a day. A key still exhausted answers 429 again, which is not billed
#: and costs one round trip a quarter hour (96 a day, shared by every process through Redis).
MAX_COOLDOWN_S = 900.0

#: The largest request limit per window a key is taken to have. A header stating more (a proxy's
#: ``x-ratelimit-limit-requests: 1`` followed by 400 zeros) means "no practical limit": kept as
#: is it overflowed the pacer's float arithmetic and came back from Lua as ``1e+20`` or ``inf``.
MAX_LIMIT = 1_000_000_000


# --------------------------------------------------------------------------- value types

@dataclass(frozen=True, slots=True)
class KeySpec:
    """What the state needs to know about a key: never the secret, only its fingerprint."""

    fingerprint: str
    weight: float = 1.0
    max_rpm: int | None = None
    max_tpm: int | None = None


@dataclass(frozen=True, slots=True)
class PoolPolicy:
    """Knobs every backend applies identically (from ``credential_pool`` settings)."""

    strategy: Strategy = "round_robin"
    window_s: float = 60.0            # the sliding RPM/TPM window; benchmarks scale it down
    breaker_failures: int = 5
    breaker_cooldown_s: float = 30.0
    default_cooldown_s: float = 60.0  # a 429 without any Retry-After signal
    # share of a key's per-window limit that may go out back to back; the rest is paced evenly
    # across the window (1.0: no pacing, only the sliding window)
    burst: float = 1.0
    # requests in flight per key at most (None: no cap); what bounds a key whose limit is unknown
    max_in_flight: int | None = None
    # a key without max_rpm takes the limit its 429s reveal (see learn_limit)
    learn_limits: bool = False
    # a key the provider rejects (401/403/402) is quarantined, not dropped: one request rechecks
    # it after auth_recheck_s, twice as long after each rejected recheck (at most
    # auth_recheck_max_s); the auth_max_strikes-th rejection in a row removes it for good
    # (1: the first does). See after_auth_failure.
    auth_recheck_s: float = 60.0
    auth_recheck_max_s: float = 3600.0
    auth_max_strikes: int = 8
    # how long the request asking may run at most (what is left of its deadline; None: unknown,
    # a caller's own acquire): a lease a shared backend keeps outlives it by LEASE_MARGIN_S, not
    # by the backend's whole lease TTL, so a killed process's slots free when its requests would
    # have ended anyway
    hold_s: float | None = None


#: how long a lease outlives the longest its request may run (its release a moment after)
LEASE_MARGIN_S = 30.0


def lease_ttl(ttl: float, hold_s: float | None) -> float:
    """The lease a request gets: the backend's ``ttl``, or, when the request runs at most
    ``hold_s`` (:attr:`PoolPolicy.hold_s`), that and :data:`LEASE_MARGIN_S` if shorter."""
    if hold_s is None or not math.isfinite(hold_s):
        return ttl
    return min(ttl, max(0.0, hold_s) + LEASE_MARGIN_S)


@dataclass(frozen=True, slots=True)
class AcquireResult:
    """Either the chosen key's fingerprint, or (None) when the earliest key frees.

    ``available_at`` is None with no fingerprint when no key can ever serve (none configured or
    all removed). ``probe`` marks a half-open breaker's single probe call.
    """

    fingerprint: str | None
    available_at: float | None = None
    probe: bool = False
    now: float = 0.0
    lease: str = ""     # names this request to its release (re-stamps its window entry)
    # the earliest recheck of a key quarantined after an auth rejection (None: none is): such a
    # key is not waited for (available_at leaves it out), yet the provider is not out of keys
    recheck_at: float | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a call with an acquired key ended; ``retry_after`` only for ``rate_limited``.

    ``probe`` is True when the call was a half-open breaker's probe (``AcquireResult.probe``):
    only the probe ending without a health signal frees the probe slot. A call that was already in
    flight when the breaker opened must not, or a second probe would go out beside the first.
    """

    kind: OutcomeKind
    retry_after: float | None = None
    probe: bool = False
    # the key's request limit per window as the answer stated it (``x-ratelimit-limit-requests``,
    # on a 200 or a 429); None: a 429 teaches how many requests the window held when refused
    limit: int | None = None
    # what the answer said remains of that limit, and in how many seconds more frees: a 200 with
    # nothing remaining blocks the key until then, as the 429 it spares would have
    remaining: int | None = None
    reset_s: float | None = None


@dataclass(frozen=True, slots=True)
class RateLimitInfo:
    """A response's statement of a key's request limit: the limit per window, what remains of it
    and the seconds until more frees (each None when the response did not say)."""

    limit: int | None = None
    remaining: int | None = None
    reset_s: float | None = None


@dataclass(frozen=True, slots=True)
class ReleaseResult:
    """``changed`` is True when this release quarantined or removed the key (so it alerts once)
    or moved its deadline; ``blocked_until`` is the key's deadline after the release.
    ``removed``: the key is out for good; ``recheck_at``: this release quarantined it, to be
    rechecked then; ``restored``: a success lifted its quarantine."""

    changed: bool
    blocked_until: float
    removed: bool = False
    recheck_at: float | None = None
    restored: bool = False


@dataclass(frozen=True, slots=True)
class KeySnapshot:
    fingerprint: str
    removed: bool = False
    blocked_until: float = 0.0
    in_flight: int = 0
    requests_in_window: int = 0
    tokens_in_window: int = 0
    breaker: BreakerState = CLOSED
    learned_rpm: int | None = None
    auth_strikes: int = 0     # rejections in a row (quarantined while > 0 and not removed)


@dataclass(frozen=True, slots=True)
class ProviderSnapshot:
    provider: str
    now: float
    breaker: BreakerState
    keys: tuple[KeySnapshot, ...]


# --------------------------------------------------------------------------- pure decisions

def sane_limit(limit: int | None) -> int | None:
    """A stated request limit made safe to store: None (unsaid) for none, zero or negative, and
    at most :data:`MAX_LIMIT`."""
    if limit is None or limit <= 0:
        return None
    return min(limit, MAX_LIMIT)


def sane_retry_after(retry_after: float | None) -> float | None:
    """A server's Retry-After made safe to add to a clock: None (no signal) stays None, so does
    NaN; negative is 0; anything above :data:`MAX_COOLDOWN_S` (infinity included) is capped."""
    if retry_after is None or math.isnan(retry_after):
        return None
    return min(MAX_COOLDOWN_S, max(0.0, float(retry_after)))


def cooldown_until(current: float, now: float, retry_after: float | None, default: float) -> float:
    """A 429's new "blocked until": the deadline only ever moves later, and at most
    :data:`MAX_COOLDOWN_S` ahead (see :func:`sane_retry_after`)."""
    sane = sane_retry_after(retry_after)
    wait = default if sane is None else sane
    return max(current, now + wait)


def window_free_at(entries: Sequence[tuple[float, int]], limit: int | None,
                   window_s: float) -> float | None:
    """When a request slot frees in a sliding window of ``(time, tokens)`` entries (ascending,
    already pruned to the window), or None when a slot is free now. O(1) on a deque's ends."""
    if limit is None or len(entries) < limit:
        return None
    return entries[len(entries) - limit][0] + window_s


def tokens_free_at(entries: Sequence[tuple[float, int]], limit: int | None, need: int,
                   window_s: float) -> float | None:
    """When ``need`` more tokens fit under ``limit`` in the window; None when they fit now.

    A single request larger than the whole limit is let through on an empty window rather than
    blocking the key forever."""
    if limit is None:
        return None
    if isinstance(entries, SlidingWindow):
        return entries.tokens_free_at(limit, need, window_s)
    used = sum(t for _, t in entries)
    if used + need <= limit or not entries:
        return None
    for ts, tok in entries:
        used -= tok
        if used + need <= limit:
            return ts + window_s
    return entries[-1][0] + window_s


def pace_free_at(tat: float, now: float, limit: int | None, window_s: float,
                 burst: float) -> float | None:
    """When the pacer lets the next request out (GCRA), or None when it may go now.

    ``tat`` is the key's theoretical arrival time: each request pushes it ``window_s / limit``
    further. Up to ``ceil(limit * burst)`` requests may go back to back; the rest are spaced
    evenly, so the server's window never sees the whole budget land at its edge."""
    if limit is None or limit <= 0 or burst >= 1.0:
        return None
    interval = window_s / limit
    tolerance = (max(1, math.ceil(limit * burst)) - 1) * interval
    at = tat - tolerance
    return None if now >= at else at


def pace_after(tat: float, now: float, limit: int | None, window_s: float) -> float:
    """The pacer's state after a request is let out at ``now``."""
    if limit is None or limit <= 0:
        return tat
    return max(tat, now) + window_s / limit


def learn_limit(admitted_in_window: int, stated: int | None) -> int | None:
    """A key's request limit per window after a 429: what the server stated, else what the key
    sent in the refused request's window besides refused ones (:func:`sent_in_window`). None
    when that is nothing: a server refusing a key that sent nothing else in the window has its
    budget spent elsewhere (another client of the same key, a quota), and a limit of one per
    window learned from it would hold the key to a crawl, never to rise. Each 429 learns again."""
    if stated is not None and stated > 0:
        return stated
    return admitted_in_window if admitted_in_window > 0 else None


def sent_in_window(sends: Sequence[tuple[float, str]], refused: str,
                   window_s: float) -> int | None:
    """How many other requests of a key went out in the window ending at the send time of the
    one ``refused`` names, refused ones already taken out: at most what a server that states no
    limit admits. ``sends`` are (send time, lease) in send order. Requests still in flight count:
    those that reached the server first were admitted, and those that come back refused too leave
    ``sends`` and lower the next 429's count; by the burst's last 429 the count is exactly what
    the server admitted, whatever order the requests arrived in. None when ``refused`` is not
    among them."""
    at = None
    for t, lease in reversed(sends):
        if lease == refused:
            at = t
            break
    if at is None:
        return None
    cutoff = at - window_s
    return sum(1 for t, lease in sends if t > cutoff and lease != refused)


@dataclass(frozen=True, slots=True)
class Availability:
    ok: bool
    free_at: float | None = None       # when refused: earliest time worth retrying; None = never
    probe: bool = False
    breaker: BreakerState = CLOSED     # the state to store if this key is taken
    recheck_at: float | None = None    # quarantined (see after_auth_failure): its recheck


def effective_rpm(spec: KeySpec, learned: int | None) -> int | None:
    """The configured ``max_rpm``, else the limit learned from the server's 429s."""
    return spec.max_rpm if spec.max_rpm is not None else learned


def in_flight_cap(spec: KeySpec, learned_rpm: int | None, successes: int | None,
                  policy: PoolPolicy) -> int | None:
    """Requests a key may have in flight: ``max_in_flight``; while the pool learns limits and
    knows none for a key, ``1 + isqrt(2 * successes)`` up to that: one more per round trip (a
    key kept busy with ``c`` in flight answers about ``c`` per round trip, so after ``k`` round
    trips it has about ``k * k / 2`` successes). The first answer usually states the limit; a
    server that states nothing only tells it with a 429, and what is in flight when the window
    fills is refused in one burst, every request of it counted by a limiter that counts refusals
    (and the count a 429 teaches, :func:`sent_in_window`, settles only once they are back).
    Growing by one per round trip, that burst is about ``sqrt(2 * limit)`` requests, not the
    whole cap (a doubling slow start overshoots by about half the limit). ``successes`` None:
    not counted, the cap."""
    if (policy.learn_limits and successes is not None
            and effective_rpm(spec, learned_rpm) is None):
        grown = 1 + math.isqrt(2 * max(0, successes))
        return grown if policy.max_in_flight is None else min(grown, policy.max_in_flight)
    return policy.max_in_flight


def evaluate_key(spec: KeySpec, removed: bool, blocked_until: float, breaker: BreakerState,
                 window: Sequence[tuple[float, int]], need_tokens: int, now: float,
                 policy: PoolPolicy, *, in_flight: int = 0, learned_rpm: int | None = None,
                 tat: float = 0.0, successes: int | None = None,
                 auth_strikes: int = 0) -> Availability:
    """May this key take a request now? Removed > blocked deadline > breaker > in-flight cap
    (see :func:`in_flight_cap`) > RPM (configured or learned) > pacing > TPM.

    ``window`` holds the key's ``(time, tokens)`` requests inside the sliding window: requests in
    flight at the time they were sent, finished ones at the time they finished (the server counted
    them somewhere in between, so the pool's slot never frees before the server's), refused ones
    included (the server saw them; a limiter that counts before it checks counts them too)."""
    if removed:
        return Availability(False)
    if blocked_until > now:
        return Availability(False, blocked_until)
    chk = breaker_check(breaker, now, policy.breaker_cooldown_s)
    if not chk.allowed:
        if auth_strikes > 0:
            # quarantined: a request does not wait minutes for a recheck that will most likely
            # be rejected again; it fails over, and a request after the recheck is due sends it
            return Availability(False, None, recheck_at=chk.retry_at)
        return Availability(False, chk.retry_at)
    limit = effective_rpm(spec, learned_rpm)
    cap = in_flight_cap(spec, learned_rpm, successes, policy)
    if cap is not None and in_flight >= cap:
        # frees when a call ends; a short hint, the caller's waiter jitter spreads the retries
        hint = policy.window_s / limit if limit else min(1.0, policy.window_s / 60.0)
        return Availability(False, now + hint)
    rpm_at = window_free_at(window, limit, policy.window_s)
    pace_at = pace_free_at(tat, now, limit, policy.window_s, policy.burst)
    tpm_at = (tokens_free_at(window, spec.max_tpm, need_tokens, policy.window_s)
              if spec.max_tpm is not None else None)
    waits = [t for t in (rpm_at, pace_at, tpm_at) if t is not None]
    if waits:
        return Availability(False, max(waits))
    return Availability(True, None, chk.probe, chk.state)


@dataclass(frozen=True, slots=True)
class KeyLoad:
    """A selectable key as the strategies see it."""

    fingerprint: str
    weight: float
    in_flight: int
    used: int


def choose_key(strategy: Strategy, keys: Sequence[KeyLoad], rr: Mapping[str, float],
               rand: float) -> tuple[int, dict[str, float]]:
    """Pick one of ``keys`` (all eligible, config order); returns (index, new round-robin state).

    * ``round_robin``: smooth weighted round robin (nginx): every eligible key gains its weight,
      the largest current weight wins and pays back the eligible total. Over any run the picks
      follow the weights exactly and interleave instead of bursting.
    * ``least_loaded``: fewest in flight, then lowest use in the window per unit of weight.
    * ``fill_first``: the first eligible key in config order (drain one key's quota first).
    * ``random``: weighted random with the caller's draw ``rand`` in [0, 1).
    """
    if not keys:
        raise ValueError("choose_key needs at least one eligible key")
    state = dict(rr)
    if strategy == "round_robin":
        total = 0.0
        best = 0
        for i, k in enumerate(keys):
            state[k.fingerprint] = state.get(k.fingerprint, 0.0) + k.weight
            total += k.weight
            if state[k.fingerprint] > state[keys[best].fingerprint]:
                best = i
        state[keys[best].fingerprint] -= total
        return best, state
    if strategy == "least_loaded":
        best = min(range(len(keys)),
                   key=lambda i: (keys[i].in_flight, keys[i].used / keys[i].weight, i))
        return best, state
    if strategy == "fill_first":
        return 0, state
    if strategy == "random":
        total = sum(k.weight for k in keys)
        point = min(max(rand, 0.0), 0.999999999) * total
        acc = 0.0
        for i, k in enumerate(keys):
            acc += k.weight
            if point < acc:
                return i, state
        return len(keys) - 1, state
    raise ValueError(f"unknown rotation strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")


def apply_outcome(outcome: Outcome, blocked_until: float, removed: bool, breaker: BreakerState,
                  now: float, policy: PoolPolicy) -> tuple[float, bool, BreakerState, bool]:
    """A key's (blocked_until, removed, breaker, changed) after a call ended with ``outcome``."""
    if outcome.kind == "ok":
        return (exhausted_until(blocked_until, now, outcome, policy.window_s), removed,
                breaker_success(breaker), False)
    if outcome.kind == "rate_limited":
        until = cooldown_until(blocked_until, now, outcome.retry_after, policy.default_cooldown_s)
        return until, removed, _neutral(breaker, now, policy, outcome.probe), until != blocked_until
    if outcome.kind == "removed":
        return blocked_until, True, breaker, not removed
    if outcome.kind == "failure":
        return blocked_until, removed, breaker_failure(breaker, now, policy.breaker_failures), False
    return blocked_until, removed, _neutral(breaker, now, policy, outcome.probe), False


def exhausted_wait(reset_s: float | None, window_s: float) -> float | None:
    """How long a success stating that nothing remains blocks its key: the stated reset, at most
    one window. Being wrong costs one refused request, whose 429 then says how long for real; a
    reset a day away (a proxy's garbage, a far RFC 3339 time) must not take the key out for a
    day on the word of a 200."""
    wait = sane_retry_after(reset_s)
    return None if wait is None else min(wait, window_s)


def exhausted_until(blocked_until: float, now: float, outcome: Outcome,
                    window_s: float = 60.0) -> float:
    """A success that says nothing remains of the key's limit blocks the key until the reset it
    states (only ever later; see :func:`exhausted_wait`): the request after it would be refused.
    Providers whose reset means "fully replenished" (OpenAI's) make this wait longer than needed,
    never too short. A negative remainder (a proxy counting past the limit) is nothing remaining
    too."""
    if outcome.remaining is None or outcome.remaining > 0:
        return blocked_until
    wait = exhausted_wait(outcome.reset_s, window_s)
    return blocked_until if wait is None else max(blocked_until, now + wait)


def learned_after(outcome: Outcome, learned: int | None, admitted_in_window: int) -> int | None:
    """A key's learned request limit after a call ended: the limit any answer states, else what
    a 429 teaches (:func:`learn_limit`), which only ever lowers an earlier estimate: the window
    holds at least what the server admitted when it refused (requests in flight count too), so
    every such count is an upper bound and the smallest is the tightest. Other outcomes leave it."""
    stated = sane_limit(outcome.limit)
    if stated is not None and outcome.kind in ("ok", "rate_limited"):
        return stated
    if outcome.kind == "rate_limited":
        counted = learn_limit(admitted_in_window, None)
        if counted is None:
            return learned
        return counted if learned is None else min(learned, counted)
    return learned


def provider_breaker_after(outcome: Outcome, breaker: BreakerState, now: float,
                           policy: PoolPolicy) -> BreakerState:
    """The provider-level breaker only hears about health: successes and retryable failures."""
    if outcome.kind == "ok":
        return breaker_success(breaker)
    if outcome.kind == "failure":
        return breaker_failure(breaker, now, policy.breaker_failures)
    return _neutral(breaker, now, policy, outcome.probe)


def _neutral(breaker: BreakerState, now: float, policy: PoolPolicy, probe: bool) -> BreakerState:
    """A probe that ended without a health signal (429, 401, cancelled) frees the probe slot.

    Any other call ending so leaves the half-open state alone: the probe is still out (if it never
    reports back, :func:`.breaker.breaker_check` hands out a new one after a cool-down)."""
    if breaker.mode == "half_open" and probe:
        return BreakerState("open", breaker.failures, now - policy.breaker_cooldown_s)
    return breaker


# --------------------------------------------------------------------------- the seam

@runtime_checkable
class PoolStateBackend(Protocol):
    """Where the pool's shared state lives. Two calls per request: ``acquire`` and ``release``.

    Times are seconds on the backend's own clock (:meth:`now`; Redis uses ``TIME``) so processes
    on machines with skewed clocks agree. ``io_bound`` tells async callers to run the calls in a
    worker thread (True for network backends).
    """

    io_bound: bool

    def now(self) -> float:
        """The backend's clock (epoch seconds for shared backends)."""
        ...

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        """Atomically: check the provider breaker, then per key removal, deadline, breaker, RPM and
        TPM windows; choose one eligible key by ``policy.strategy`` (``rand`` is the draw for
        ``random``); record the request in its window and bump its in-flight count."""
        ...

    def release(self, provider: str, fingerprint: str, outcome: Outcome,
                policy: PoolPolicy, *, lease: str = "") -> ReleaseResult:
        """Atomically: end the request ``lease`` names (its window entry moves to now; without a
        lease, the key's oldest open one), drop the in-flight count and apply the outcome to
        deadline, removal, learned limit and the key and provider breakers."""
        ...

    def snapshot(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy) -> ProviderSnapshot:
        """Read-only view for ``hermes-core keys status`` and tests."""
        ...

    def leave(self, provider: str) -> None:
        """No request of this process waits for ``provider``'s keys any more (they failed over,
        timed out, were cancelled): give up the process's place in a queue shared with other
        processes, so the next is served at once rather than after the place expires. A no-op
        where there is no such queue; never raises for a place not held."""
        ...


# --------------------------------------------------------------------------- in-memory backend

@dataclass
class _KeyRecord:
    blocked_until: float = 0.0
    removed: bool = False
    in_flight: int = 0
    window: SlidingWindow = field(default_factory=SlidingWindow)
    breaker: BreakerState = CLOSED
    open: dict[str, tuple[float, int]] = field(default_factory=dict)  # lease -> window entry
    learned_rpm: int | None = None
    tat: float = 0.0    # the pacer's theoretical arrival time
    successes: int = 0   # calls with this key that succeeded (see in_flight_cap)
    # (send time, lease) of the requests not refused, while the key's limit is learned from
    # 429s: what a 429 teaches (see sent_in_window)
    sends: list[tuple[float, str]] = field(default_factory=list)
    stated: bool = False       # learned_rpm is what the server stated (never probed upward)
    probe: LimitProbe = field(default_factory=LimitProbe)
    closed_sent: float | None = None   # the send time of the request close_lease last ended
    auth_strikes: int = 0     # rejections in a row (see after_auth_failure)

    def close_lease(self, lease: str, now: float) -> bool:
        """A call ended: its window entry moves from send time to now (see evaluate_key), a
        refused one too. False when ``lease`` names no open request (released already, or never
        handed out here)."""
        self.closed_sent = None
        if lease in self.open:
            entry = self.open.pop(lease)
        elif self.open and not lease:
            entry = self.open.pop(next(iter(self.open)))
        else:
            return not lease
        self.closed_sent = entry[0]
        try:
            self.window.remove(entry)
        except ValueError:
            pass  # pruned while in flight
        self.window.append((now, entry[1]))
        return True

    def prune(self, now: float, window_s: float) -> None:
        self.window.prune(now - window_s)
        if self.sends:
            # kept back to the window before the oldest request still in flight (its 429 counts
            # what went out in its window), ten windows at most (a lease never released)
            oldest = next(iter(self.open.values()))[0] if self.open else now
            cutoff = max(min(now, oldest) - window_s, now - 10 * window_s)
            drop = 0
            while drop < len(self.sends) and self.sends[drop][0] <= cutoff:
                drop += 1
            if drop:
                del self.sends[:drop]

    def refused(self, lease: str, window_s: float) -> int:
        """A request was refused: how many others went out in its window (see sent_in_window;
        without its lease, all not refused in the window) and it leaves ``sends``."""
        counted = sent_in_window(self.sends, lease, window_s) if lease else None
        if counted is None:
            return len(self.sends)
        for i in range(len(self.sends) - 1, -1, -1):
            if self.sends[i][1] == lease:
                del self.sends[i]
                break
        return counted



@dataclass
class _ProviderRecord:
    breaker: BreakerState = CLOSED
    rr: dict[str, float] = field(default_factory=dict)


class InMemoryPoolState:
    """The default backend: one process, one lock, O(keys) per acquire."""

    io_bound = False

    def __init__(self, clock: Callable[[], float] = STEADY) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: dict[tuple[str, str], _KeyRecord] = {}
        self._providers: dict[str, _ProviderRecord] = {}
        self._leases = 0
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): a lock of its own, and none of the parent's
        requests in flight (only the parent releases them: a key at ``max_in_flight`` stayed
        busy here for good). The windows stay: those requests were sent."""
        self._lock = threading.Lock()
        for rec in self._keys.values():
            rec.open.clear()
            rec.in_flight = 0

    def now(self) -> float:
        return self._clock()

    def _key(self, provider: str, fingerprint: str) -> _KeyRecord:
        rec = self._keys.get((provider, fingerprint))
        if rec is None:
            rec = self._keys[(provider, fingerprint)] = _KeyRecord()
        return rec

    def _provider(self, provider: str) -> _ProviderRecord:
        rec = self._providers.get(provider)
        if rec is None:
            rec = self._providers[provider] = _ProviderRecord()
        return rec

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        with self._lock:
            now = self._clock()
            prov = self._provider(provider)
            pchk = breaker_check(prov.breaker, now, policy.breaker_cooldown_s)
            if not pchk.allowed:
                return AcquireResult(None, pchk.retry_at, now=now)
            eligible: list[tuple[KeySpec, _KeyRecord, Availability]] = []
            earliest: float | None = None
            recheck: float | None = None
            for spec in keys:
                rec = self._key(provider, spec.fingerprint)
                rec.prune(now, policy.window_s)
                if (policy.learn_limits and spec.max_rpm is None and not rec.stated
                        and rec.learned_rpm is not None and len(rec.window) >= rec.learned_rpm):
                    raised = probe_raise(rec.learned_rpm, rec.probe, now, policy.window_s)
                    if raised is not None:
                        rec.learned_rpm, rec.probe = raised
                av = evaluate_key(spec, rec.removed, rec.blocked_until, rec.breaker, rec.window,
                                  tokens, now, policy, in_flight=rec.in_flight,
                                  learned_rpm=rec.learned_rpm, tat=rec.tat,
                                  successes=rec.successes, auth_strikes=rec.auth_strikes)
                if av.ok:
                    eligible.append((spec, rec, av))
                elif av.free_at is not None:
                    earliest = av.free_at if earliest is None else min(earliest, av.free_at)
                elif av.recheck_at is not None:
                    recheck = av.recheck_at if recheck is None else min(recheck, av.recheck_at)
            if not eligible:
                return AcquireResult(None, earliest, now=now, recheck_at=recheck)
            loads = [KeyLoad(s.fingerprint, s.weight, r.in_flight, len(r.window))
                     for s, r, _ in eligible]
            i, prov.rr = choose_key(policy.strategy, loads, prov.rr, rand)
            spec, rec, av = eligible[i]
            rec.breaker = av.breaker
            prov.breaker = pchk.state
            entry = (now, max(0, tokens))
            rec.window.append(entry)
            rec.in_flight += 1
            rec.tat = pace_after(rec.tat, now, effective_rpm(spec, rec.learned_rpm),
                                 policy.window_s)
            self._leases += 1
            lease = f"m{self._leases}"
            rec.open[lease] = entry
            if policy.learn_limits and spec.max_rpm is None:
                rec.sends.append((now, lease))
            return AcquireResult(spec.fingerprint, None, av.probe or pchk.probe, now, lease)

    def release(self, provider: str, fingerprint: str, outcome: Outcome,
                policy: PoolPolicy, *, lease: str = "") -> ReleaseResult:
        with self._lock:
            now = self._clock()
            rec = self._key(provider, fingerprint)
            prov = self._provider(provider)
            rec.prune(now, policy.window_s)
            if rec.close_lease(lease, now):
                # a lease already ended (a second release) must not end another request
                rec.in_flight = max(0, rec.in_flight - 1)
            rec.successes += outcome.kind == "ok"
            if policy.learn_limits:
                counted = (rec.refused(lease, policy.window_s)
                           if outcome.kind == "rate_limited" else 0)
                before = rec.learned_rpm
                rec.learned_rpm = learned_after(outcome, before, counted)
                if sane_limit(outcome.limit) is not None and outcome.kind in ("ok", "rate_limited"):
                    rec.stated = True
                elif outcome.kind == "rate_limited" and counted > 0:
                    rec.stated = False
                    rec.probe = probe_after_429(rec.probe, before, rec.learned_rpm, now)
                elif outcome.kind == "ok" and rec.closed_sent is not None and not rec.stated:
                    rec.probe = probe_after_success(rec.probe, rec.closed_sent, now,
                                                    policy.window_s, rec.learned_rpm)
            restored = False
            if outcome.kind == "removed":
                rec.auth_strikes, rec.removed, rec.breaker, changed = after_auth_failure(
                    rec.auth_strikes, rec.removed, rec.breaker, now, outcome.probe, policy)
            else:
                quarantine = rec.breaker if rec.auth_strikes and not rec.removed else None
                rec.blocked_until, rec.removed, rec.breaker, changed = apply_outcome(
                    outcome, rec.blocked_until, rec.removed, rec.breaker, now, policy)
                if outcome.kind == "ok" and quarantine is not None:
                    # Only the recheck's success lifts a quarantine. A request in flight when the
                    # key was rejected authenticated before that: its success is old news, as its
                    # own rejection would be (no second strike); restoring on it brought a
                    # revoked key straight back and its recheck wait never doubled.
                    if outcome.probe:
                        rec.auth_strikes, restored = 0, True
                    else:
                        rec.breaker = quarantine
            prov.breaker = provider_breaker_after(outcome, prov.breaker, now, policy)
            recheck = (quarantine_recheck(rec.auth_strikes, rec.removed, rec.breaker, policy)
                       if outcome.kind == "removed" and changed else None)
            return ReleaseResult(changed, rec.blocked_until, rec.removed, recheck, restored)

    def leave(self, provider: str) -> None:
        """One process: its waiters' queue (:mod:`.waiters`) is the whole queue; nothing to give
        up here."""

    def snapshot(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy) -> ProviderSnapshot:
        with self._lock:
            now = self._clock()
            out = []
            for spec in keys:
                rec = self._key(provider, spec.fingerprint)
                rec.prune(now, policy.window_s)
                out.append(KeySnapshot(spec.fingerprint, rec.removed, rec.blocked_until,
                                       rec.in_flight, len(rec.window),
                                       rec.window.used, rec.breaker, rec.learned_rpm,
                                       rec.auth_strikes))
            return ProviderSnapshot(provider, now, self._provider(provider).breaker, tuple(out))
