"""The Redis pool backend's local fallback: what one worker may send while Redis is away.

Split from :mod:`hermes_core.agent.pool.redis` (which uses it): this worker's share of each key
(:func:`worker_share`, by the slot it holds among the fleet), where its local window starts
(:func:`share`, its part of the fleet's window as Redis last showed it), and the in-memory
state that can be told about requests sent before it took over (:class:`LocalPoolState`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from hermes_core.agent.pool.breaker import CLOSED, BreakerState
from hermes_core.agent.pool.clock import STEADY
from hermes_core.agent.pool.quarantine import Standing
from hermes_core.agent.pool.state import InMemoryPoolState
from hermes_core.agent.pool.window import SlidingWindow


def count_text(text: str) -> int:
    """A count Lua wrote: numbers from 1e14 up come back as ``1e+20`` (a huge limit a header
    stated), which ``int()`` alone refuses."""
    try:
        return int(text)
    except ValueError:
        return int(float(text))


def worker_share(limit: int, workers: int, slot: int | None) -> int:
    """What one of ``workers`` processes may send of a key's ``limit`` per window while Redis is
    away. A worker holding a slot (:data:`.worker_slot.CLAIM`, a distinct index per live worker)
    takes ``limit // workers``, one more for the first ``limit % workers`` slots: the shares add
    up to the limit (10 over 4 workers: 3, 3, 2, 2), where equal floors (2 each) left a fifth of
    the budget unused for the whole outage. Without a slot (Redis was never reached, or more
    processes run than ``workers`` says) the floor: never more than a slot holder's. At least 1
    (a key is never shut for the outage; a limit below ``workers`` is passed by design)."""
    if workers <= 1:
        return max(1, limit)
    extra = 1 if slot is not None and 0 <= slot < limit % workers else 0
    return max(1, limit // workers + extra)


def share(raw: str, redis_now: float, local_now: float, window_s: float, workers: int,
          sent: bool, slot: int | None = None, tokens: int = 0) -> list[tuple[float, int]]:
    """One worker's share of a key's window, from ACQUIRE's
    "<requests>|<limit>|<time>:<tokens>,..." (the newest), as (local time, tokens), oldest
    first. ``sent``: this very acquire added one more (now, ``tokens``).

    While Redis is away each worker may send its :func:`worker_share` per window. Every worker
    counts the requests at ranks slack, slack + workers, slack + 2 * workers, ... from the
    newest, which keeps, at every moment, workers x counted >= what remains of the window - slack:
    with the shares adding up to ``limit - slack`` the fleet never passes the limit, and each
    share frees as the window does (not all at its newest request's expiry). The slack is what
    the shares leave unused: none when this worker holds a slot (the shares of the slots add up
    to the limit), ``limit % workers`` under equal floors. Ranks past the listed times are put at
    the oldest listed (later than their own: never freeing early). Each counted request carries
    its rank group's tokens over ``workers`` (rounded up; unlisted ranks at the listed mean), so
    the workers' token counts add up to the window's too: a share of zero tokens per request let
    a worker spend a whole TPM share on top of a window the others had filled."""
    count_s, _, rest = raw.partition("|")
    limit_s, _, listed = rest.partition("|")
    count, limit = count_text(count_s or "0"), count_text(limit_s or "0")
    entries = []
    for item in listed.split(","):
        t, _, tok = item.partition(":")
        if t:
            entries.append((local_now - (redis_now - float(t)), count_text(tok or "0")))
    newest = sorted(entries, reverse=True)
    if sent:
        count += 1
        newest.insert(0, (local_now, max(0, int(tokens))))
    if workers <= 1 or count <= 0 or not newest:
        return []
    mean = sum(tok for _, tok in newest) / len(newest)
    slack = limit % workers if limit > 0 and slot is None else 0
    picked = []
    for r in range(slack, count, workers):
        group = [newest[i][1] if i < len(newest) else mean for i in range(r, min(r + workers, count))]
        picked.append((newest[min(r, len(newest) - 1)][0], -(-int(sum(group)) // workers)))
    return sorted(e for e in picked if e[0] > local_now - window_s)


class LocalPoolState(InMemoryPoolState):
    """The fallback state, which can also be told about requests sent before it took over."""

    def __init__(self, clock: Callable[[], float] = STEADY) -> None:
        super().__init__(clock)
        # per key, the Redis leases this worker had open as Redis went away (hold_elsewhere)
        self._elsewhere: dict[tuple[str, str], set[str]] = {}

    def renew_after_fork(self) -> None:
        """As :class:`InMemoryPoolState`'s; the parent's requests through Redis are its own."""
        super().renew_after_fork()
        self._elsewhere = {}

    def hold_elsewhere(self, provider: str,
                       leases: Mapping[str, Iterable[tuple[str, float]]]) -> None:
        """Requests this worker has in flight through Redis as it goes away (per key, (lease,
        seconds left)): in flight here too until each ends (:meth:`end_elsewhere`) or Redis is
        back (:meth:`drop_elsewhere`). Not counted, a key at its ``max_in_flight`` was handed
        out again beside them."""
        with self._lock:
            for fingerprint, open_ in leases.items():
                held = self._elsewhere.setdefault((provider, fingerprint), set())
                new = {lease for lease, _ in open_} - held
                held |= new
                self._key(provider, fingerprint).in_flight += len(new)

    def end_elsewhere(self, provider: str, fingerprint: str, lease: str) -> None:
        """The request through Redis that ``lease`` names ended while Redis was away."""
        with self._lock:
            held = self._elsewhere.get((provider, fingerprint), set())
            if lease in held:
                held.discard(lease)
                rec = self._key(provider, fingerprint)
                rec.in_flight = max(0, rec.in_flight - 1)

    def drop_elsewhere(self) -> None:
        """Redis is back: its leases count there again, and their releases go there."""
        with self._lock:
            for (provider, fingerprint), held in self._elsewhere.items():
                rec = self._key(provider, fingerprint)
                rec.in_flight = max(0, rec.in_flight - len(held))
            self._elsewhere = {}

    def seed_state(self, provider: str, fingerprint: str, blocked_until: float,
                   removed: bool) -> None:
        """Start from what Redis last said about a key: its deadline (only ever later) and its
        removal, so an outage forgets nothing already learned."""
        with self._lock:
            rec = self._key(provider, fingerprint)
            rec.blocked_until = max(rec.blocked_until, blocked_until)
            rec.removed = rec.removed or removed

    def seed_standing(self, provider: str, fingerprint: str, standing: Standing) -> None:
        """Start from a key's standing as Redis last said it (local clock): a quarantined key
        stays out until its recheck and a rejected recheck counts from the strikes the fleet
        counted; a breaker the fleet holds open stays open. Redis's word replaces what this
        fallback held from an earlier outage (merged into Redis since, then maybe restored)."""
        with self._lock:
            rec = self._key(provider, fingerprint)
            rec.auth_strikes, rec.breaker = standing.strikes, standing.breaker
            rec.removed = rec.removed or standing.removed

    def standings(self) -> dict[tuple[str, str], Standing]:
        """Each key's standing this fallback holds that is not plainly good: what goes back
        to Redis (:func:`.quarantine.merge_standing`, in ``lua_recovery.MERGE``)."""
        with self._lock:
            return {k: Standing(r.auth_strikes, r.breaker, r.removed)
                    for k, r in self._keys.items()
                    if r.auth_strikes or r.breaker != CLOSED or r.removed}

    def seed_limit(self, provider: str, fingerprint: str, learned_rpm: int) -> None:
        """Start from the limit the fleet learned for a key (this worker's share of it: like a
        stated limit, never probed upward here)."""
        with self._lock:
            rec = self._key(provider, fingerprint)
            rec.learned_rpm, rec.stated = learned_rpm, True

    def earliest_rejoin(self, provider: str, fingerprints: Sequence[str],
                        at: float) -> float | None:
        """The earliest a key not removed may serve once Redis's budget is back at ``at``: its
        deadline when it cools past ``at`` (what Redis returns cannot shorten it). None: all
        removed."""
        with self._lock:
            times = [max(at, rec.blocked_until) for fp in fingerprints
                     if not (rec := self._key(provider, fp)).removed]
        return min(times, default=None)

    def cancel(self, provider: str, fingerprint: str, lease: str) -> None:
        """Take back a request acquired here that was never sent (Redis refused the key)."""
        with self._lock:
            rec = self._key(provider, fingerprint)
            entry = rec.open.pop(lease, None)
            rec.sends = [s for s in rec.sends if s[1] != lease]
            if entry is not None:
                try:
                    rec.window.remove(entry)
                except ValueError:
                    pass
                rec.in_flight = max(0, rec.in_flight - 1)

    def open_tokens(self, provider: str, fingerprint: str, lease: str) -> int | None:
        """The tokens of the request ``lease`` names if it is open here (handed out by this
        fallback, not yet released), else None."""
        with self._lock:
            entry = self._key(provider, fingerprint).open.get(lease)
        return None if entry is None else entry[1]

    def provider_breakers(self) -> dict[str, BreakerState]:
        """The provider breakers this fallback holds that are not plainly closed."""
        with self._lock:
            return {p: r.breaker for p, r in self._providers.items() if r.breaker != CLOSED}

    def seed(self, provider: str, fingerprint: str, sent: Sequence[tuple[float, int]]) -> None:
        """Count requests this worker sent through Redis (local times, tokens) in the local window,
        so falling back does not hand out the same budget a second time in one window."""
        if not sent:
            return
        with self._lock:
            rec = self._key(provider, fingerprint)
            window = SlidingWindow()
            for entry in sorted([*rec.window, *sent]):
                window.append(entry)
            rec.window = window
