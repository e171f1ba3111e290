"""CredentialPool: which key of a provider serves the next call.

The pool is a thin shell: it maps credentials to their fingerprints (the state never sees a
secret), asks the state backend for a key in one call, and reports each call's outcome in one call.
Strategies, RPM/TPM windows, 429 deadlines and breakers are decided in :mod:`hermes_core.agent.pool.state` and
:mod:`.breaker`. Safe to share between threads and asyncio tasks.

Usage by the call loop::

    cred = pool.acquire("openai")          # raises NoCredentialAvailable(available_at=...)
    ... call ...
    pool.success(cred) | pool.cool_down(cred, retry_after) | pool.remove(cred, why)
        | pool.failure(cred) | pool.release(cred)

Exactly one of the outcome methods must follow each acquire (it also drops the in-flight count).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core.agent.pool.state import (
    STRATEGIES,
    InMemoryPoolState,
    KeySpec,
    Outcome,
    PoolPolicy,
    PoolStateBackend,
    Strategy,
)
from hermes_core.errors import ConfigError, DependencyMissing, NoCredentialAvailable
from hermes_core.types import Credential

if TYPE_CHECKING:
    from hermes_core.config import Settings

log = logging.getLogger("hermes_core.pool")

AlertHook = Callable[[str, str, str], None]   # (provider, fingerprint, reason)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KeyStatus:
    """One key as ``hermes-core keys status`` shows it (fingerprint only)."""

    provider: str
    fingerprint: str
    state: str                 # ok | blocked | removed | breaker_open | probing | at_limit
    blocked_until: float | None
    blocked_for_s: float
    requests_last_window: int
    in_flight: int
    weight: float
    max_rpm: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "fingerprint": self.fingerprint, "state": self.state,
                "blocked_until": self.blocked_until, "blocked_for_s": round(self.blocked_for_s, 3),
                "requests_last_minute": self.requests_last_window, "in_flight": self.in_flight,
                "weight": self.weight, "max_rpm": self.max_rpm}


def policy_from_settings(settings: Settings, strategy: Strategy | None = None) -> PoolPolicy:
    cp = settings.credential_pool
    return PoolPolicy(strategy=strategy or cp.rotation, window_s=cp.window_s,
                      breaker_failures=cp.breaker_failures,
                      breaker_cooldown_s=cp.breaker_cooldown_s,
                      default_cooldown_s=cp.default_cooldown_s)


def backend_from_settings(settings: Settings,
                          clock: Callable[[], float] = time.time) -> PoolStateBackend:
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
        self._rng = rng or random.Random()
        self._on_alert = on_alert
        self._creds: dict[str, tuple[Credential, ...]] = {}
        self._by_fp: dict[tuple[str, str], Credential] = {}
        self._specs: dict[str, tuple[KeySpec, ...]] = {}
        self._policies: dict[str, PoolPolicy] = {}
        self._probes: dict[int, Credential] = {}   # id -> the object a probe acquire returned
        self._probes_lock = threading.Lock()
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
            self._policies[provider] = (PoolPolicy(strategy, self.policy.window_s,
                                                   self.policy.breaker_failures,
                                                   self.policy.breaker_cooldown_s,
                                                   self.policy.default_cooldown_s)
                                        if strategy else self.policy)

    @classmethod
    def from_settings(cls, settings: Settings, backend: PoolStateBackend | None = None, *,
                      clock: Callable[[], float] = time.time, rng: random.Random | None = None,
                      on_alert: AlertHook | None = None) -> CredentialPool:
        """Keys of every routed provider (and every ``credentials`` entry) from settings."""
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
        """True when the provider has configured keys (removed ones included)."""
        return bool(self._creds.get(provider))

    def credentials(self, provider: str) -> tuple[Credential, ...]:
        return self._creds.get(provider, ())

    def now(self) -> float:
        return self.backend.now()

    # ------------------------------------------------------------------ acquire

    def acquire(self, provider: str, *, tokens: int = 0) -> Credential:
        """The next key for ``provider``; raises :class:`NoCredentialAvailable` with the time the
        earliest key frees (None when no key can ever serve)."""
        specs = self._specs.get(provider, ())
        if not specs:
            raise NoCredentialAvailable(provider, None)
        res = self.backend.acquire(provider, specs, self._policies[provider], tokens=tokens,
                                   rand=self._rng.random())
        if res.fingerprint is None:
            raise NoCredentialAvailable(provider, res.available_at, now=res.now)
        cred = self._lookup(provider, res.fingerprint)
        if res.probe:
            # A distinct (equal) object marks this call as the breaker's probe, so its outcome can
            # say so (Outcome.probe) without changing what callers hand back.
            cred = replace(cred)
            with self._probes_lock:
                self._probes[id(cred)] = cred
        return cred

    def _outcome_for(self, cred: Credential, outcome: Outcome) -> Outcome:
        """``outcome`` marked as the probe's when ``cred`` is the object a probe acquire returned."""
        with self._probes_lock:
            probe = self._probes.pop(id(cred), None) is cred
        return replace(outcome, probe=True) if probe else outcome

    async def aacquire(self, provider: str, *, tokens: int = 0) -> Credential:
        if self.backend.io_bound:
            return await self.in_thread(lambda: self.acquire(provider, tokens=tokens), lambda c: c)
        return self.acquire(provider, tokens=tokens)

    async def in_thread(self, fn: Callable[[], T], held: Callable[[T], Credential | None]) -> T:
        """``fn()`` (which may acquire a key) in a worker thread, safe against cancellation.

        Cancelling the awaiting task does not stop the thread: a Redis acquire finishes after the
        caller is gone and nobody would ever release that key (its in-flight count and window slot
        leak until the keys expire). The thread is shielded, and when the caller was cancelled the
        key ``held(result)`` names is released as soon as the thread returns.
        """
        fut = asyncio.ensure_future(asyncio.to_thread(fn))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            fut.add_done_callback(lambda f: self._release_abandoned(f, held))
            raise

    def _release_abandoned(self, fut: asyncio.Future[T],
                           held: Callable[[T], Credential | None]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            return
        cred = held(fut.result())
        if cred is None:
            return
        try:
            self.release(cred)
        except Exception as e:  # a callback must not raise; the backend's expiry is the backstop
            log.warning("could not release key %s of a cancelled request: %s", cred.fingerprint, e)

    def _lookup(self, provider: str, fingerprint: str) -> Credential:
        cred = self._by_fp.get((provider, fingerprint))
        if cred is None:
            raise KeyError(f"backend returned an unknown key {fingerprint} for {provider}")
        return cred

    # ------------------------------------------------------------------ outcomes

    def report(self, cred: Credential, outcome: Outcome) -> float:
        """Apply one outcome; returns the key's blocked-until deadline afterwards."""
        res = self.backend.release(cred.provider, cred.fingerprint, self._outcome_for(cred, outcome),
                                   self._policies.get(cred.provider, self.policy))
        if outcome.kind == "removed" and res.changed:
            self._alert(cred, "removed from rotation")
        return res.blocked_until

    async def areport(self, cred: Credential, outcome: Outcome) -> float:
        if self.backend.io_bound:
            return await asyncio.to_thread(self.report, cred, outcome)
        return self.report(cred, outcome)

    def success(self, cred: Credential) -> None:
        self.report(cred, Outcome("ok"))

    def cool_down(self, cred: Credential, retry_after: float | None) -> float:
        """A 429: block the key until now + retry_after (the default when None); never earlier."""
        return self.report(cred, Outcome("rate_limited", retry_after))

    def remove(self, cred: Credential, reason: str = "") -> None:
        """401/403/402: out of rotation for good; alerts once with the fingerprint only."""
        res = self.backend.release(cred.provider, cred.fingerprint,
                                   self._outcome_for(cred, Outcome("removed")),
                                   self._policies.get(cred.provider, self.policy))
        if res.changed:
            self._alert(cred, reason or "removed from rotation")

    def failure(self, cred: Credential) -> None:
        """A retryable failure (5xx, 529, timeout, connection): feeds the breakers."""
        self.report(cred, Outcome("failure"))

    def release(self, cred: Credential) -> None:
        """The call ended without a signal about the key (bad request, cancelled)."""
        self.report(cred, Outcome("released"))

    def _alert(self, cred: Credential, reason: str) -> None:
        log.warning("credential alert: provider %s key %s %s", cred.provider, cred.fingerprint,
                    reason)
        if self._on_alert is not None:
            self._on_alert(cred.provider, cred.fingerprint, reason)

    # ------------------------------------------------------------------ status

    def status(self, providers: Iterable[str] | None = None) -> list[KeyStatus]:
        out: list[KeyStatus] = []
        for provider in providers or self.providers:
            specs = self._specs.get(provider, ())
            if not specs:
                continue
            pol = self._policies[provider]
            snap = self.backend.snapshot(provider, specs, pol)
            for spec, k in zip(specs, snap.keys, strict=True):
                at_limit = spec.max_rpm is not None and k.requests_in_window >= spec.max_rpm
                if k.removed:
                    state = "removed"
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
                                     k.in_flight, spec.weight, spec.max_rpm))
        return out
