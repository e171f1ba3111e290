"""One request through the call loop: its candidates, retry budget, deadline, waits and attempts.

Why a module of its own: :class:`_Run` is the state one request carries and the pure decisions of
:mod:`hermes_core.agent.resilience_policy` applied to it (no I/O but the credential pool's two
calls), while :mod:`hermes_core.agent.resilience` holds the sync and async shells that do the I/O
around it. Split when the shells and the state together reached the 800-line limit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from hermes_core.agent.credential_pool import Lease, QueuePlace
from hermes_core.agent.pool.state import ReleaseResult
from hermes_core.agent.prompt.cache_plan import replan_cache
from hermes_core.agent.prompt.outbound import scrub_format, scrub_prompt
from hermes_core.agent.resilience_policy import (
    FailureState,
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
    QuotaExhausted,
    RateLimited,
)
from hermes_core.providers.base import CallOptions, requires_key
from hermes_core.providers.observed import Heard
from hermes_core.request_ids import stated_request_id
from hermes_core.types import Candidate, Credential, Prompt, RouteDecision, Usage

if TYPE_CHECKING:
    from hermes_core.agent.resilience import CallLoop

log = logging.getLogger("hermes_core.resilience")

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


def rejected(e: AuthenticationFailed, cred: Credential, fate: str = "is out of rotation",
             ) -> AuthenticationFailed:
    """The same error, saying which key was rejected, where it was configured and ``fate``, the
    pool's verdict (:func:`fate_of`); a spent quota says so (the account needs paying, not the
    key replacing)."""
    where = f" (from {cred.source})" if cred.source else ""
    why = ("has no quota left (check the account's billing)" if isinstance(e, QuotaExhausted)
           else "was rejected")
    out = type(e)(f"{e} -- API key {cred.fingerprint}{where} {why} and {fate}",
                  status_code=e.status_code, headers=e.headers, body=e.body, provider=e.provider)
    return out


def fate_of(res: ReleaseResult | None, now: float) -> str:
    """What the pool did with a rejected key, as the final error says it: a quarantined key
    comes back when one request rechecks it, and "out of rotation" of it sent the author to
    replace a key that was back a minute later."""
    if res is None or res.removed:
        return "is out of rotation"
    if res.recheck_at is None:   # quarantined already, by a request in flight beside this one
        return "is quarantined (one request rechecks it later)"
    return f"is quarantined (one request rechecks it in {max(0.0, res.recheck_at - now):.0f}s)"


class _Run:
    """One request's state: candidates, budget, deadline, waits, attempts, the prompt sent."""

    def __init__(self, loop: CallLoop, decision: RouteDecision, options: CallOptions,
                 request_id: str) -> None:
        self.loop = loop
        self.decision = decision
        if options.response_format:   # scrubbed once a request, as its prompt is per candidate
            options = replace(options, response_format=scrub_format(
                options.response_format, loop.settings.redactor()))
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
               error: BaseException | None = None, billed: Usage | None = None,
               request_id: str | None = None) -> None:
        latency = (self.loop.clock() - started) * 1000.0 if started is not None else 0.0
        a = Attempt(cand.provider, cand.model, cred.fingerprint if cred else None, status,
                    latency, retry_after, decision, type(error).__name__ if error else None,
                    billed, request_id or getattr(error, "request_id", None))
        self.attempts.append(a)
        if error is not None:
            self.last_by_provider[cand.provider] = error
        self.loop.audit.write(self.request_id, a, time.time())
        log.debug("attempt %s %s/%s key=%s status=%s -> %s", self.request_id, cand.provider,
                  cand.model, a.key_fingerprint, status, decision)
        if self.loop.on_attempt is not None:
            self.loop.on_attempt(a)

    def fail(self, *, deadline_spent: bool = False) -> AllProvidersFailed:
        """The final error; when the deadline ended the request, it names the candidates that
        were never tried, so one slow provider does not read as every provider failing."""
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
        sent = scrub_prompt(sent, self.loop.settings.redactor(),
                            self.loop.scrub_memo)
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
                # what is left of the deadline bounds the request, so its lease too: a killed
                # process's slot frees when the request would have ended anyway
                lease = self.place.acquire(tokens=self.tokens, hold_s=remaining)
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
        # the answer's request id, as a failed attempt's error names its own (see request_ids)
        secrets = [step.credential.secret] if step.credential else []
        said = stated_request_id(heard.headers, secrets) if heard is not None else None
        self.record(step.candidate, step.credential, "ok", started, "done",
                    request_id=said[1] if said else None)

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
                cooldown: float | None = None) -> ReleaseResult | None:
        """Tell the pool how the call ended; a rejection's verdict is returned (None otherwise)."""
        lease = step.lease
        if lease is None:
            return None
        pool = self.loop.pool
        if isinstance(e, RateLimited):
            pool.cool_down(lease, cooldown if how == "cool_down" and cooldown is not None
                           else e.retry_after, limit=stated_limit(e))
        elif isinstance(e, AuthenticationFailed):
            res = pool.remove(lease, f"after HTTP {e.status_code} ({type(e).__name__})")
            self.removed_here.add(lease.provider)
            return res
        elif e.retryable:
            pool.failure(lease)
        else:
            pool.release(lease)
        return None

    def on_error(self, step: Step, started: float, error: ProviderError) -> float:
        """Apply :func:`decide_failure` to a failed call; returns seconds to sleep before the next
        step (0 = none). Raises the error itself for a bad request."""
        cand, cred = step.candidate, step.credential
        assert cand is not None
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
        verdict = self._report(step, error, act.report, act.cooldown)
        if isinstance(error, AuthenticationFailed) and cred is not None:
            error = rejected(error, cred, fate_of(verdict, self.loop.pool.now()))
            self.rejections.append(error)
        self.last_error = error
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
