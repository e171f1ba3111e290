"""The call loop: candidates x keys, retries, failover, one deadline, an audit log.

For each candidate (provider, model) of a :class:`RouteDecision`, in order::

    lease = pool.acquire(provider)                # one state-backend call
    provider.complete(prompt, model, lease.credential, options)
    429            -> pool.cool_down(lease, retry_after); next key at once (no retry budget spent)
    401/403/402    -> pool.remove(lease) + alert (fingerprint only); next key
    404 / unknown model
                   -> next candidate (the final error names each model tried)
    5xx/529/timeout/reset/cut stream
                   -> breakers; back off (full jitter, Retry-After first) and retry the same
                      provider up to ``retries_per_provider`` times while the request's
                      ``retry_budget`` lasts (each retry spends one), then fail over at once
    every key blocked
                   -> wait (with jitter) while the total waited on this provider stays within
                      ``max_wait_s`` (the deadline when no candidate is left), else fail over
    context window -> move to ``long_context_model`` when it is larger
    other 4xx      -> the request is wrong: raised as is

Each attempt is bounded by what is left of the deadline: its whole response, not only socket
silence (:mod:`hermes_core.providers.deadline`). Streams fail over only before their first delta;
after it, the error reaches the caller. Cache markers are planned here, per candidate, and the
prompt actually sent comes back on the completion (``Completion.prompt``, ``CallStream.prompt``).

The decisions are pure functions in :mod:`hermes_core.agent.resilience_policy`; :class:`_Run`
applies them (no I/O but the pool's two calls); the sync and async loops are thin shells around
it with one failure handler each, and injected clock, sleep and RNG so tests never wait.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from hermes_core.agent.audit import AuditLog
from hermes_core.agent.call_stream import AsyncCallStream, CallStream, aclose_quietly, close_quietly
from hermes_core.agent.credential_pool import CredentialPool, Lease, QueuePlace
from hermes_core.agent.prompt.cache_plan import replan_cache
from hermes_core.agent.prompt.outbound import scrub_prompt
from hermes_core.agent.resilience_policy import (
    FailureState,
    FullJitter,
    LoopPolicy,
    backoff_delay,
    coerce,
    decide_failure,
    rate_limit_info,
    stated_limit,
    status_of,
    wait_allowance,
    wait_or_failover,
)
from hermes_core.agent.routing.rules import candidates_for, long_context_fallback
from hermes_core.errors import (
    AllProvidersFailed,
    Attempt,
    AuthenticationFailed,
    ContextWindowExceeded,
    NoCredentialAvailable,
    ProviderError,
    RateLimited,
)
from hermes_core.providers.base import CallOptions, Provider, requires_key
from hermes_core.providers.observed import Heard, capture
from hermes_core.types import (
    Candidate,
    Completion,
    Credential,
    Delta,
    Prompt,
    RouteDecision,
    Usage,
)

if TYPE_CHECKING:
    from hermes_core.config import Settings

log = logging.getLogger("hermes_core.resilience")
R = TypeVar("R")
__all__ = [
    "AsyncCallStream",
    "AuditLog",
    "CallLoop",
    "CallStream",
    "FullJitter",
    "LoopPolicy",
    "Step",
    "backoff_delay",
]


# --------------------------------------------------------------------------- one request

#: What the caller sends to a candidate, given the request's prompt (``fit=`` of the call methods):
#: the Agent compacts the history again for a failover model with a smaller window.
Fit = Callable[[Prompt, Candidate], Prompt]


@dataclass(frozen=True, slots=True)
class Step:
    """The next thing a request does: a call, or a wait for a key of ``provider`` (the timed
    head sleeps ``delay``; a follower waits up to ``allowed`` for its turn, see
    :mod:`hermes_core.agent.pool.waiters`). Back-offs after a failure sleep where they are
    decided, not as a step."""

    kind: Literal["call", "wait"]
    candidate: Candidate | None = None
    lease: Lease | None = None
    options: CallOptions | None = None
    delay: float = 0.0
    provider: str | None = None
    allowed: float = 0.0

    @property
    def credential(self) -> Credential | None:
        return self.lease.credential if self.lease is not None else None


def rejected(e: AuthenticationFailed, cred: Credential) -> AuthenticationFailed:
    """The same error, saying which key was rejected and where it was configured."""
    where = f" (from {cred.source})" if cred.source else ""
    out = type(e)(f"{e} -- API key {cred.fingerprint}{where} was rejected and is out of rotation",
                  status_code=e.status_code, headers=e.headers, body=e.body, provider=e.provider)
    return out


class _Run:
    """One request's state: candidates, budget, deadline, waits, attempts, the prompt sent."""

    def __init__(self, loop: CallLoop, decision: RouteDecision, options: CallOptions,
                 request_id: str) -> None:
        self.loop = loop
        self.decision = decision
        self.options = options
        self.request_id = request_id
        self.cands = list(decision.candidates)
        self.i = 0
        self.budget = loop.policy.retry_budget
        self.retries_here = 0
        self.deadline = loop.clock() + loop.policy.deadline_s
        self.attempts: list[Attempt] = []
        self.last_error: BaseException | None = None
        self.rejections: list[AuthenticationFailed] = []   # each named in the final error
        self.last_by_provider: dict[str, BaseException] = {}   # also named in it
        self.context_moved = False
        self.rate_limited: dict[str, int] = {}
        self.waited: dict[str, float] = {}     # seconds slept on cooled keys, per provider
        self.removed_here: set[str] = set()    # providers whose key this request removed
        self.waiting: str | None = None        # the provider whose wait queue it holds a place in
        self.place: QueuePlace | None = None   # the provider whose keys it asks for (refusals)
        self.sent: Prompt | None = None
        # (provider kind, model) -> (the prompt handed in, the prompt sent for it)
        self._plans: dict[tuple[str, str], tuple[Prompt, Prompt]] = {}
        # the caller's last word on what goes to a candidate (the history compacted for its model)
        self.fit: Fit | None = None
        feats = decision.features or {}
        sent = feats.get("prompt_tokens") or feats.get("token_estimate") or 0
        self.tokens = int(sent) + options.max_tokens   # what the request costs against max_tpm

    # -------------------------------------------------------------- bookkeeping

    def record(self, cand: Candidate, cred: Credential | None, status: str, started: float | None,
               decision: str, *, retry_after: float | None = None,
               error: BaseException | None = None, billed: Usage | None = None) -> None:
        latency = (self.loop.clock() - started) * 1000.0 if started is not None else 0.0
        a = Attempt(cand.provider, cand.model, cred.fingerprint if cred else None, status,
                    latency, retry_after, decision, type(error).__name__ if error else None,
                    billed)
        self.attempts.append(a)
        if error is not None:
            self.last_by_provider[cand.provider] = error
        self.loop.audit.write(self.request_id, a, time.time())
        log.debug("attempt %s %s/%s key=%s status=%s -> %s", self.request_id, cand.provider,
                  cand.model, a.key_fingerprint, status, decision)
        if self.loop.on_attempt is not None:
            self.loop.on_attempt(a)

    def fail(self, *, deadline_spent: bool = False) -> AllProvidersFailed:
        """The final error; past the deadline it names the candidates never tried."""
        tried = {(a.provider, a.model) for a in self.attempts}
        untried = [f"{c.provider}/{c.model}" for c in self.cands[self.i:]
                   if deadline_spent and (c.provider, c.model) not in tried]
        return AllProvidersFailed(self.attempts, self.last_error, rejections=self.rejections,
                                  last_errors=self.last_by_provider, untried=untried,
                                  deadline_s=self.loop.policy.deadline_s)

    def _failover(self) -> None:
        self.i += 1
        self.retries_here = 0

    def prompt_for(self, prompt: Prompt, cand: Candidate) -> Prompt:
        """The prompt with cache markers planned for this candidate's provider kind and model
        (Anthropic breakpoints vs OpenAI's prompt_cache_key, per-model minimums), then scrubbed of
        configured keys and key shapes (:mod:`~hermes_core.agent.prompt.outbound`): the one place
        the prompt a provider renders is made, so what is sent and what ``Reply.prompt`` shows
        are the same, and no key typed, recalled or echoed leaves with it. A prompt the
        PromptBuilder did not build (no ``system`` token count) keeps its own plan."""
        planned = self._plans.get(key := (self.loop.kind(cand.provider), cand.model))
        if planned is not None and planned[0] is prompt:
            return planned[1]
        sent = prompt
        if "system" in prompt.tokens:
            sent = replan_cache(prompt, self.loop.settings, provider_kind=key[0], model=cand.model)
        sent = scrub_prompt(sent, self.loop.settings.redactor())
        self._plans[key] = (prompt, sent)
        return sent

    def stop_waiting(self) -> None:
        """This request gives up every place it holds: the one in its process's wait queue
        (waking one other waiter: another slot may be free, or someone must become the timed
        head) and the one a refusal keeps in the fleet's queue (:class:`QueuePlace`: the pool
        gives it up when no other request of the process wants the keys)."""
        self._leave_queue()
        self._leave_place()

    def _leave_place(self) -> None:
        """The fleet's place a refusal keeps is given up (nothing after a grant)."""
        place, self.place = self.place, None
        if place is not None:
            place.leave()

    def _leave_queue(self) -> None:
        """The place held in the wait queue while it asked the pool is free (it got a key, or
        it gives up on the provider)."""
        if self.waiting is not None:
            waiting, self.waiting = self.waiting, None
            self.loop.pool.waiters.done(waiting)

    def _only(self, provider: str) -> None:
        """Next it asks for ``provider``'s keys, waits for them or calls it without one: the
        places held for another provider (whose keys were all removed or quarantined meanwhile,
        or cool longer than it may wait) are given up, and only those. Each place goes by the
        provider it is for: a wait for this provider, or its next model after a failover, must
        not drop the refusal it made here (its process would go to the back of this provider's
        fleet queue), and a call without a key must not keep a place it no longer wants."""
        if self.waiting not in (None, provider):
            self._leave_queue()
        if self.place is not None and self.place.provider != provider:
            self._leave_place()

    def queue_for(self, provider: str) -> bool:
        """About to wait for ``provider``'s keys: True when it waited for them already (it keeps
        its place, :mod:`~hermes_core.agent.pool.waiters`); a place held for another provider is
        given up first. The place is the queue's from here: the wait gives it back, or holds it
        anew when it returns."""
        self._only(provider)
        front, self.waiting = self.waiting == provider, None
        return front

    def waited_for(self, provider: str, seconds: float) -> None:
        self.waiting = provider
        self.waited[provider] = self.waited.get(provider, 0.0) + max(0.0, seconds)

    def _another_can_be_tried(self) -> bool:
        """Whether a later candidate has a provider and a key (or needs none): only then is
        half the deadline kept back for it."""
        loop = self.loop
        for cand in self.cands[self.i + 1:]:
            provider = loop.providers.get(cand.provider)
            if provider is not None and (loop.pool.has_keys(cand.provider) or (
                    not requires_key(provider) and not loop.pool.configured(cand.provider))):
                return True
        return False

    def _no_key(self, cand: Candidate, e: NoCredentialAvailable) -> None:
        """No key can ever serve this candidate. After this request removed the provider's last
        key, that is the removal's consequence, already recorded: not a second failure."""
        if cand.provider not in self.removed_here:
            self.record(cand, None, "no_key", None, "failover")
            self.last_error = e
        self._failover()

    # -------------------------------------------------------------- steps

    def next_step(self) -> Step:
        """The next call to make, or a wait; raises AllProvidersFailed when out of options.
        Whatever it raises (a pool backend's error too), a request that was handed a waiter's
        turn stops waiting and passes the turn on: else those behind it wait out their bound."""
        try:
            return self._next_step()
        except BaseException:
            self.stop_waiting()
            raise

    def _next_step(self) -> Step:
        loop = self.loop
        while True:
            now = loop.clock()
            remaining = self.deadline - now
            if remaining <= 0 or self.i >= len(self.cands):
                self.stop_waiting()
                raise self.fail(deadline_spent=remaining <= 0)
            cand = self.cands[self.i]
            self._only(cand.provider)
            provider = loop.providers.get(cand.provider)
            if provider is None:
                self.record(cand, None, "no_provider", None, "failover")
                self._failover()
                continue
            opts = self.options
            # while another candidate remains, an attempt may spend half of what is left: a
            # stalled primary (trickling, pinging) must not eat the whole deadline, or with
            # ``deadline_s`` under the attempt budget the backup would never be tried
            if not 0.001 <= opts.timeout_s <= remaining / 2:   # a copy only when it binds
                bound = remaining / 2 if self._another_can_be_tried() else remaining
                opts = replace(opts, timeout_s=max(0.001, min(opts.timeout_s, bound)))
            if not loop.pool.has_keys(cand.provider):
                # a local server may be called without a key, unless its keys were removed
                if not requires_key(provider) and not loop.pool.configured(cand.provider):
                    return Step("call", cand, None, opts)
                self._no_key(cand, NoCredentialAvailable(cand.provider, None))
                continue
            if self.waiting != cand.provider and loop.pool.waiters.waiting(cand.provider):
                # others of this process wait for the provider's keys: queue behind them rather
                # than take the slot the next of them is about to ask for
                more = self.i + 1 < len(self.cands)
                allowed = wait_allowance(self.waited.get(cand.provider, 0.0), remaining, more,
                                         loop.policy)
                if allowed > 0:
                    return Step("wait", delay=0.0, provider=cand.provider, allowed=allowed)
            if self.place is None:
                self.place = loop.pool.place(cand.provider)
            try:
                lease = self.place.acquire(tokens=self.tokens)
            except NoCredentialAvailable as e:
                if e.available_at is None:    # the place went with the refusal
                    self._no_key(cand, e)
                    continue
                self.last_error = e
                wait = max(0.0, e.available_at - (e.now if e.now is not None else loop.pool.now()))
                more = self.i + 1 < len(self.cands)
                waited = self.waited.get(cand.provider, 0.0)
                delay = wait_or_failover(wait, waited, remaining, more, loop.policy, loop.rng)
                if delay is not None:
                    return Step("wait", delay=delay, provider=cand.provider,
                                allowed=wait_allowance(waited, remaining, more, loop.policy))
                # its places stay while the next candidate is this provider's (another model
                # of it): the next step gives them up if it is not (_only)
                self.record(cand, None, "all_keys_blocked", None, "failover", retry_after=wait)
                self._failover()
                continue
            self._leave_queue()               # the fleet's place went with the grant
            return Step("call", cand, lease, opts)

    def on_success(self, step: Step, started: float, heard: Heard | None = None) -> None:
        """The attempt succeeded; ``heard``: its answer's rate-limit headers, which teach the
        pool the key's limit (and that nothing remains of it) before any 429 does."""
        assert step.candidate is not None
        if step.lease is not None:
            stated = rate_limit_info(heard.headers) if heard is not None else None
            self.loop.pool.success(step.lease, stated)
        self.record(step.candidate, step.credential, "ok", started, "done")

    def free(self, step: Step) -> None:
        """Release the step's key, untouched by its outcome (an abort's)."""
        if step.lease is not None:
            self.loop.pool.release(step.lease)

    def record_abort(self, step: Step, started: float, error: BaseException,
                     heard: Heard | None = None) -> None:
        """A non-provider exception (cancellation, Ctrl-C, a bug) ended the attempt: recorded
        before its key is freed (:meth:`free`), so an interruption during the release keeps it.
        A stream abandoned mid-answer was billed all the same: what its adapter says it was
        billed so far (``heard``) is the attempt's."""
        assert step.candidate is not None
        billed = heard.billed() if heard is not None and heard.billed is not None else None
        self.record(step.candidate, step.credential, "aborted", started, "raise", error=error,
                    billed=billed)

    def on_stream_error(self, step: Step, started: float, error: ProviderError) -> None:
        """After the first delta: report to the pool and the log; the caller gets the error."""
        assert step.candidate is not None
        self._report(step, error, "cool_down" if isinstance(error, RateLimited) else None)
        self.record(step.candidate, step.credential, status_of(error), started,
                    "raise_mid_stream", error=error, billed=error.usage)

    def _report(self, step: Step, e: ProviderError, how: str | None,
                cooldown: float | None = None) -> None:
        lease = step.lease
        if lease is None:
            return
        pool = self.loop.pool
        if isinstance(e, RateLimited):
            pool.cool_down(lease, cooldown if how == "cool_down" and cooldown is not None
                           else e.retry_after, limit=stated_limit(e))
        elif isinstance(e, AuthenticationFailed):
            pool.remove(lease, f"after HTTP {e.status_code} ({type(e).__name__})")
            self.removed_here.add(lease.provider)
        elif e.retryable:
            pool.failure(lease)
        else:
            pool.release(lease)

    def on_error(self, step: Step, started: float, error: ProviderError) -> float:
        """Apply :func:`decide_failure` to a failed call; returns seconds to sleep before the next
        step (0 = none). Raises the error itself for a bad request."""
        cand, cred = step.candidate, step.credential
        assert cand is not None
        if isinstance(error, AuthenticationFailed) and cred is not None:
            error = rejected(error, cred)
            self.rejections.append(error)
        self.last_error = error
        target = (long_context_fallback(cand.model, self.loop.routing)
                  if isinstance(error, ContextWindowExceeded) and not self.context_moved else None)
        state = FailureState(
            has_key=cred is not None,
            key_429s=self.rate_limited.get(cred.fingerprint, 0) if cred is not None else 0,
            retries_here=self.retries_here, budget=self.budget, context_moved=self.context_moved,
            long_context_target=target, time_left=self.deadline - self.loop.clock(),
            more_candidates=self._another_can_be_tried())
        act = decide_failure(error, state, self.loop.policy, self.loop.rng)
        if act.decision == "rotate_key" and cred is not None:
            self.rate_limited[cred.fingerprint] = state.key_429s + 1
        self._report(step, error, act.report, act.cooldown)
        quiet = act.decision in ("rotate_key", "remove_key")
        hint = (act.cooldown if act.decision == "rotate_key"
                else round(act.delay, 6) if act.spend_retry else act.asked)
        self.record(cand, cred, status_of(error), started, act.decision, retry_after=hint,
                    error=None if quiet else error, billed=error.usage)
        if act.raise_:
            raise error
        if act.long_context is not None:
            self.context_moved = True
            self.cands = self.cands[: self.i + 1] + list(
                candidates_for(act.long_context, self.loop.routing))
        if act.spend_retry:
            self.retries_here += 1
            self.budget -= 1
        if act.next_candidate:
            self._failover()
        return act.delay


# --------------------------------------------------------------------------- the shells

class CallLoop:
    """Runs a RouteDecision against providers with the pool; sync and async, complete and stream.

    ``clock`` measures the deadline and latencies; ``sleep``/``asleep`` do every wait; ``rng``
    draws the jitter. Inject all three in tests so nothing waits for real. ``audit_path``: None
    means ``credential_pool.audit_log`` (relative to the home), else ``HOME/audit.jsonl``, when
    settings are given; ``False`` turns the audit file off.
    """

    def __init__(self, providers: Mapping[str, Provider], pool: CredentialPool,
                 settings: Settings | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 asleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 rng: random.Random | None = None,
                 audit_path: str | Path | Literal[False] | None = None,
                 policy: LoopPolicy | None = None,
                 on_attempt: Callable[[Attempt], None] | None = None,
                 on_wait: Callable[[str, float], None] | None = None) -> None:
        from hermes_core.config import Settings as _Settings

        self.settings = settings or _Settings.model_validate({})
        self.providers = dict(providers)
        self.pool = pool
        self.routing = self.settings.llm.routing
        self.policy = policy or LoopPolicy.from_settings(self.settings)
        self.clock = clock
        self.sleep = sleep
        self.asleep = asleep
        self.rng = rng or random.Random()
        if audit_path is None and settings is not None:
            p = Path(self.settings.credential_pool.audit_log or "audit.jsonl").expanduser()
            audit_path = p if p.is_absolute() else self.settings.home_path / p
        self.audit = AuditLog(audit_path or None)
        self.on_attempt = on_attempt
        # (provider, seconds) before a request sleeps for one of the provider's keys to free: a
        # chat with one provider may wait out a cool-down up to ``deadline_s``, and its user
        # should know why nothing is happening
        self.on_wait = on_wait

    @classmethod
    def from_settings(cls, settings: Settings, *, providers: Mapping[str, Provider] | None = None,
                      pool: CredentialPool | None = None, **kw: Any) -> CallLoop:
        """Providers (``build_providers``) and the pool from settings; ``kw`` as for __init__."""
        if providers is None:
            from hermes_core.providers import build_providers

            providers = build_providers(settings)
        return cls(providers, pool or CredentialPool.from_settings(settings), settings, **kw)

    def _run(self, decision: RouteDecision, options: CallOptions | None,
             request_id: str | None, fit: Fit | None) -> _Run:
        run = _Run(self, decision, options or CallOptions(), request_id or _request_id())
        run.fit = fit
        return run

    def _provider(self, step: Step) -> Provider:
        assert step.candidate is not None
        return self.providers[step.candidate.provider]

    def planned(self, prompt: Prompt, candidate: Candidate) -> Prompt:
        """``prompt`` with the cache markers this loop would send to ``candidate``."""
        return _Run(self, RouteDecision(candidate.model, (candidate,), "planned"), CallOptions(),
                    "planned").prompt_for(prompt, candidate)

    def kind(self, provider: str) -> str:
        p = self.providers.get(provider)
        return str(getattr(p, "kind", provider))

    def _wait(self, run: _Run, step: Step) -> None:
        """A place in the provider's wait queue until this request's turn. The announcement
        is part of the wait: Ctrl-C in it gives the places up too."""
        assert step.provider is not None
        started = self.clock()
        try:
            self._tell_wait(step)
            self.pool.waiters.wait(step.provider, step.delay, step.allowed, self.sleep,
                                   front=run.queue_for(step.provider), hold=True)
        except BaseException:    # Ctrl-C while waiting: the request gives up
            run.stop_waiting()
            raise
        run.waited_for(step.provider, self.clock() - started)

    async def _await(self, run: _Run, step: Step) -> None:
        assert step.provider is not None
        started = self.clock()
        try:
            self._tell_wait(step)
            await self.pool.waiters.await_turn(step.provider, step.delay, step.allowed,
                                               self.asleep, front=run.queue_for(step.provider),
                                               hold=True)
        except BaseException:    # cancelled while waiting: the request gives up
            run.stop_waiting()
            raise
        run.waited_for(step.provider, self.clock() - started)

    def _tell_wait(self, step: Step) -> None:
        if self.on_wait is not None and step.provider is not None and step.delay > 0:
            self.on_wait(step.provider, step.delay)

    def _send(self, run: _Run, prompt: Prompt, step: Step) -> Prompt:
        assert step.candidate is not None
        if run.fit is not None:
            prompt = run.fit(prompt, step.candidate)
        run.sent = run.prompt_for(prompt, step.candidate)
        return run.sent

    # -------------------------------------------------------------- the one failure handler

    def _failed(self, run: _Run, step: Step, started: float, raw: BaseException, *,
                mid_stream: bool = False, heard: Heard | None = None) -> float:
        """Every failed attempt goes through here (sync): a provider error is decided by
        :meth:`_Run.on_error` (seconds to sleep) or, after a streamed delta, re-raised; anything
        else (cancellation, a bug) frees the key and propagates, with what ``heard`` says the
        attempt was billed. Call from an ``except`` block."""
        assert step.candidate is not None
        e = coerce(raw, step.candidate.provider)
        if not isinstance(e, ProviderError):
            # recorded before the release: a second Ctrl-C during it keeps the attempt; and
            # freed however the record ends (a Ctrl-C or a hook's error in it), or the key leaks
            try:
                with _handing_on(run.attempts):
                    run.record_abort(step, started, raw, heard)
            finally:
                _carry_attempts(raw, run.attempts)
                with _handing_on(run.attempts):
                    run.free(step)
            raise raw
        if mid_stream:
            run.on_stream_error(step, started, e)
            raise e from (raw if e is not raw else None)
        return run.on_error(step, started, e)

    async def _afailed(self, run: _Run, step: Step, started: float, raw: BaseException, *,
                       mid_stream: bool = False, heard: Heard | None = None) -> float:
        """:meth:`_failed` for the async shells: outcomes reach a networked pool off the event
        loop, an abort's too (a cancellation): the task waits for its key's release before it
        unwinds, so the key is free when the caller's await of it returns."""
        assert step.candidate is not None
        e = coerce(raw, step.candidate.provider)
        if not isinstance(e, ProviderError):
            # recorded before the release is awaited: a second cancellation there ends the
            # task at once (the release finishes in its thread) with the attempt handed on;
            # freed however the record ends (a hook's error in it), or the key leaks
            try:
                with _handing_on(run.attempts):
                    run.record_abort(step, started, raw, heard)
            finally:
                _carry_attempts(raw, run.attempts)
                with _handing_on(run.attempts):
                    await self._aoutcome(run.free, step)
            raise raw
        if mid_stream:
            await self._aoutcome(run.on_stream_error, step, started, e)
            raise e from (raw if e is not raw else None)
        return await self._aoutcome(run.on_error, step, started, e)

    # -------------------------------------------------------------- sync

    def complete(self, prompt: Prompt, decision: RouteDecision, options: CallOptions | None = None,
                 *, request_id: str | None = None,
                 fit: Fit | None = None) -> tuple[Completion, tuple[Attempt, ...]]:
        """The completion (``.prompt``: the request exactly as sent) and every attempt."""
        run = self._run(decision, options, request_id, fit)
        while True:
            step = run.next_step()
            if step.kind != "call":
                self._wait(run, step)
                continue
            assert step.candidate is not None and step.options is not None
            started = self.clock()
            heard = Heard()
            try:
                sent = self._send(run, prompt, step)
                with capture(heard):
                    result = self._provider(step).complete(sent, step.candidate.model,
                                                           step.credential, step.options)
            except BaseException as raw:
                delay = self._failed(run, step, started, raw, heard=heard)
                if delay > 0:
                    self.sleep(delay)
                continue
            run.on_success(step, started, heard)
            return _as_sent(result, sent), tuple(run.attempts)

    def stream(self, prompt: Prompt, decision: RouteDecision, options: CallOptions | None = None,
               *, request_id: str | None = None, fit: Fit | None = None) -> CallStream:
        run = self._run(decision, options, request_id, fit)
        return CallStream(run, self._stream(run, prompt))

    def _stream(self, run: _Run, prompt: Prompt) -> Iterator[Delta]:
        while True:
            step = run.next_step()
            if step.kind != "call":
                self._wait(run, step)
                continue
            assert step.candidate is not None and step.options is not None
            started = self.clock()
            it: Iterator[Delta] | None = None
            heard = Heard()
            try:
                sent = self._send(run, prompt, step)
                with capture(heard):
                    it = iter(self._provider(step).stream(sent, step.candidate.model,
                                                          step.credential, step.options))
                    first = next(it)
            except StopIteration:
                run.on_success(step, started, heard)
                return
            except BaseException as raw:
                close_quietly(it)
                delay = self._failed(run, step, started, raw, heard=heard)
                if delay > 0:
                    self.sleep(delay)
                continue
            break
        try:
            yield first
            yield from it
        except BaseException as raw:
            close_quietly(it)
            self._failed(run, step, started, raw, mid_stream=True, heard=heard)
        run.on_success(step, started, heard)

    # -------------------------------------------------------------- async

    async def _anext_step(self, run: _Run) -> Step:
        if self.pool.backend.io_bound:
            def abandoned(step: Step) -> Lease | None:
                # the caller is gone: a waiter it was stops waiting (wakes the next), its key
                # is released
                run.stop_waiting()
                return step.lease
            return await self.pool.in_thread(run.next_step, abandoned)
        return run.next_step()

    async def _aoutcome(self, fn: Callable[..., R], *args: Any) -> R:
        """Report an outcome without blocking the event loop on a networked pool backend (Redis):
        the report runs in a worker thread, and finishes there even if the caller is cancelled
        (again: an abort's report is awaited while its own cancellation unwinds)."""
        if self.pool.backend.io_bound:
            return await asyncio.shield(asyncio.to_thread(fn, *args))
        return fn(*args)

    async def acomplete(self, prompt: Prompt, decision: RouteDecision,
                        options: CallOptions | None = None, *,
                        request_id: str | None = None, fit: Fit | None = None,
                        ) -> tuple[Completion, tuple[Attempt, ...]]:
        run = self._run(decision, options, request_id, fit)
        while True:
            step = await self._anext_step(run)
            if step.kind != "call":
                await self._await(run, step)
                continue
            assert step.candidate is not None and step.options is not None
            started = self.clock()
            heard = Heard()
            try:
                sent = self._send(run, prompt, step)
                with capture(heard):
                    result = await self._provider(step).acomplete(sent, step.candidate.model,
                                                                  step.credential, step.options)
            except BaseException as raw:
                delay = await self._afailed(run, step, started, raw, heard=heard)
                if delay > 0:
                    await self.asleep(delay)
                continue
            await self._aoutcome(run.on_success, step, started, heard)
            return _as_sent(result, sent), tuple(run.attempts)

    def astream(self, prompt: Prompt, decision: RouteDecision, options: CallOptions | None = None,
                *, request_id: str | None = None, fit: Fit | None = None) -> AsyncCallStream:
        run = self._run(decision, options, request_id, fit)
        return AsyncCallStream(run, self._astream(run, prompt))

    async def _astream(self, run: _Run, prompt: Prompt) -> AsyncIterator[Delta]:
        while True:
            step = await self._anext_step(run)
            if step.kind != "call":
                await self._await(run, step)
                continue
            assert step.candidate is not None and step.options is not None
            started = self.clock()
            it: AsyncIterator[Delta] | None = None
            heard = Heard()
            try:
                sent = self._send(run, prompt, step)
                with capture(heard):
                    it = self._provider(step).astream(sent, step.candidate.model,
                                                      step.credential, step.options).__aiter__()
                    first = await it.__anext__()
            except StopAsyncIteration:
                await self._aoutcome(run.on_success, step, started, heard)
                return
            except BaseException as raw:
                await aclose_quietly(it)
                delay = await self._afailed(run, step, started, raw, heard=heard)
                if delay > 0:
                    await self.asleep(delay)
                continue
            break
        try:
            yield first
            async for delta in it:
                yield delta
        except BaseException as raw:
            await aclose_quietly(it)
            await self._afailed(run, step, started, raw, mid_stream=True, heard=heard)
        await self._aoutcome(run.on_success, step, started, heard)


#: Completion's fields but ``prompt``, read once: :func:`_as_sent` copies them all, and a field added
#: later is carried with no edit here.
_CARRIED = tuple(f.name for f in fields(Completion) if f.name != "prompt")


def _as_sent(result: Completion, sent: Prompt) -> Completion:
    """``result`` with the prompt as sent: ``dataclasses.replace`` at a fraction of its cost (it
    re-inspects the fields on every call; this runs once per request on the hot path)."""
    if result.prompt is sent:
        return result
    carried: dict[str, Any] = {name: getattr(result, name) for name in _CARRIED}
    return Completion(**carried, prompt=sent)


_IDS = random.Random()
os.register_at_fork(after_in_child=_IDS.seed)   # a forked worker draws a sequence of its own


def _request_id() -> str:
    """16 hex digits naming a request in logs and the audit file: unique enough, not a secret.
    ``uuid4`` reads ``os.urandom``, a system call per request (20 us here); a generator seeded from
    it once costs under 1 us."""
    return f"{_IDS.getrandbits(64):016x}"


@contextmanager
def _handing_on(attempts: Sequence[Attempt]) -> Iterator[None]:
    """Whatever interrupts the block (a second Ctrl-C or cancellation, a hook's error) carries
    the call's attempts on, as the abort it interrupted would have (:func:`_carry_attempts`)."""
    try:
        yield
    except BaseException as again:
        _carry_attempts(again, attempts)
        raise


def _carry_attempts(raw: BaseException, attempts: Sequence[Attempt]) -> None:
    """Hand a whole call's attempts to its caller on the exception that aborted it (Ctrl-C, a
    cancellation), as :class:`AllProvidersFailed` hands them: the aborted attempt was billed, and
    a whole call returns nothing else the caller could read them from (a stream has
    ``attempts``)."""
    try:
        raw.attempts = tuple(attempts)   # type: ignore[attr-defined]
    except (AttributeError, TypeError):   # an exception type with slots: nothing to carry on
        pass
