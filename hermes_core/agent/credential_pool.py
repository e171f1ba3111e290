"""CredentialPool: which key of a provider serves the next call.

The pool is a thin shell: it maps credentials to their fingerprints (the state never sees a
secret), asks the state backend for a key in one call, and reports each call's outcome in one call.
Strategies, RPM/TPM windows, 429 deadlines and breakers are decided in :mod:`hermes_core.agent.pool.state` and
:mod:`.breaker`. Safe to share between threads and asyncio tasks.

Usage by the call loop::

    lease = pool.acquire("openai")         # raises NoCredentialAvailable(available_at=...)
    ... call with lease.credential ...
    pool.success(lease) | pool.cool_down(lease, retry_after) | pool.remove(lease, why)
        | pool.failure(lease) | pool.release(lease)

Code of its own that waits for a key (not the call loop) waits in a place, so that its process's
place in a Redis fleet's queue goes when it stops waiting::

    with pool.place("openai") as place:    # or: async with ... / await place.aacquire()
        lease = place.acquire()            # retried by the caller as it sees fit

Exactly one of the outcome methods must follow each acquire (it also drops the in-flight count).
A :class:`Lease` names the request to the state (its window entry, whether it is a breaker's
probe); the outcome methods also take a bare :class:`Credential`, which ends the key's oldest
open request and is never a probe.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from hermes_core.agent.pool.clock import STEADY
from hermes_core.agent.pool.off_loop import OffLoop
from hermes_core.agent.pool.quarantine import quarantine_recheck
from hermes_core.agent.pool.state import (
    STRATEGIES,
    InMemoryPoolState,
    KeySpec,
    Outcome,
    PoolPolicy,
    PoolStateBackend,
    RateLimitInfo,
    ReleaseResult,
    Strategy,
)
from hermes_core.agent.pool.waiters import SlotWaiters
from hermes_core.errors import ConfigError, DependencyMissing, NoCredentialAvailable
from hermes_core.event_loop import on_event_loop
from hermes_core.forked import own_random, renew_in_child
from hermes_core.redact import Redactor, redact
from hermes_core.types import Credential

if TYPE_CHECKING:
    from hermes_core.config import Settings

log = logging.getLogger("hermes_core.pool")

AlertHook = Callable[[str, str, str], None]   # (provider, fingerprint, reason)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Lease:
    """One acquired use of a key: the credential, the request's id in the pool state, and whether
    it is a half-open breaker's single probe. Hand it back to exactly one outcome method."""

    credential: Credential
    lease_id: str = ""
    probe: bool = False

    @property
    def provider(self) -> str:
        return self.credential.provider

    @property
    def fingerprint(self) -> str:
        return self.credential.fingerprint

    @property
    def secret(self) -> str:
        return self.credential.secret

    def __repr__(self) -> str:
        return (f"Lease(provider={self.provider!r}, fingerprint={self.fingerprint!r}, "
                f"probe={self.probe})")


Held = Lease | Credential

#: How long a cancelled request's clean-up waits for its acquire to return (a Redis round trip
#: bounded by the client's socket timeout; this only guards against a wait with no end).
ABANDONED_WAIT_S = 60.0


class _Outcome(Generic[T]):
    """What a worker thread's call returned, told to whoever cleans up after a caller that left:
    ``result`` is ``(value,)``, or None when the call raised."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: tuple[T] | None = None

    def ended(self, result: tuple[T] | None) -> None:
        self.result = result
        self.done.set()


def _lease(held: Held) -> Lease:
    return held if isinstance(held, Lease) else Lease(held)


@dataclass(frozen=True, slots=True)
class KeyStatus:
    """One key as ``hermes-core keys status`` shows it (fingerprint only)."""

    provider: str
    fingerprint: str
    # ok | blocked | quarantined | removed | breaker_open | probing | at_limit
    state: str
    blocked_until: float | None
    blocked_for_s: float
    requests_last_window: int
    in_flight: int
    weight: float
    max_rpm: int | None
    recheck_at: float | None = None   # quarantined: when one request rechecks the key
    auth_failures: int = 0            # rejections in a row (401/403/402)

    def as_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "fingerprint": self.fingerprint, "state": self.state,
                "blocked_until": self.blocked_until, "blocked_for_s": round(self.blocked_for_s, 3),
                "requests_last_minute": self.requests_last_window, "in_flight": self.in_flight,
                "weight": self.weight, "max_rpm": self.max_rpm, "recheck_at": self.recheck_at,
                "auth_failures": self.auth_failures}


def policy_from_settings(settings: Settings, strategy: Strategy | None = None) -> PoolPolicy:
    cp = settings.credential_pool
    return PoolPolicy(strategy=strategy or cp.rotation, window_s=cp.window_s,
                      breaker_failures=cp.breaker_failures,
                      breaker_cooldown_s=cp.breaker_cooldown_s,
                      default_cooldown_s=cp.default_cooldown_s, burst=cp.pace_burst,
                      max_in_flight=cp.max_in_flight_per_key, learn_limits=cp.learn_limits,
                      auth_recheck_s=cp.auth_recheck_s, auth_recheck_max_s=cp.auth_recheck_max_s,
                      auth_max_strikes=cp.auth_max_strikes)


def backend_from_settings(settings: Settings,
                          clock: Callable[[], float] = STEADY) -> PoolStateBackend:
    """The configured state backend; ``redis`` loads :mod:`hermes_core.agent.pool.redis`."""
    cp = settings.credential_pool
    if cp.backend == "memory":
        return InMemoryPoolState(clock)
    try:
        module = importlib.import_module("hermes_core.agent.pool.redis")
    except ModuleNotFoundError as e:
        if e.name == "redis":
            raise DependencyMissing("credential_pool.backend: redis", "redis") from None
        raise ConfigError("the redis state backend is not available in this build",
                          file=settings.source, key_path="credential_pool.backend") from None
    backend: PoolStateBackend = module.backend_from_settings(settings)
    return backend


def state_names(keys: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Per provider, the name its keys' state is kept under in the backend, and the providers
    sharing it. Why: a key's limits are the key's, whatever name it is listed under; two
    provider names listing one key (aliases of one endpoint) kept a window and a cooldown each,
    and sent the key twice its limit. Providers linked by a key they list (directly or through
    others) share one name, ``shared:`` and the least fingerprint among the keys more than one
    of them lists: named by a key, not by the members, so adding or removing an alias (while
    two still list that key) leaves the state where it is. A provider sharing no key keeps its
    own name (its state where it always was). ``keys``: each provider's key fingerprints."""
    parent = {p: p for p in keys}

    def root(p: str) -> str:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    owner: dict[str, str] = {}
    shared: set[str] = set()
    for provider, fps in keys.items():
        for fp in fps:
            if fp in owner:
                if owner[fp] != provider:
                    shared.add(fp)
                a, b = root(owner[fp]), root(provider)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                owner[fp] = provider
    groups: dict[str, list[str]] = {}
    for p in keys:
        groups.setdefault(root(p), []).append(p)
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for members in groups.values():
        names = tuple(sorted(members))
        tag = min((fp for p in members for fp in keys[p] if fp in shared), default="")
        for p in members:
            out[p] = (f"shared:{tag}" if len(names) > 1 else p, names)
    return out


def former_names(name: str, group: tuple[str, ...], fingerprints: Iterable[str]) -> list[str]:
    """The names the state kept under ``name`` may have had before an edit of the config, most
    recent first: for a group, its name as decision 227 joined it (``glm+zhipu``), then another
    key's group (the least shared key rotated out), then each member's own (the group newly
    formed); for a provider alone, the group of each of its keys it was in (its aliases
    removed). Read once by a backend that keeps state across restarts (``adopt``)."""
    fps = sorted(set(fingerprints))
    if len(group) > 1:
        return ["+".join(group), *(f"shared:{fp}" for fp in fps if f"shared:{fp}" != name),
                *group]
    return [f"shared:{fp}" for fp in fps]


class CredentialPool:
    """Keys per provider with weights and limits, over a :class:`PoolStateBackend`."""

    def __init__(self, credentials: Mapping[str, Sequence[Credential]], *,
                 policy: PoolPolicy | None = None,
                 strategies: Mapping[str, Strategy] | None = None,
                 backend: PoolStateBackend | None = None,
                 rng: random.Random | None = None,
                 on_alert: AlertHook | None = None) -> None:
        self.policy = policy or PoolPolicy()
        self.backend: PoolStateBackend = backend or InMemoryPoolState()
        self._rng = rng or own_random()
        self._on_alert = on_alert
        self._creds: dict[str, tuple[Credential, ...]] = {}
        self._by_fp: dict[tuple[str, str], Credential] = {}
        self._specs: dict[str, tuple[KeySpec, ...]] = {}
        self._policies: dict[str, PoolPolicy] = {}
        self._removed: set[tuple[str, str]] = set()   # seen removed by this process
        self._removed_lock = threading.Lock()
        # requests of this process waiting for a key, per provider (see pool.waiters)
        self.waiters = SlotWaiters()
        # requests the pool refused that still want the provider's keys (note_refused, leave)
        self._refused: Counter[str] = Counter()
        self._refused_lock = threading.Lock()
        # releases and leaves that must not run on an event loop (leave, in_thread)
        self._off_loop = OffLoop()
        # keys handed in by hand (no settings loaded) are known to every writer from here on:
        # the pool is where they start to flow into the SDKs and their debug lines
        Redactor(c.secret for creds in credentials.values() for c in creds)
        for provider, creds in credentials.items():
            unique: dict[str, Credential] = {}
            for c in creds:
                if c.fingerprint in unique:
                    log.warning("provider %s lists key %s twice; using it once", provider,
                                c.fingerprint)
                    continue
                unique[c.fingerprint] = c
            self._creds[provider] = tuple(unique.values())
            self._by_fp.update({(provider, fp): c for fp, c in unique.items()})
            self._specs[provider] = tuple(KeySpec(c.fingerprint, c.weight, c.max_rpm, c.max_tpm)
                                          for c in unique.values())
            strategy = (strategies or {}).get(provider)
            if strategy is not None and strategy not in STRATEGIES:
                raise ValueError(f"unknown rotation strategy {strategy!r} for provider {provider}")
            self._policies[provider] = (replace(self.policy, strategy=strategy)
                                        if strategy else self.policy)
        self._state = state_names({p: [c.fingerprint for c in cs] for p, cs in self._creds.items()})
        # state names whose state under a former name (former_names) was read, or is being
        self._adopted: set[str] = set()
        self._adopt_lock = threading.Lock()
        renew_in_child(self)
        for name, group in set(self._state.values()):
            if len(group) > 1:
                log.info("providers %s list the same key(s): one state for them, kept under %s; "
                         "state a shared backend kept under a former name (the members' own, "
                         "an older group's) is read once, and processes not yet restarted keep "
                         "counting under that name", ", ".join(group), name)
                self._one_limit_per_key(group)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): locks of its own, and none of the parent's
        refused requests (counted as the child's, they kept its last waiting request from giving
        the process's place in the fleet's queue up)."""
        self._removed_lock = threading.Lock()
        self._refused_lock = threading.Lock()
        self._adopt_lock = threading.Lock()
        self._refused = Counter()

    def _one_limit_per_key(self, group: tuple[str, ...]) -> None:
        """A key listed by several providers of a group with different ``max_rpm`` / ``max_tpm``
        takes the stricter under every name. Why: the group has one window for the key, and each
        name checked it against its own limit, so the alias with the larger one filled the window
        past what the other entry said the key takes. A limit one entry leaves out is no
        conflict (the stated one applies)."""
        for fp in {s.fingerprint for p in group for s in self._specs[p]}:
            specs = [s for p in group for s in self._specs[p] if s.fingerprint == fp]
            limits: dict[str, int | None] = {}
            for field in ("max_rpm", "max_tpm"):
                stated = sorted({v for s in specs if (v := getattr(s, field)) is not None})
                limits[field] = stated[0] if stated else None
                if len(stated) > 1:
                    log.warning("key %s is listed by providers %s with %s %s: the key has one "
                                "window, so the stricter %d applies under every name", fp,
                                ", ".join(group), field, " and ".join(map(str, stated)), stated[0])
            for p in group:
                self._specs[p] = tuple(replace(s, max_rpm=limits["max_rpm"],
                                               max_tpm=limits["max_tpm"])
                                       if s.fingerprint == fp else s for s in self._specs[p])

    @classmethod
    def from_settings(cls, settings: Settings, backend: PoolStateBackend | None = None, *,
                      clock: Callable[[], float] = STEADY, rng: random.Random | None = None,
                      on_alert: AlertHook | None = None) -> CredentialPool:
        """Keys of every routed provider (and every ``credentials`` entry) from settings.

        Builds the settings' redactor first: settings made by hand rather than by load_settings
        have not registered their secrets yet, and the pool is where those secrets start to flow
        into SDK calls and their debug logs."""
        settings.redactor()
        names: list[str] = [p.name for p in settings.llm.routing.providers]
        names += [n for n in settings.credentials if n not in names]
        if not settings.llm.routing.providers:  # no provider list: the two official APIs by env key
            names += [n for n in ("openai", "anthropic") if n not in names]
        creds = {n: settings.credentials_for(n) for n in names}
        strategies: dict[str, Strategy] = {
            n: c.rotation_strategy for n, c in settings.credentials.items() if c.rotation_strategy}
        return cls(creds, policy=policy_from_settings(settings), strategies=strategies,
                   backend=backend or backend_from_settings(settings, clock), rng=rng,
                   on_alert=on_alert)

    # ------------------------------------------------------------------ queries

    @property
    def providers(self) -> tuple[str, ...]:
        return tuple(self._creds)

    def has_keys(self, provider: str) -> bool:
        """True when the provider has a configured key this process has not seen removed."""
        if not self._removed:   # nothing ever removed (the usual case): no lock, no scan
            return bool(self._creds.get(provider))
        with self._removed_lock:
            return any((provider, c.fingerprint) not in self._removed
                       for c in self._creds.get(provider, ()))

    def all_rejected(self, provider: str) -> bool:
        """True when the provider has keys and the provider rejected every one of them (each
        removed, or quarantined until a recheck): asks the state backend, for messages."""
        rows = self.status(provider)
        return bool(rows) and all(r.state in ("removed", "quarantined") for r in rows)

    def configured(self, provider: str) -> bool:
        """True when keys were configured for the provider (removed ones included)."""
        return bool(self._creds.get(provider))

    def credentials(self, provider: str) -> tuple[Credential, ...]:
        return self._creds.get(provider, ())

    def now(self) -> float:
        return self.backend.now()

    # ------------------------------------------------------------------ acquire

    def acquire(self, provider: str, *, tokens: int = 0, hold_s: float | None = None) -> Lease:
        """A lease on the next key for ``provider``; raises :class:`NoCredentialAvailable` with
        the time the earliest key frees (None when no key can ever serve). ``hold_s``: the
        longest the request may run (its deadline's remainder), which bounds its lease in a
        shared backend (:attr:`PoolPolicy.hold_s`); None, the backend's lease TTL."""
        specs = self._specs.get(provider, ())
        if not specs:
            raise NoCredentialAvailable(provider, None)
        name, group = self._state[provider]
        if name not in self._adopted:
            self._adopt(name, group)
        policy = self._policies[provider]
        res = self.backend.acquire(name, specs, policy if hold_s is None else replace(
            policy, hold_s=hold_s), tokens=tokens, rand=self._rng.random())
        if res.fingerprint is None:
            if res.available_at is None and res.recheck_at is None:
                self._note_all_removed(provider)
            raise NoCredentialAvailable(provider, res.available_at, now=res.now,
                                        recheck_at=res.recheck_at)
        return Lease(self._lookup(provider, res.fingerprint), res.lease, res.probe)

    def _adopt(self, name: str, group: tuple[str, ...]) -> None:
        """Once per state name, before its first acquire: a backend that keeps state across
        restarts (``adopt``, Redis) reads the keys' state kept under a former name of it, so an
        alias added or removed does not restart the keys from an empty window. Under a lock, so
        no request of this process starts state under the new name first."""
        adopt = getattr(self.backend, "adopt", None)
        with self._adopt_lock:
            if name in self._adopted:
                return
            if adopt is not None:
                fps = sorted({s.fingerprint for p in group for s in self._specs[p]})
                adopt(name, former_names(name, group, fps), fps)
            self._adopted.add(name)

    def place(self, provider: str) -> QueuePlace:
        """A caller's own wait for ``provider``'s keys: ``with pool.place("openai") as place:``
        (or ``async with``), then ``place.acquire()`` / ``await place.aacquire()`` as often as it
        likes (the call loop holds one per provider it asks, and :meth:`QueuePlace.leave` is how
        it stops). A refusal keeps the process's place in the fleet's queue
        (:meth:`note_refused`); leaving the block without a key (it gives up, raises, is
        cancelled or interrupted) gives that place up (:meth:`leave`), so the next process is
        served at once instead of polling behind it until the place expires. A plain
        :meth:`acquire` refused and never retried leaves its place to expire (``queue_grace_s``
        after the time it was told)."""
        return QueuePlace(self, provider)

    def note_refused(self, provider: str) -> None:
        """A request of this process the pool refused wants ``provider``'s keys until it is
        served or gives up (:meth:`leave`): the process's place in the fleet's queue is kept
        meanwhile, also before the request is in the wait queue (:attr:`waiters`)."""
        with self._refused_lock:
            self._refused[provider] += 1

    def leave(self, provider: str, *, served: bool = False) -> None:
        """A request :meth:`note_refused` got a key (``served``: the grant left the queue) or
        stops waiting for one (it fails over, passed its deadline, was cancelled or interrupted):
        when no other request of this process wants the keys (refused, or in the wait queue),
        the backend gives the process's place in the fleet's queue up, so the next process is
        served at once, not when the place expires. Called on a running event loop with a
        networked backend, the round trip runs in the pool's own threads (:mod:`.pool.off_loop`):
        the loop serves its other tasks meanwhile, and the leave is made even if it closes."""
        with self._refused_lock:
            left = self._refused[provider] = max(0, self._refused[provider] - 1)
        if served or left:
            return
        if self.backend.io_bound and on_event_loop():
            self._off_loop.submit(f"leave of {provider}'s queue", lambda: self._leave(provider))
        else:
            self._leave(provider)

    def _leave(self, provider: str) -> None:
        """Give the place up unless a request of this process wants it again by now."""
        name, group = self._state.get(provider, (provider, (provider,)))
        with self._refused_lock:   # the place is the group's (state_names): any member's
            if any(self._refused[p] for p in group):
                return
        if not any(self.waiters.waiting(p) for p in group):
            self.backend.leave(name)

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait up to ``timeout`` seconds for the releases and leaves handed off the event loop
        (:meth:`leave`, :meth:`in_thread`); True when all were made. For a shutdown that wants
        them made before the process exits (the interpreter waits for them at exit too), and
        for tests."""
        return self._off_loop.drain(timeout)

    def _note_all_removed(self, provider: str) -> None:
        """No key can ever serve (removed by another process too): ``has_keys`` says so."""
        with self._removed_lock:
            self._removed.update((provider, c.fingerprint) for c in self._creds.get(provider, ()))

    async def aacquire(self, provider: str, *, tokens: int = 0,
                       hold_s: float | None = None) -> Lease:
        if self.backend.io_bound:
            return await self.in_thread(lambda: self.acquire(provider, tokens=tokens,
                                                             hold_s=hold_s), lambda c: c)
        return self.acquire(provider, tokens=tokens, hold_s=hold_s)

    async def in_thread(self, fn: Callable[[], T], held: Callable[[T], Held | None]) -> T:
        """``fn()`` (which may acquire a key) in a worker thread, safe against cancellation.

        Cancelling the awaiting task does not stop the thread: a Redis acquire finishes after the
        caller is gone and nobody would ever release that key (its in-flight count and window slot
        leak until the keys expire). The thread is shielded, and when the caller was cancelled the
        key ``held(result)`` names is released as soon as the thread returns, by the pool's own
        threads (:mod:`.pool.off_loop`): not on the loop (a round trip to Redis would hold every
        other task up), nor by a callback of the loop (never run once the loop has closed).
        """
        outcome = _Outcome[T]()

        def run() -> T:
            try:
                result = fn()
            except BaseException:
                outcome.ended(None)
                raise
            outcome.ended((result,))
            return result

        fut = asyncio.ensure_future(asyncio.to_thread(run))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            # handed to the pool's own threads, not to a callback of this loop: the release
            # must neither hold the loop up (a round trip to Redis) nor be lost when it closes
            self._off_loop.submit("release of a cancelled request's key",
                                  lambda: self._release_abandoned(outcome, held))
            raise

    def _release_abandoned(self, outcome: _Outcome[T], held: Callable[[T], Held | None]) -> None:
        if not outcome.done.wait(ABANDONED_WAIT_S):
            log.warning("credential pool: a cancelled request's acquire did not return within "
                        "%.0fs; its key, if any, is left to expire", ABANDONED_WAIT_S)
            return
        if outcome.result is None:
            return
        cred = held(outcome.result[0])
        if cred is None:
            return
        try:
            self.release(cred)
        except Exception as e:  # nobody awaits it; the backend's expiry is the backstop
            log.warning("could not release key %s of a cancelled request: %s", cred.fingerprint,
                        type(e).__name__)

    def _lookup(self, provider: str, fingerprint: str) -> Credential:
        cred = self._by_fp.get((provider, fingerprint))
        if cred is None:
            raise KeyError(f"backend returned an unknown key {fingerprint} for {provider}")
        return cred

    # ------------------------------------------------------------------ outcomes

    def report(self, held: Held, outcome: Outcome, reason: str = "") -> float:
        """Apply one outcome; returns the key's blocked-until deadline afterwards."""
        return self._released(held, outcome, reason).blocked_until

    def _released(self, held: Held, outcome: Outcome, reason: str) -> ReleaseResult:
        lease = _lease(held)
        cred = lease.credential
        if lease.probe:
            outcome = replace(outcome, probe=True)
        policy = self._policies.get(cred.provider, self.policy)
        name, group = self._state.get(cred.provider, (cred.provider, (cred.provider,)))
        try:
            if lease.lease_id:
                res = self.backend.release(name, cred.fingerprint, outcome, policy,
                                           lease=lease.lease_id)
            else:
                res = self.backend.release(name, cred.fingerprint, outcome, policy)
        finally:   # one slot freed (even if recording it failed): one waiter asks again
            for p in group:
                self.waiters.wake(p)
        if outcome.kind == "removed":
            if res.removed:
                with self._removed_lock:
                    self._removed.add((cred.provider, cred.fingerprint))
            if res.changed:
                self._alert(cred, reason, res, policy)
        elif res.restored:
            log.warning("credential pool: provider %s key %s answered its recheck; back in "
                        "rotation", cred.provider, cred.fingerprint)
        return res

    async def areport(self, held: Held, outcome: Outcome) -> float:
        if self.backend.io_bound:
            return await asyncio.to_thread(self.report, held, outcome)
        return self.report(held, outcome)

    def success(self, held: Held, stated: RateLimitInfo | None = None) -> None:
        """The call succeeded; ``stated`` is what its answer said about the key's request limit
        (learned before any 429; nothing remaining blocks the key until the stated reset)."""
        if stated is None:
            self.report(held, Outcome("ok"))
        else:
            self.report(held, Outcome("ok", limit=stated.limit, remaining=stated.remaining,
                                      reset_s=stated.reset_s))

    def cool_down(self, held: Held, retry_after: float | None, *,
                  limit: int | None = None) -> float:
        """A 429: block the key until now + retry_after (the default when None); never earlier.
        ``limit``: the key's request limit per window when the server stated it."""
        return self.report(held, Outcome("rate_limited", retry_after, limit=limit))

    def remove(self, held: Held, reason: str = "") -> ReleaseResult:
        """401/403/402: quarantined (one request rechecks it later), removed for good after
        ``auth_max_strikes`` rejections in a row (see :func:`.pool.state.after_auth_failure`);
        alerts at each step with the fingerprint only. Returns which (``removed``, ``recheck_at``
        on the pool's clock), for the caller's final error to say whether the key comes back."""
        return self._released(held, Outcome("removed"), reason)

    def failure(self, held: Held) -> None:
        """A retryable failure (5xx, 529, timeout, connection): feeds the breakers."""
        self.report(held, Outcome("failure"))

    def release(self, held: Held) -> None:
        """The call ended without a signal about the key (bad request, cancelled)."""
        self.report(held, Outcome("released"))

    def _alert(self, cred: Credential, reason: str, res: ReleaseResult,
               policy: PoolPolicy) -> None:
        """A key left rotation (the provider rejected it): when a backup answers, this line is all
        a person sees, so it names the setting to fix and whether the key comes back."""
        where = f" (from {cred.source})" if cred.source else ""
        # the reason is the caller's words (perhaps a server's error text): no key of this pool in it
        reason = redact(reason, [c.secret for creds in self._creds.values() for c in creds])
        why = f" {reason}" if reason else ""
        if res.removed:
            fate = (f"removed after {policy.auth_max_strikes} rejections in a row"
                    if policy.auth_max_strikes > 1 else "removed from rotation")
            log.warning("credential alert: provider %s key %s%s was rejected%s and is out of "
                        "rotation for good (%s)", cred.provider, cred.fingerprint, where, why, fate)
        else:
            wait = (res.recheck_at or 0.0) - self.backend.now()
            fate = f"quarantined, rechecked in {max(0.0, wait):.0f}s"
            log.warning("credential alert: provider %s key %s%s was rejected%s; %s (one request; "
                        "removed after %d rejections in a row)", cred.provider, cred.fingerprint,
                        where, why, fate, policy.auth_max_strikes)
        if self._on_alert is not None:
            self._on_alert(cred.provider, cred.fingerprint,
                           f"{reason}; {fate}" if reason else fate)

    # ------------------------------------------------------------------ status

    def status(self, providers: str | Iterable[str] | None = None) -> list[KeyStatus]:
        """Every key's state, of all providers (None), of one (a name), or of several (names;
        an empty list names none)."""
        out: list[KeyStatus] = []
        names = ((providers,) if isinstance(providers, str)
                 else self.providers if providers is None else tuple(providers))
        for provider in names:
            specs = self._specs.get(provider, ())
            if not specs:
                continue
            pol = self._policies[provider]
            name, group = self._state[provider]
            if name not in self._adopted:
                self._adopt(name, group)
            snap = self.backend.snapshot(name, specs, pol)
            for spec, k in zip(specs, snap.keys, strict=True):
                limit = spec.max_rpm if spec.max_rpm is not None else k.learned_rpm
                at_limit = limit is not None and k.requests_in_window >= limit
                recheck = quarantine_recheck(k.auth_strikes, k.removed, k.breaker, pol)
                if k.removed:
                    state = "removed"
                elif recheck is not None:
                    state = "quarantined"
                elif k.blocked_until > snap.now:
                    state = "blocked"
                elif k.breaker.mode == "open" or snap.breaker.mode == "open":
                    state = "breaker_open"
                elif k.breaker.mode == "half_open" or snap.breaker.mode == "half_open":
                    state = "probing"
                elif at_limit:
                    state = "at_limit"
                else:
                    state = "ok"
                until = k.blocked_until if k.blocked_until > snap.now else None
                out.append(KeyStatus(provider, k.fingerprint, state, until,
                                     max(0.0, k.blocked_until - snap.now), k.requests_in_window,
                                     k.in_flight, spec.weight, spec.max_rpm, recheck,
                                     k.auth_strikes))
        return out


class QueuePlace:
    """One caller's wait for a provider's keys (:meth:`CredentialPool.place`). Not shared: one
    caller (thread or task) uses it, for as many acquires as it likes (a grant ends the wait,
    the next refusal starts another)."""

    def __init__(self, pool: CredentialPool, provider: str) -> None:
        self.pool = pool
        self.provider = provider
        self._refused = False   # refused and neither served nor gone since: wants the place

    def acquire(self, *, tokens: int = 0, hold_s: float | None = None) -> Lease:
        """:meth:`CredentialPool.acquire`, keeping the place across refusals."""
        try:
            lease = self.pool.acquire(self.provider, tokens=tokens, hold_s=hold_s)
        except NoCredentialAvailable as e:
            self._refused_by(e)
            raise
        self._end(served=True)      # a grant gave the place up inside the acquire
        return lease

    async def aacquire(self, *, tokens: int = 0, hold_s: float | None = None) -> Lease:
        """:meth:`CredentialPool.aacquire`, keeping the place across refusals."""
        try:
            lease = await self.pool.aacquire(self.provider, tokens=tokens, hold_s=hold_s)
        except NoCredentialAvailable as e:
            self._refused_by(e)
            raise
        self._end(served=True)
        return lease

    def _refused_by(self, e: NoCredentialAvailable) -> None:
        if e.available_at is None:          # no key can ever serve: the acquire left the queue
            self._end(served=True)
        elif not self._refused:
            self._refused = True
            self.pool.note_refused(self.provider)

    def _end(self, *, served: bool) -> None:
        if self._refused:
            self._refused = False
            self.pool.leave(self.provider, served=served)

    def leave(self) -> None:
        """Stop waiting without a key (give up, fail over, time out): a place a refusal kept
        is given up; nothing to do after a grant or with no refusal since."""
        self._end(served=False)

    def __enter__(self) -> QueuePlace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.leave()

    async def __aenter__(self) -> QueuePlace:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.leave()     # on the loop: the round trip runs off it (CredentialPool.leave)
