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

The decisions are pure functions in :mod:`hermes_core.agent.resilience_policy`; one request's
state, :class:`~hermes_core.agent.resilience_run._Run`, applies them (no I/O but the pool's two
calls); the sync and async loops here are thin shells around it with one failure handler each,
and injected clock, sleep and RNG so tests never wait.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from hermes_core.agent.audit import AuditLog
from hermes_core.agent.call_stream import AsyncCallStream, CallStream, aclose_quietly, close_quietly
from hermes_core.agent.credential_pool import CredentialPool, Lease
from hermes_core.agent.prompt.outbound import ScrubMemo
from hermes_core.agent.resilience_policy import FullJitter, LoopPolicy, backoff_delay, coerce
from hermes_core.agent.resilience_run import Fit, Step, _Run
from hermes_core.errors import Attempt, ProviderError
from hermes_core.forked import own_random
from hermes_core.providers.base import CallOptions, Provider
from hermes_core.providers.observed import Heard, capture
from hermes_core.types import Candidate, Completion, Delta, Prompt, RouteDecision

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
        self.rng = rng or own_random()
        if audit_path is None and settings is not None:
            p = Path(self.settings.credential_pool.audit_log or "audit.jsonl").expanduser()
            audit_path = p if p.is_absolute() else self.settings.home_path / p
        self.audit = AuditLog(audit_path or None)
        self.on_attempt = on_attempt
        # (provider, seconds) before a request sleeps for one of the provider's keys to free: a
        # chat with one provider may wait out a cool-down up to ``deadline_s``, and its user
        # should know why nothing is happening
        self.on_wait = on_wait
        # the system prompt and history as scrubbed on earlier turns (outbound.ScrubMemo)
        self.scrub_memo = ScrubMemo()

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
        drafts = _Uncommitted()
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
                yield from drafts.opening()
                while drafts.passed(first):
                    yield first
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
        drafts = _Uncommitted()
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
                for d in drafts.opening():
                    yield d
                while drafts.passed(first):   # the step :meth:`_stream` drives
                    yield first
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


#: What a stream passes on before a retry's first delta when drafts of a failed attempt were shown.
_REDRAFT = Delta(redraft=True)


class _Uncommitted:
    """The one draft step both stream shells drive (decision 164): an attempt's drafts (progress
    of a held reply) are passed on before its first committed delta, while it is still
    retryable; a later attempt's first delta is preceded by ``_REDRAFT`` when drafts were shown,
    so the caller voids them."""

    def __init__(self) -> None:
        self.shown = False

    def opening(self) -> tuple[Delta, ...]:
        """What goes before an attempt's first delta (once it has one)."""
        voided, self.shown = self.shown, False
        return (_REDRAFT,) if voided else ()

    def passed(self, d: Delta) -> bool:
        """Whether ``d`` is passed on uncommitted: a draft, or the provider voiding its own
        drafts (a held reply that turned out not to be the answer), not yet the answer."""
        self.shown = self.shown or bool(d.draft)
        return bool(d.draft) or d.redraft


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


_IDS = own_random()   # a forked worker draws a sequence of its own


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
