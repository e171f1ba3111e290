"""The Redis state backend for the credential pool: one shared pool for many worker processes.

Why: each worker process with its own in-memory pool believes it owns every key's whole RPM budget
and keeps hammering a key another worker just saw a 429 on. :class:`RedisPoolState` keeps the
pool's shared state (blocked-until deadlines, removed keys, RPM/TPM windows, in-flight leases,
breakers, the round-robin cursor) in Redis and implements :class:`PoolStateBackend`:

* ``acquire`` and ``release`` are each ONE round trip: an ``EVALSHA`` of a Lua script (registered
  with redis-py's ``register_script``, which reloads it on ``NOSCRIPT`` after a Redis restart) that
  reads Redis ``TIME``, so the machines' own clocks never matter.
* In-flight counts are leases in a sorted set scored by their expiry: a crashed worker's leases
  simply expire (this process's own: :mod:`.held_leases`). Every key has a TTL; nothing leaks.
* Keys are named by credential fingerprint (``key-<sha256 prefix>``); no secret reaches Redis.
* When Redis is unreachable or refuses commands (connection error, timeout; out of memory, failing
  snapshots, a read-only replica after a failover, a busy script: :func:`.outage.redis_unavailable`)
  the backend falls back to a local :class:`InMemoryPoolState` with a warning, dividing every
  key's RPM/TPM budget among ``workers`` (the configured number of processes sharing the keys) so
  the fleet as a whole stays under the limits: by the slot each worker holds in Redis
  (:mod:`.worker_slot`), so that the shares add up to the limit. A refusal by the local share
  names the next probe, so a waiting request rejoins Redis's whole budget as soon as it is back.
  The local windows start from this worker's share of each key's window as Redis last showed it
  (:func:`.fallback.share`), not only from its own requests: a worker that sent few of a full
  window must not add a whole share on top of it. Limits stated by the server during the outage
  are used as this worker's share too. Every ``reconnect_interval_s`` (on an injectable monotonic
  clock) one call probes Redis; when it answers, the deadlines, removals, breaker states and
  requests of the outage are merged into Redis (deadlines and breakers only ever get stricter),
  and a Redis that restarted empty also gets back what this worker had sent through it in the
  last window: all the workers' together are the window it lost. For one reconnect interval after
  that, while the other workers may still be serving locally, a key must also fit this worker's
  local share (``benchmarks/pool.py`` measures the restart: RPM violations, goodput).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core.agent.pool import lua_acquire, lua_recovery, lua_release, redis_lua
from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.clock import STEADY
from hermes_core.agent.pool.fallback import LocalPoolState, share
from hermes_core.agent.pool.fleet_queue import FleetQueue
from hermes_core.agent.pool.foreign import describe, misplaced_keys
from hermes_core.agent.pool.held_leases import HeldLeases
from hermes_core.agent.pool.lua_recovery import Sent
from hermes_core.agent.pool.outage import REFUSALS, outage_reason
from hermes_core.agent.pool.quarantine import Standing
from hermes_core.agent.pool.reconnect import LATE_S, BackgroundProbe, retries_off
from hermes_core.agent.pool.redis_options import (
    DEFAULT_PREFIX,
    RedisPoolOptions,
    options_from_settings,
)
from hermes_core.agent.pool.redis_reply import (
    key_reports,
    opt_float,
    provider_snapshot,
    release_result,
    text,
)
from hermes_core.agent.pool.redis_url import redact_url
from hermes_core.agent.pool.rename import carry_over
from hermes_core.agent.pool.sent import besides, ended, latest, take
from hermes_core.agent.pool.state import (
    LEASE_MARGIN_S,
    STRATEGIES,
    AcquireResult,
    KeySpec,
    Outcome,
    PoolPolicy,
    ProviderSnapshot,
    ReleaseResult,
    lease_ttl,
    sane_limit,
)
from hermes_core.agent.pool.worker_slot import WorkerSlot
from hermes_core.errors import ConfigError, DependencyMissing
from hermes_core.forked import renew_in_child

if TYPE_CHECKING:  # pragma: no cover
    from hermes_core.config import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

__all__ = ["DEFAULT_PREFIX", "RedisPoolOptions", "RedisPoolState", "backend_from_settings",
           "options_from_settings"]


class RedisPoolState:
    """A :class:`PoolStateBackend` whose state lives in Redis, shared by every process using it.

    ``clock``: tests only. When given, its value replaces Redis ``TIME`` in the scripts so time can
    be stepped deterministically (it also drives the local fallback unless ``local_clock``, the
    fallback's own clock, is given: tests of skewed clocks). ``monotonic`` paces the reconnect
    probe. Deadlines Redis answers with are on its clock; the fallback and what it merges back are
    on the local one, moved across by the offset seen at the last acquire. ``client`` may be any
    ``redis.Redis``; otherwise one is built from ``url`` with short timeouts and a single
    immediate retry (a pooled connection that died with a Redis restart is replaced once before
    the call counts as failed).
    """

    io_bound = True

    def __init__(self, url: str | None = None, *, client: Any = None,
                 options: RedisPoolOptions | None = None,
                 clock: Callable[[], float] | None = None,
                 monotonic: Callable[[], float] = time.monotonic,
                 config_file: str | None = None,
                 local_clock: Callable[[], float] | None = None) -> None:
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError as exc:  # pragma: no cover - the extra is installed in dev
            raise DependencyMissing("credential_pool.backend: redis", "redis") from exc
        self.options = opts = options or RedisPoolOptions()
        if opts.workers < 1:
            raise ConfigError("must be >= 1", file=config_file, key_path="credential_pool.workers")
        self._retry: Retry | None = None   # a client built here: close() cuts with no retry
        if client is None:
            if not url:
                raise ConfigError("the redis backend needs a URL (or HERMES_REDIS_URL)",
                                  file=config_file, key_path="credential_pool.redis_url")
            self._retry = Retry(NoBackoff(), 1)
            try:
                client = redis.Redis.from_url(
                    url, decode_responses=True, socket_timeout=opts.socket_timeout_s,
                    socket_connect_timeout=opts.socket_timeout_s, retry=self._retry,
                    retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError])
            except ValueError as exc:
                raise ConfigError(f"invalid Redis URL {redact_url(url)!r}: {exc}",
                                  file=config_file, key_path="credential_pool.redis_url") from None
        self.url = redact_url(url) if url else "<given redis client>"
        self._redis = client
        # unreachable, timed out, or refusing commands (out of memory, failing snapshots, a
        # read-only replica, a busy script: see redis_unavailable): serve locally meanwhile
        self._redis_error: type[Exception] = redis.exceptions.RedisError
        self._connection_error: type[Exception] = redis.exceptions.ConnectionError
        self._acquire = client.register_script(lua_acquire.ACQUIRE)
        self._release = client.register_script(lua_release.RELEASE)
        self._snapshot = client.register_script(redis_lua.SNAPSHOT)
        self._merge = client.register_script(lua_recovery.MERGE)
        self._hold_again = client.register_script(lua_recovery.HOLD)
        # this worker's index among the fleet, which sets its share while Redis is away
        self._slot = slot = WorkerSlot(client, opts.key_prefix, opts.workers,
                                       ttl_s=opts.slot_ttl_s, monotonic=monotonic, clock=clock)
        self._fleet = (FleetQueue(client, opts.key_prefix, lambda: slot.worker_id,
                                  grace_s=opts.queue_grace_s, poll_s=opts.queue_poll_s)
                       if opts.fleet_queue else None)
        self._clock = clock
        self._monotonic = monotonic
        self._local = LocalPoolState(local_clock or clock or STEADY)
        # this machine's clock minus Redis's, as of the last acquire: deadlines Redis set (on
        # its clock) are moved onto the local one for the fallback and merge-back, and back
        self._offset = 0.0
        self._lock = threading.Lock()
        self._leases = HeldLeases(monotonic)   # this process's open Redis leases per key
        # the pool-state incarnation this process knows (see lua_acquire.ACQUIRE) and what it last
        # heard about each key (blocked-until, removed): handed back to a Redis that lost them
        self._epochs: dict[str, str] = {}
        self._resync_lock = threading.Lock()
        self._known: dict[tuple[str, str], tuple[float, bool]] = {}
        self._learned_rpm: dict[tuple[str, str], int] = {}
        # each key's standing (strikes, breaker, removal) as Redis last answered it, on Redis's
        # clock: the local fallback starts from it, a Redis that lost it gets it back
        self._standing: dict[tuple[str, str], Standing] = {}
        self._degraded = False
        self._next_probe = 0.0
        self._prober = BackgroundProbe(self._recover, opts.probe_wait_s,
                                       late_s=max(LATE_S, 10 * opts.socket_timeout_s))
        # what the local fallback did and learned, replayed into Redis when it returns:
        # deadlines/removals per key, and the requests sent (lua_recovery.Sent, no lease)
        self._learned: dict[tuple[str, str], tuple[float, bool]] = {}
        self._sent: dict[tuple[str, str], list[Sent]] = {}
        # requests this worker sent through Redis in the last window (lua_recovery.Sent, with
        # the lease): the local fallback starts from them instead of from an empty window
        self._recent: dict[tuple[str, str], deque[Sent]] = {}
        # this worker's share of each key's window as Redis last showed it (local times, oldest
        # first): where the local fallback starts, and what goes back to a Redis that lost it
        self._shares: dict[tuple[str, str], list[tuple[float, int]]] = {}
        self._before: dict[tuple[str, str], list[Sent]] = {}
        # sent through Redis before an outage or by its fallback, merged back since: handed
        # back to a Redis that loses its window later (an empty restart), as _recent is
        self._merged: dict[tuple[str, str], list[Sent]] = {}
        self._window_s = 60.0
        # after an outage, until when (monotonic) a key must also fit the local share, and the
        # local lease each Redis lease of that time holds
        self._probation_until = 0.0
        self._paired: dict[tuple[str, str], str] = {}
        self.outages = 0  # how many times this backend fell back (observability, tests)
        self._foreign = False   # the fallback is for another's data under the prefix
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`; its slot and probe renew themselves): locks of its
        own, and none of the parent's requests. A thread of the parent's in a merge-back holds
        ``_resync_lock`` throughout, and the child's first resync waited for it for ever. What
        the parent sent (through Redis, or locally, to be merged back) the parent hands back to
        a Redis that lost it; the child did too, counting it twice. The fleet's word on the keys
        (deadlines, removals, standings, limits) stays: merging it again changes nothing."""
        self._lock = threading.Lock()
        self._resync_lock = threading.Lock()
        self._recent, self._sent, self._before, self._paired = {}, {}, {}, {}
        self._merged = {}

    # ------------------------------------------------------------------ public API

    @property
    def degraded(self) -> bool:
        """True while Redis is unreachable and the local fallback serves."""
        return self._degraded

    def now(self) -> float:
        def remote() -> float:
            if self._clock is not None:
                return self._clock()
            secs, micros = self._redis.time()
            return float(secs) + float(micros) / 1e6
        return self._call(remote, self._local.now)

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        if policy.strategy not in STRATEGIES:
            raise ValueError(f"unknown rotation strategy {policy.strategy!r}; "
                             f"use one of {', '.join(STRATEGIES)}")

        ttl = lease_ttl(self.options.lease_ttl_s, policy.hold_s)

        def remote(keys: Sequence[KeySpec] = keys) -> AcquireResult:
            if self._slot.due():
                self._slot.claim()
            for _ in range(3):
                lease = os.urandom(8).hex()
                names = [self._name(provider, "p"), self._name(provider, "rr"),
                         self._name(provider, "e")]
                for spec in keys:
                    names += self._key_names(provider, spec.fingerprint)
                with self._lock:
                    known = {spec.fingerprint: self._known.get((provider, spec.fingerprint),
                                                               (0.0, False)) for spec in keys}
                    learned = {spec.fingerprint: self._learned_rpm.get(
                        (provider, spec.fingerprint), 0) for spec in keys}
                args = lua_acquire.acquire_args(
                    self._now_arg(), policy, keys, tokens=tokens, rand=rand, lease=lease, ttl=ttl,
                    state_ttl_s=self.options.state_ttl_s, epoch=self._epochs.get(provider, ""),
                    new_epoch=os.urandom(8).hex(), workers=self.options.workers, known=known,
                    learned=learned)
                if self._fleet is not None:   # the queue's turn and place, in the same script
                    names += self._fleet.keys(provider)
                    args += self._fleet.args()
                try:
                    raw = self._acquire(keys=names, args=args)
                except self._redis_error:
                    # it may have run with its reply lost: the hold it took goes when Redis
                    # answers again, or that key stays in flight until the lease expires
                    self._leases.unanswered(provider, [s.fingerprint for s in keys], lease,
                                            max(0, int(tokens)))
                    raise
                fp, available, probe, now, status, epoch = (text(x) for x in raw[:6])
                if status == "resync":
                    self._resync(provider, epoch)
                    continue
                local_now = self._local.now()
                with self._lock:
                    self._offset = local_now - float(now)
                    for spec, rep in zip(keys, key_reports(raw, len(keys)), strict=False):
                        item = (provider, spec.fingerprint)
                        self._remember(provider, spec.fingerprint, rep.blocked_until, rep.removed)
                        if rep.learned_rpm is not None:
                            self._learned_rpm[item] = rep.learned_rpm
                        self._shares[item] = share(
                            rep.window, float(now), local_now, policy.window_s,
                            self.options.workers, spec.fingerprint == fp, self._slot.index, tokens)
                        self._standing[item] = rep.standing
                    self._window_s = policy.window_s
                fingerprint = fp or None
                if fingerprint is not None:
                    self._hold(provider, fingerprint, lease, max(0, int(tokens)), policy.window_s,
                               ttl=ttl)
                at = 6 + 6 * len(keys)
                recheck = opt_float(raw[at]) if len(raw) > at else None
                return AcquireResult(fingerprint, opt_float(available), probe == "1",
                                     float(now), lease if fingerprint else "",
                                     recheck_at=recheck)
            raise self._connection_error("the pool state kept changing incarnation")

        def local() -> AcquireResult:
            res = self._local.acquire(provider, self._slot.local_keys(keys),
                                      self._slot.local_policy(policy), tokens=tokens, rand=rand)
            if res.fingerprint is None:
                # a waiter must not sleep through Redis's return on the local share's clock: it
                # asks again by the next probe, which may rejoin the fleet's whole budget
                return self._rejoin_by(res, provider, keys, self._next_probe)
            entry = (res.now, max(0, int(tokens)), policy.window_s, self._local_name(res.lease))
            with self._lock:
                late = not self._degraded   # Redis returned while this was served here
                if not late:
                    sent = self._sent.setdefault((provider, res.fingerprint), [])
                    while sent and sent[0][0] <= res.now - sent[0][2]:
                        sent.pop(0)
                    sent.append(entry)
            if late:
                self._merge_late({(provider, res.fingerprint): [entry]})
            return res

        def on_probation() -> AcquireResult:
            """Right after Redis returns (one reconnect interval, at most a window), other
            workers may still be serving locally (their requests reach Redis when they notice):
            a key must fit this worker's local share too, and Redis is asked for that key only."""
            if self._monotonic() >= self._probation_until:
                return remote()
            gate = self._local.acquire(provider, self._slot.local_keys(keys),
                                       self._slot.local_policy(policy), tokens=tokens, rand=rand)
            if gate.fingerprint is None:
                # the local share binds until the probation ends, not until it frees
                return self._rejoin_by(gate, provider, keys, self._probation_until)
            try:
                res = remote([k for k in keys if k.fingerprint == gate.fingerprint])
            except BaseException:
                self._local.cancel(provider, gate.fingerprint, gate.lease)
                raise
            if res.fingerprint is None:
                self._local.cancel(provider, gate.fingerprint, gate.lease)
            else:
                with self._lock:
                    self._paired[(provider, res.lease)] = gate.lease
            return res

        return self._call(on_probation, local)

    def release(self, provider: str, fingerprint: str, outcome: Outcome,
                policy: PoolPolicy, *, lease: str = "") -> ReleaseResult:
        state_key, window_key, lease_key = self._key_names(provider, fingerprint)
        with self._lock:
            paired = self._paired.pop((provider, lease), "") if lease else ""
        stated = sane_limit(outcome.limit)
        # the fleet's limit, as stated by the server: locally this worker's share of it (like a
        # configured max_rpm); Redis gets it whole
        outcome_here = (replace(outcome, limit=self._slot.share(stated))
                        if stated else outcome)

        def remote() -> ReleaseResult:
            held_lease = self._leases.take((provider, fingerprint), lease)
            lease_id, tokens = held_lease if held_lease else ("", 0)
            # a request the fallback handed out, merged back under its local name: its
            # window entry moves to its end (marked if refused) as a Redis lease's does
            local_tokens = (self._local.open_tokens(provider, fingerprint, lease)
                            if held_lease is None and lease and not paired else None)
            member = lease_id if local_tokens is None else self._local_name(lease)
            try:
                reply = self._release(
                    keys=[self._name(provider, "p"), state_key, lease_key, window_key,
                          self._name(provider, "e")],
                    args=lua_release.release_args(self._now_arg(), outcome, policy, lease=member,
                                                  tokens=tokens if local_tokens is None
                                                  else local_tokens,
                                                  state_ttl_s=self.options.state_ttl_s,
                                                  new_epoch=os.urandom(8).hex()))
            except self._redis_error:
                if lease_id:  # keep it for a later release; it also expires in Redis on its own
                    self._leases.hold((provider, fingerprint), lease_id,
                                      self.options.lease_ttl_s, tokens)
                raise
            res, standing = release_result(reply[:7])
            with self._lock:
                self._remember(provider, fingerprint, res.blocked_until, res.removed)
                self._standing[(provider, fingerprint)] = standing
                if member:
                    self._ended((provider, fingerprint), member, outcome.kind == "rate_limited")
            # the request also counted against this worker's local share (its probation pair),
            # or was handed out by the fallback and ends now that Redis is back
            local_lease = paired or (lease if held_lease is None else "")
            if local_lease:
                self._local.release(provider, fingerprint, outcome_here, policy,
                                    lease=local_lease)
            self._heartbeat(provider, text(reply[7]))
            return res

        def local() -> ReleaseResult:
            refused = outcome.kind == "rate_limited"
            ended = self._leases.take((provider, fingerprint), lease)
            if ended is not None:   # ended in Redis when it answers again
                self._leases.ended_away((provider, fingerprint), ended[0])
                self._local.end_elsewhere(provider, fingerprint, ended[0])
            with self._lock:
                if ended is not None:
                    moved = self._ended_away((provider, fingerprint), ended[0], refused,
                                             (ended[1], policy.window_s))
                else:
                    moved = self._ended_away((provider, fingerprint),
                                         self._local_name(paired or lease), refused)
                late = moved is not None and not self._degraded   # Redis returned meanwhile
            if late and moved is not None:
                self._merge_late({(provider, fingerprint): [moved]})
            # the local lease this request holds: its pair, or its own when taken locally; a
            # lease taken from Redis alone names none here and ends no local request
            res = self._local.release(provider, fingerprint, outcome_here, policy,
                                      lease=paired or lease)
            removed = res.removed
            with self._lock:
                if stated and policy.learn_limits:
                    self._learned_rpm[(provider, fingerprint)] = stated
                # the local deadline on Redis's clock, as _known keeps them
                on_redis = res.blocked_until - self._offset if res.blocked_until > 0 else 0.0
                if removed or on_redis > self._known.get(
                        (provider, fingerprint), (0.0, False))[0]:
                    _, was_removed = self._learned.get((provider, fingerprint), (0.0, False))
                    self._learned[(provider, fingerprint)] = (res.blocked_until,
                                                              was_removed or removed)
                    self._remember(provider, fingerprint, on_redis, removed)
            return res

        return self._call(remote, local)

    def snapshot(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy) -> ProviderSnapshot:
        names = [self._name(provider, "p")]
        for spec in keys:
            names += self._key_names(provider, spec.fingerprint)
        names.append(self._name(provider, "e"))

        def remote() -> ProviderSnapshot:
            for _ in range(2):   # read again after a resync: the state it merged back
                reply = self._snapshot(keys=names, args=[
                    self._now_arg(), policy.window_s, len(keys), self.options.state_ttl_s,
                    os.urandom(8).hex()])
                if not self._heartbeat(provider, text(reply[4 + 10 * len(keys)])):
                    break
            return provider_snapshot(provider, keys, reply)

        return self._call(remote, lambda: self._local.snapshot(
            provider, self._slot.local_keys(keys), self._slot.local_policy(policy)))

    def leave(self, provider: str) -> None:
        """This process's place in the fleet's queue for ``provider`` given up (while Redis is
        away there is no queue to leave: the place expires)."""
        fleet = self._fleet
        if fleet is not None:
            self._call(lambda: fleet.leave(provider), lambda: None)

    def close(self) -> None:
        """Give this worker's slot back, close the client's connections and stop a reconnect
        probe under way, waiting for its thread (the backend may still be used; it reconnects
        and claims a slot anew): reconnect.py says why. During an outage it asks nothing of
        Redis and raises nothing."""
        with retries_off(self._retry):
            # the slot given back, for the worker replacing this one; while Redis is away
            # nothing is asked of it (its claim lapses there)
            with contextlib.suppress(self._redis_error):
                self._slot.release(remote=not self._degraded)
            self._prober.stop(self._redis.close, 2 * self.options.socket_timeout_s + 1.0)
            self._redis.close()   # what the stopped run opened meanwhile

    def adopt(self, name: str, former: Sequence[str], fingerprints: Sequence[str]) -> None:
        """The keys' state kept under a former state name read into ``name`` (:mod:`.rename`)."""
        self._call(lambda: carry_over(self._redis, name, former, fingerprints, self._key_names,
                                      self._name, self.options.state_ttl_s), list)

    # ------------------------------------------------------------------ internals

    def _name(self, provider: str, kind: str) -> str:
        return f"{self.options.key_prefix}:{{{provider}}}:{kind}"

    def _key_names(self, provider: str, fingerprint: str) -> list[str]:
        base = f"{self.options.key_prefix}:{{{provider}}}"
        return [f"{base}:k:{fingerprint}", f"{base}:w:{fingerprint}", f"{base}:l:{fingerprint}"]

    def _remember(self, provider: str, fingerprint: str, until: float, removed: bool) -> None:
        """What Redis said about a key; deadlines only move later (call with the lock held)."""
        old_until, old_removed = self._known.get((provider, fingerprint), (0.0, False))
        self._known[(provider, fingerprint)] = (max(old_until, until), old_removed or removed)

    def _resync(self, provider: str, epoch: str) -> None:
        """Redis holds another incarnation of the provider's pool state than this process knew
        (it restarted empty, or this process is new): merge this process's deadlines, removals
        and recent requests into it, then take its epoch. One thread does it; the others wait."""
        with self._resync_lock:
            if self._epochs.get(provider) == epoch:
                return   # another thread of this process already did
            with self._lock:
                first = provider not in self._epochs
                known = {k: (self._to_local(u), rm) for k, (u, rm) in self._known.items()
                         if k[0] == provider}
                recent = {k: [*self._merged.get(k, []), *self._recent.get(k, [])]
                          for k in self._recent.keys() | self._merged.keys() if k[0] == provider}
                standings = {k: st.shifted(self._offset) for k, st in self._standing.items()
                             if k[0] == provider}
            # a Redis that lost the pool state lost the workers' slots too: claimed again at
            # once, not with the next acquire (Redis may be away by then, the slot believed
            # another's), by a process that held one (a forked child or status reader: none)
            if self._slot.workers > 1:
                held = self._slot.index is not None
                self._slot.lost()
                if held:
                    self._slot.claim()
            if not first:
                log.warning("credential pool: Redis at %s lost the pool state of %s "
                            "(restarted?); merging what this worker knows back", self.url,
                            provider)
                self._merge_back(known, recent, standings)
                self._hand_back_leases(provider)
            with self._lock:
                self._epochs[provider] = epoch

    def _heartbeat(self, provider: str, epoch: str) -> bool:
        """After a release or status read through Redis (``epoch``: Redis's): a Redis that
        restarted empty resyncs at once (True), the slot claimed again; the slot believed may be
        a new worker's, and both served its larger share once Redis went away. Otherwise a slot
        held is renewed when due (long requests ask only through releases); none is claimed (a
        ``keys status`` process is no worker). An outage here is the next call's to meet."""
        try:
            known = self._epochs.get(provider)
            if known is not None and epoch != known:
                self._resync(provider, epoch)
                return True
            if self._slot.held() is not None and self._slot.due():
                self._slot.claim()
        except self._redis_error as exc:
            outage_reason(exc)
        return False

    def _merge_back(self, learned: dict[tuple[str, str], tuple[float, bool]],
                    sent: dict[tuple[str, str], list[Sent]],
                    standings: dict[tuple[str, str], Standing] | None = None,
                    provider_breakers: dict[str, BreakerState] | None = None) -> None:
        """Deadlines (only later), removals, requests sent (local times) and keys' standings
        (local times; :func:`.quarantine.merge_standing`: removal, the most strikes and the more
        cautious breaker win) into Redis."""
        local_now = self._local.now()
        standings = standings or {}
        provider_breakers = provider_breakers or {}
        items = learned.keys() | sent.keys() | standings.keys()
        items |= {(p, fp) for p in provider_breakers for (q, fp) in learned.keys() | sent.keys()
                  if q == p}
        for item in items:
            provider, fp = item
            state_key, window_key, _ = self._key_names(provider, fp)
            self._merge(keys=[state_key, window_key, self._name(provider, "p")],
                        args=lua_recovery.merge_args(
                            self._now_arg(), local_now, learned.get(item, (0.0, False)),
                            standings.get(item, Standing()), provider_breakers.get(provider),
                            sent.get(item, []), self.options.state_ttl_s, os.urandom(6).hex()))

    def _hand_back_leases(self, provider: str) -> None:
        """This process's leases still open on ``provider``'s keys, into a Redis that lost them
        (:data:`.lua_recovery.HOLD`): handed back to the window alone, a request in flight across
        the restart counted in no key's in-flight cap, and another went out beside it."""
        for fp, open_ in self._leases.open_on(provider).items():
            if open_:
                self._hold_again(keys=[self._key_names(provider, fp)[2]],
                                 args=[self._now_arg(), *(x for pair in open_ for x in pair)])

    def _hold(self, provider: str, fingerprint: str, lease: str, tokens: int, window_s: float,
              ttl: float) -> None:
        """Remember an open lease and the request sent through Redis under it."""
        self._leases.hold((provider, fingerprint), lease, ttl or self.options.lease_ttl_s, tokens)
        local_now = self._local.now()
        with self._lock:
            recent = self._recent.setdefault((provider, fingerprint), deque())
            while recent and recent[0][0] <= local_now - recent[0][2]:
                recent.popleft()
            recent.append((local_now, tokens, window_s, lease))

    def _ended(self, item: tuple[str, str], lease: str, refused: bool) -> None:
        """The request ``lease`` names (a Redis lease, or a merged fallback request's
        :meth:`_local_name`) ended now, as RELEASE moves its window entry to now (``r:`` if
        refused): so does its entry kept for a Redis that loses the window. At its send time it
        left the window before the server's slot freed, and a refused one came back counted as
        admitted (call with the lock held)."""
        found = take((self._recent.get(item, deque()), self._before.get(item, []),
                      self._merged.get(item, [])), lease)
        if found is not None:
            found[0].append(ended(found[1], self._local.now(), refused))

    def _ended_away(self, item: tuple[str, str], name: str, refused: bool,
                    sent: tuple[int, float] | None = None) -> Sent | None:
        """The request ``name`` names (a Redis lease, or :meth:`_local_name`) ended while Redis
        was away: its entry goes to ``_sent`` at its end, ``r:``-marked if refused, as RELEASE
        does, and is merged back by name, restart or not. At its send time Redis freed the key
        while the server still counted it; unmarked, the next learned limit came out one over.
        ``sent``: (tokens, window) if not listed. The entry, or None (call with the lock held)."""
        found = take((self._before.get(item, []), self._sent.get(item, [])), name)
        sent = found[1][1:3] if found else sent
        if sent is None or not name:
            return None
        entry = ended((0.0, sent[0], sent[1], name), self._local.now(), refused)
        self._sent.setdefault(item, []).append(entry)
        return entry

    def _local_name(self, lease: str) -> str:
        """A request the local fallback handed out, as Redis's window names it once merged back:
        its local lease under this process's worker id (unique across the fleet), so its release
        finds and moves it, and a second merge of it changes nothing."""
        return f"{self._slot.worker_id}-{lease}" if lease else ""

    def _to_local(self, until: float) -> float:
        """A deadline on Redis's clock moved onto the local one (0: none, stays 0)."""
        return until + self._offset if until > 0 else 0.0

    def _now_arg(self) -> float:
        return self._clock() if self._clock is not None else -1.0

    def _rejoin_by(self, res: AcquireResult, provider: str, keys: Sequence[KeySpec],
                   at_monotonic: float) -> AcquireResult:
        """A local refusal retried no later than when the fleet's budget may serve again: at
        ``at_monotonic`` (the next probe, the probation's end) for a key refused only by this
        worker's share, at its deadline for a cooling one. A key that can never serve (removed,
        ``available_at`` None) stays so."""
        if res.available_at is None:
            return res
        at = res.now + max(0.0, at_monotonic - self._monotonic())
        rejoin = self._local.earliest_rejoin(provider, [k.fingerprint for k in keys], at)
        if rejoin is None:
            return res
        return replace(res, available_at=min(res.available_at, rejoin))

    def _call(self, remote: Callable[[], T], local: Callable[[], T]) -> T:
        if self._degraded and not self._rejoined():
            return local()
        try:
            return remote()
        except self._redis_error as exc:
            self._fall_back(self._outage(exc))
            return local()

    def _outage(self, exc: Exception) -> str:
        """:func:`outage_reason`; for another's data under the prefix, the keys that hold it."""
        why = outage_reason(exc)
        self._foreign = why == REFUSALS["WRONGTYPE"]
        if self._foreign:
            with contextlib.suppress(self._redis_error):
                why = describe(misplaced_keys(self._redis, self.options.key_prefix))
        return why

    def _fall_back(self, why: str) -> None:
        """Switch to the local fallback (``why``: :func:`.outage.redis_unavailable`'s words), warning
        once per outage."""
        with self._lock:
            self._next_probe = self._monotonic() + self.options.reconnect_interval_s
            if self._degraded:
                return
            local_now = self._local.now()
            for (provider, fp), recent in self._recent.items():
                own = [e for e in recent if e[0] > local_now - e[2]]
                # what this worker sent through Redis goes back to a Redis that lost it (all
                # the workers' together are the window it had)
                self._before[(provider, fp)] = own
                if self.options.workers == 1 or (provider, fp) not in self._shares:
                    self._local.seed(provider, fp, [(e[0], e[1]) for e in own])
            self._recent.clear()
            # merged back after an earlier outage (counted locally since): in _before again
            for item, merged in self._merged.items():
                self._before.setdefault(item, []).extend(
                    e for e in merged if e[0] > local_now - e[2])
            self._merged.clear()
            # the fleet's window, shared out: a worker that sent few of its requests must not
            # spend a whole share on top of a full window (the others count theirs)
            for (provider, fp), times in self._shares.items():
                live = [(t, tok) for t, tok in times if t > local_now - self._window_s]
                self._local.seed(provider, fp, live)
            for (provider, fp), (until, removed) in self._known.items():
                self._local.seed_state(provider, fp, self._to_local(until), removed)
            # quarantines and open breakers as Redis last said: not back into rotation here
            for (provider, fp), standing in self._standing.items():
                self._local.seed_standing(provider, fp, standing.shifted(self._offset))
            for provider in {p for p, _ in self._known}:   # its requests in flight there
                self._local.hold_elsewhere(provider, self._leases.open_on(provider))
            for (provider, fp), lr in self._learned_rpm.items():
                # this worker's share of what the key admits, like a configured max_rpm's
                self._local.seed_limit(provider, fp, self._slot.share(lr))
            self._degraded = True
            self.outages += 1
        log.warning("credential pool: Redis at %s %s; using local pool state with each key's "
                    "budget divided by %d workers until it accepts writes again",
                    self.url, why, self.options.workers)

    def _rejoined(self) -> bool:
        """Probe Redis at most once per ``reconnect_interval_s``, in a thread of the probe's own
        (:class:`.reconnect.BackgroundProbe`: a stuck Redis stalls no request); True when back
        on Redis."""
        with self._lock:
            if self._monotonic() < self._next_probe:
                return False
            self._next_probe = self._monotonic() + self.options.reconnect_interval_s
        self._prober.run()
        return not self._degraded

    def _recover(self, answered: Callable[[], bool]) -> bool:
        """One probe (``answered`` called once Redis answered PING; False: the backend was closed
        meanwhile, go no further); True when back on Redis.

        Before switching back, this worker's local deadlines, removals and sent requests are
        merged into Redis, so a Redis that restarted empty still counts the fleet's recent
        requests and the budgets are not spent twice in one window."""
        with self._lock:
            learned = dict(self._learned)
            sent = {k: list(v) for k, v in self._sent.items()}
            # what this merge hands over: other threads may still serve locally meanwhile, and
            # what they add is merged by the next recovery, not dropped with these
            handed = (dict(learned), {k: list(v) for k, v in sent.items()})
        with self._lock:
            for item, (until, removed) in self._known.items():
                was_until, was_removed = learned.get(item, (0.0, False))
                learned[item] = (max(self._to_local(until), was_until), removed or was_removed)
        standings = self._local.standings()
        provider_breakers = self._local.provider_breakers()
        try:
            self._redis.ping()
            if not answered():   # the backend was closed meanwhile
                return False
            # a Redis that answers but refuses writes (OOM, MISCONF, READONLY) is still away:
            # rejoining it would only fall back again on the next call, warning each time
            self._redis.set(f"{self.options.key_prefix}:probe:{self._slot.worker_id}", "1",
                            px=1000)
            if self._foreign and misplaced_keys(self._redis, self.options.key_prefix):
                return False   # still someone else's data where the scripts keep theirs
            # a Redis that restarted empty lost the fleet's window too: this worker's share
            # of it goes back (each worker's share together cover what was there)
            lost = {p for p in {k[0] for k in self._before}
                    if text(self._redis.get(self._name(p, "e")) or "") != self._epochs.get(p)}
            with self._lock:
                before = {k: v for k, v in self._before.items() if k[0] in lost}
            for item, entries in before.items():
                sent[item] = sorted([*entries, *sent.get(item, [])])
            if not answered():
                return False
            self._merge_back(learned, sent, standings, provider_breakers)
            for provider in lost:
                self._hand_back_leases(provider)
            self._leases.settle(self._redis, self._key_names)
        except self._redis_error as exc:
            outage_reason(exc)
            return False
        with self._lock:
            before_all, self._before = self._before, {}
            # what Redis now holds at least (merged); a later resync hands back this, not the
            # view from before the outage (a key restored here is not quarantined again)
            self._standing = {k: st.shifted(-self._offset) for k, st in standings.items()}
            # every active worker probes at least once per reconnect interval, so by then the
            # others have noticed too and their local requests are in Redis
            self._probation_until = self._monotonic() + min(self._window_s,
                                                            self.options.reconnect_interval_s)
        with self._lock:
            for item, value in handed[0].items():
                if self._learned.get(item) == value:
                    del self._learned[item]
            late: dict[tuple[str, str], list[Sent]] = {}
            for item, entries in self._sent.items():
                late[item] = besides(entries, handed[1].get(item, []))
            self._sent = {}
            # what this recovery merged back, kept for a Redis that loses its window later
            for item, merged in [*self._merged.items(), *before_all.items(), *handed[1].items(),
                                 *late.items()]:
                self._merged[item] = latest([*self._merged.get(item, []), *merged],
                                            self._local.now())
            was = self._degraded
            self._degraded = self._foreign = False
            self._local.drop_elsewhere()
        self._merge_late({k: v for k, v in late.items() if v})
        if was:
            log.warning("credential pool: Redis at %s is reachable again; shared pool state "
                        "resumed", self.url)
        return True

    def _merge_late(self, sent: dict[tuple[str, str], list[Sent]]) -> None:
        """Requests the fallback served while the outage was being merged back: into Redis
        now; if it is gone again, kept for the next merge."""
        if not sent:
            return
        try:
            self._merge_back({}, sent)
        except self._redis_error as exc:
            outage_reason(exc)
            with self._lock:
                for item, entries in sent.items():
                    self._sent[item] = sorted([*entries, *self._sent.get(item, [])])


def backend_from_settings(settings: Settings) -> RedisPoolState:
    """The Redis backend for ``credential_pool.backend: redis`` (called by
    :func:`hermes_core.agent.credential_pool.backend_from_settings`).

    ``redis_url`` comes from the config or ``HERMES_REDIS_URL`` (mapped by ``load_settings``).
    Building never fails because Redis is down: the first call falls back with a warning.
    """
    cp = settings.credential_pool
    # a lease outlives its request, which the deadline bounds (its release a moment after)
    ttl = max(cp.redis_lease_ttl_s, settings.llm.deadline_s + LEASE_MARGIN_S)
    return RedisPoolState(cp.redis_url, options=replace(options_from_settings(cp), lease_ttl_s=ttl),
                          config_file=settings.source)
