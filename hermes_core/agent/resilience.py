"""The call loop: candidates x keys, retries, failover, one deadline, an audit log.

For each candidate (provider, model) of a :class:`RouteDecision`, in order::

    cred = pool.acquire(provider)                 # one state-backend call
    provider.complete(prompt, model, cred, options)
    429            -> pool.cool_down(cred, retry_after); next key at once (no retry budget spent)
    401/403/402    -> pool.remove(cred) + alert (fingerprint only); next key
    5xx/529/timeout/connection
                   -> breakers; back off (full jitter, Retry-After first) and retry the same
                      provider up to ``retries_per_provider`` times while the request's
                      ``retry_budget`` lasts (each retry spends one), then fail over at once
    every key blocked
                   -> wait for the earliest key if it frees within ``max_wait_s`` (within the
                      deadline when no candidate is left), else fail over
    context window -> move to ``long_context_model`` when it is larger
    other 4xx      -> the request is wrong: raised as is

Streams fail over only before their first delta; after it, the error reaches the caller.

The decisions live in :class:`_Run` (no I/O but the pool's two calls); the sync and async loops
are thin shells around it, with injected clock, sleep and RNG so tests never wait.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypeVar

import httpx2
from tenacity import RetryCallState, wait_exponential

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import sane_retry_after
from hermes_core.agent.prompt.cache_plan import replan_cache
from hermes_core.agent.routing.rules import candidates_for, long_context_fallback
from hermes_core.errors import (
    AllProvidersFailed,
    Attempt,
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    ContextWindowExceeded,
    NoCredentialAvailable,
    ProviderError,
    RateLimited,
    Timeout,
    parse_retry_after,
)
from hermes_core.providers.base import CallOptions, Provider, requires_key
from hermes_core.types import Candidate, Completion, Credential, Delta, Prompt, RouteDecision

if TYPE_CHECKING:
    from hermes_core.config import Settings

log = logging.getLogger("hermes_core.resilience")
R = TypeVar("R")


# --------------------------------------------------------------------------- backoff (pure)

class FullJitter(wait_exponential):
    """tenacity's exponential window with "full jitter" drawn from an injectable RNG:
    uniform(0, min(max, multiplier * 2 ** (n - 1)))."""

    def __init__(self, multiplier: float, max: float, rng: random.Random) -> None:
        super().__init__(multiplier=multiplier, max=max)
        self.rng = rng

    def __call__(self, retry_state: RetryCallState) -> float:
        return self.rng.uniform(0.0, super().__call__(retry_state))


def backoff_delay(retry_number: int, error: BaseException | None, *, base: float, cap: float,
                  rng: random.Random, now: float | None = None) -> float:
    """Seconds before retry ``retry_number`` (1-based): the server's Retry-After when it gave one,
    else full jitter."""
    if isinstance(error, ProviderError):
        hinted = getattr(error, "retry_after", None)
        if hinted is None and error.headers:
            hinted = parse_retry_after(error.headers, now=now)
        hinted = sane_retry_after(None if hinted is None else float(hinted))
        if hinted is not None:
            return hinted
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = max(1, retry_number)
    return FullJitter(base, cap, rng)(state)


# --------------------------------------------------------------------------- audit log

class AuditLog:
    """Append-only JSONL of attempts: never a secret, one line per attempt, thread-safe."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path).expanduser() if path else None
        self._lock = threading.Lock()
        self._file: TextIO | None = None   # kept open: an attempt costs one write, not an open

    def _open(self) -> TextIO:
        """The open file; reopened when it was moved or deleted (log rotation) since."""
        assert self.path is not None
        f = self._file
        if f is not None:
            try:
                if os.fstat(f.fileno()).st_nlink > 0 and self.path.exists():
                    return f
            except OSError:
                pass
            f.close()
            self._file = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        f = self._file = self.path.open("a", encoding="utf-8")
        return f

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def write(self, request_id: str, attempt: Attempt, wall: float) -> None:
        if self.path is None:
            return
        record = {"time": round(wall, 6), "request_id": request_id, "provider": attempt.provider,
                  "model": attempt.model, "key": attempt.key_fingerprint, "status": attempt.status,
                  "latency_ms": round(attempt.latency_ms, 3), "retry_after": attempt.retry_after,
                  "decision": attempt.decision, "error": attempt.error}
        self.append(record)

    def append(self, record: Mapping[str, Any]) -> None:
        """One JSON line (a tool call's record too); the caller keeps secrets out of it."""
        if self.path is None:
            return
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            try:
                f = self._open()
                f.write(line)
                f.flush()
            except OSError as e:
                log.warning("cannot write audit log %s: %s", self.path, e.strerror or e)


# --------------------------------------------------------------------------- the decisions

@dataclass(frozen=True, slots=True)
class Step:
    kind: Literal["call", "sleep"]
    candidate: Candidate | None = None
    credential: Credential | None = None
    options: CallOptions | None = None
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class LoopPolicy:
    deadline_s: float = 120.0
    retry_budget: int = 3
    retries_per_provider: int = 1
    max_wait_s: float = 10.0
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0

    @classmethod
    def from_settings(cls, settings: Settings) -> LoopPolicy:
        cp = settings.credential_pool
        return cls(settings.llm.deadline_s, cp.retry_budget, cp.retries_per_provider,
                   cp.max_wait_s, cp.backoff_base_s, cp.backoff_max_s)


def _status(e: BaseException) -> str:
    if isinstance(e, Timeout):
        return "timeout"
    if isinstance(e, ConnectionFailed):
        return "connection_error"
    if isinstance(e, ProviderError) and e.status_code:
        return str(e.status_code)
    return type(e).__name__


def _coerce(e: BaseException, provider: str) -> BaseException:
    """Transport errors a provider did not map (e.g. raised mid-stream by httpx)."""
    if isinstance(e, ProviderError):
        return e
    if isinstance(e, TimeoutError | httpx2.TimeoutException):
        return Timeout(f"{provider}: timed out", provider=provider)
    if isinstance(e, ConnectionError | httpx2.TransportError):
        return ConnectionFailed(f"{provider}: connection failed ({type(e).__name__})",
                                provider=provider)
    return e


class _Run:
    """One request's state: candidates, budget, deadline, attempts."""

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
        self.context_moved = False
        self.rate_limited: dict[str, int] = {}
        feats = decision.features or {}
        sent = feats.get("prompt_tokens") or feats.get("token_estimate") or 0
        self.tokens = int(sent) + options.max_tokens   # what the request costs against max_tpm

    # -------------------------------------------------------------- bookkeeping

    def record(self, cand: Candidate, cred: Credential | None, status: str, started: float | None,
               decision: str, *, retry_after: float | None = None,
               error: BaseException | None = None) -> None:
        latency = (self.loop.clock() - started) * 1000.0 if started is not None else 0.0
        a = Attempt(cand.provider, cand.model, cred.fingerprint if cred else None, status,
                    latency, retry_after, decision, type(error).__name__ if error else None)
        self.attempts.append(a)
        self.loop.audit.write(self.request_id, a, time.time())
        log.debug("attempt %s %s/%s key=%s status=%s -> %s", self.request_id, cand.provider,
                  cand.model, a.key_fingerprint, status, decision)
        if self.loop.on_attempt is not None:
            self.loop.on_attempt(a)

    def fail(self) -> AllProvidersFailed:
        return AllProvidersFailed(self.attempts, self.last_error)

    def _failover(self) -> None:
        self.i += 1
        self.retries_here = 0

    # -------------------------------------------------------------- steps

    def next_step(self) -> Step:
        """The next call to make, or a wait; raises AllProvidersFailed when out of options."""
        loop = self.loop
        while True:
            now = loop.clock()
            remaining = self.deadline - now
            if remaining <= 0 or self.i >= len(self.cands):
                raise self.fail()
            cand = self.cands[self.i]
            provider = loop.providers.get(cand.provider)
            if provider is None:
                self.record(cand, None, "no_provider", None, "failover")
                self._failover()
                continue
            opts = replace(self.options, timeout_s=max(0.001, min(self.options.timeout_s,
                                                                  remaining)))
            if not loop.pool.has_keys(cand.provider):
                if not requires_key(provider):
                    return Step("call", cand, None, opts)
                self.record(cand, None, "no_key", None, "failover")
                self.last_error = NoCredentialAvailable(cand.provider, None)
                self._failover()
                continue
            try:
                cred = loop.pool.acquire(cand.provider, tokens=self.tokens)
            except NoCredentialAvailable as e:
                self.last_error = e
                if e.available_at is None:
                    self.record(cand, None, "no_key", None, "failover")
                    self._failover()
                    continue
                wait = max(0.0, e.available_at - (e.now if e.now is not None else loop.pool.now()))
                more = self.i + 1 < len(self.cands)
                limit = min(remaining, loop.policy.max_wait_s) if more else remaining
                if wait < limit:
                    return Step("sleep", delay=wait)
                self.record(cand, None, "all_keys_blocked", None, "failover", retry_after=wait)
                self._failover()
                continue
            return Step("call", cand, cred, opts)

    def on_success(self, step: Step, started: float) -> None:
        assert step.candidate is not None
        if step.credential is not None:
            self.loop.pool.success(step.credential)
        self.record(step.candidate, step.credential, "ok", started, "done")

    def on_abort(self, step: Step, started: float, error: BaseException) -> None:
        """A non-provider exception (cancellation, a bug): free the key, record, re-raise."""
        assert step.candidate is not None
        if step.credential is not None:
            self.loop.pool.release(step.credential)
        self.record(step.candidate, step.credential, "aborted", started, "raise", error=error)

    def on_stream_error(self, step: Step, started: float, error: ProviderError) -> None:
        """After the first delta: report to the pool and the log; the caller gets the error."""
        assert step.candidate is not None
        self._report(step.credential, error)
        self.record(step.candidate, step.credential, _status(error), started, "raise_mid_stream",
                    error=error)

    def _report(self, cred: Credential | None, e: ProviderError) -> None:
        if cred is None:
            return
        pool = self.loop.pool
        if isinstance(e, RateLimited):
            pool.cool_down(cred, e.retry_after)
        elif isinstance(e, AuthenticationFailed):
            pool.remove(cred, f"after HTTP {e.status_code} ({type(e).__name__})")
        elif e.retryable:
            pool.failure(cred)
        else:
            pool.release(cred)

    def on_error(self, step: Step, started: float, error: ProviderError) -> float:
        """Decide after a failed call; returns seconds to sleep before the next step (0 = none).
        Raises the error itself for a bad request, AllProvidersFailed when the budget is spent."""
        cand, cred = step.candidate, step.credential
        assert cand is not None
        self.last_error = error
        status = _status(error)
        if isinstance(error, RateLimited) and cred is not None:
            # A key that answers 429 again within one request had a Retry-After too short (or
            # zero): its cool-down doubles from backoff_base_s each time, so a server that says
            # "retry now" cannot make the loop spin. Rotation still spends no budget.
            repeats = self.rate_limited.get(cred.fingerprint, 0)
            self.rate_limited[cred.fingerprint] = repeats + 1
            wait = sane_retry_after(error.retry_after)  # no inf/NaN in the pool or the audit
            if repeats:
                floor = min(self.loop.policy.backoff_max_s,
                            self.loop.policy.backoff_base_s * 2 ** (repeats - 1))
                wait = max(wait or 0.0, floor)
            self.loop.pool.cool_down(cred, wait)
            self.record(cand, cred, status, started, "rotate_key", retry_after=wait)
            return 0.0
        self._report(cred, error)
        if isinstance(error, AuthenticationFailed) and cred is not None:
            self.record(cand, cred, status, started, "remove_key")
            return 0.0
        if isinstance(error, ContextWindowExceeded):
            target = None if self.context_moved else long_context_fallback(
                cand.model, self.loop.routing)
            if target is None:
                self.record(cand, cred, status, started, "raise", error=error)
                raise error
            self.context_moved = True
            self.record(cand, cred, status, started, f"long_context:{target}", error=error)
            self.cands = self.cands[: self.i + 1] + list(candidates_for(target, self.loop.routing))
            self._failover()
            return 0.0
        if isinstance(error, BadRequest):
            self.record(cand, cred, status, started, "raise", error=error)
            raise error
        if not (error.retryable or isinstance(error, RateLimited)):
            self.record(cand, cred, status, started, "failover", error=error)
            self._failover()
            return 0.0
        # retryable server-side failure (or a 429 from a provider without keys): retry here while
        # this provider's retries and the request's budget last, then fail over. The budget counts
        # retries only: moving to the next provider is not a retry, so every candidate gets tried
        # (within the deadline) however many failed before it.
        pol = self.loop.policy
        if self.retries_here < pol.retries_per_provider:
            if self.budget <= 0:
                self.record(cand, cred, status, started, "budget_spent", error=error)
                self._failover()
                return 0.0
            delay = backoff_delay(self.retries_here + 1, error, base=pol.backoff_base_s,
                                  cap=pol.backoff_max_s, rng=self.loop.rng)
            if self.loop.clock() + delay < self.deadline:
                self.retries_here += 1
                self.budget -= 1
                self.record(cand, cred, status, started, "retry", error=error,
                            retry_after=round(delay, 6))
                return delay
        self.record(cand, cred, status, started, "failover", error=error)
        self._failover()
        return 0.0


# --------------------------------------------------------------------------- the shells

class CallStream(Iterator[Delta]):
    """A resilient stream; ``attempts`` fills in as it runs."""

    def __init__(self, run: _Run, gen: Iterator[Delta]) -> None:
        self.attempts = run.attempts
        self.request_id = run.request_id
        self._gen = gen

    def __iter__(self) -> CallStream:
        return self

    def __next__(self) -> Delta:
        return next(self._gen)

    def close(self) -> None:
        close = getattr(self._gen, "close", None)
        if close is not None:
            close()


class AsyncCallStream(AsyncIterator[Delta]):
    def __init__(self, run: _Run, gen: AsyncIterator[Delta]) -> None:
        self.attempts = run.attempts
        self.request_id = run.request_id
        self._gen = gen

    def __aiter__(self) -> AsyncCallStream:
        return self

    async def __anext__(self) -> Delta:
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        aclose = getattr(self._gen, "aclose", None)
        if aclose is not None:
            await aclose()


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
                 on_attempt: Callable[[Attempt], None] | None = None) -> None:
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

    @classmethod
    def from_settings(cls, settings: Settings, *, providers: Mapping[str, Provider] | None = None,
                      pool: CredentialPool | None = None, **kw: Any) -> CallLoop:
        """Providers (``build_providers``) and the pool from settings; ``kw`` as for __init__."""
        if providers is None:
            from hermes_core.providers import build_providers

            providers = build_providers(settings)
        return cls(providers, pool or CredentialPool.from_settings(settings), settings, **kw)

    def _run(self, decision: RouteDecision, options: CallOptions | None,
             request_id: str | None) -> _Run:
        return _Run(self, decision, options or CallOptions(), request_id or uuid.uuid4().hex[:16])

    def _provider(self, step: Step) -> Provider:
        assert step.candidate is not None
        return self.providers[step.candidate.provider]

    def _prompt_for(self, prompt: Prompt, step: Step, decision: RouteDecision) -> Prompt:
        """The prompt with its cache plan redone for a failover candidate of another provider kind
        or model (Anthropic breakpoints vs OpenAI's prompt_cache_key, per-model minimums), so a
        failover keeps its cache hits. The first candidate's plan is the caller's and is kept, as
        is any prompt the PromptBuilder did not build (no ``system`` token count to plan from)."""
        cand = step.candidate
        first = decision.candidates[0] if decision.candidates else None
        if cand is None or first is None or "system" not in prompt.tokens:
            return prompt
        kind = self._kind(cand.provider)
        if (kind, cand.model) == (self._kind(first.provider), first.model):
            return prompt
        return replan_cache(prompt, self.settings, provider_kind=kind, model=cand.model)

    def _kind(self, provider: str) -> str:
        p = self.providers.get(provider)
        return str(getattr(p, "kind", provider))

    # -------------------------------------------------------------- sync

    def complete(self, prompt: Prompt, decision: RouteDecision, options: CallOptions | None = None,
                 *, request_id: str | None = None) -> tuple[Completion, tuple[Attempt, ...]]:
        run = self._run(decision, options, request_id)
        while True:
            step = run.next_step()
            if step.kind == "sleep":
                self.sleep(step.delay)
                continue
            assert step.candidate is not None and step.options is not None
            started = self.clock()
            try:
                sent = self._prompt_for(prompt, step, decision)
                result = self._provider(step).complete(sent, step.candidate.model,
                                                       step.credential, step.options)
            except BaseException as raw:
                e = _coerce(raw, step.candidate.provider)
                if not isinstance(e, ProviderError):
                    run.on_abort(step, started, raw)
                    raise
                delay = run.on_error(step, started, e)
                if delay > 0:
                    self.sleep(delay)
                continue
            run.on_success(step, started)
            return result, tuple(run.attempts)

    def stream(self, prompt: Prompt, decision: RouteDecision, options: CallOptions | None = None,
               *, request_id: str | None = None) -> CallStream:
        run = self._run(decision, options, request_id)
        return CallStream(run, self._stream(run, prompt))

    def _stream(self, run: _Run, prompt: Prompt) -> Iterator[Delta]:
        while True:
            step = run.next_step()
            if step.kind == "sleep":
                self.sleep(step.delay)
                continue
            assert step.candidate is not None and step.options is not None
            started = self.clock()
            it: Iterator[Delta] | None = None
            try:
                sent = self._prompt_for(prompt, step, run.decision)
                it = iter(self._provider(step).stream(sent, step.candidate.model,
                                                      step.credential, step.options))
                first = next(it)
            except StopIteration:
                run.on_success(step, started)
                return
            except BaseException as raw:
                _close(it)
                e = _coerce(raw, step.candidate.provider)
                if not isinstance(e, ProviderError):
                    run.on_abort(step, started, raw)
                    raise
                delay = run.on_error(step, started, e)
                if delay > 0:
                    self.sleep(delay)
                continue
            break
        try:
            yield first
            yield from it
        except BaseException as raw:
            _close(it)
            e = _coerce(raw, step.candidate.provider)
            if isinstance(e, ProviderError):
                run.on_stream_error(step, started, e)
                raise e from (raw if e is not raw else None)
            run.on_abort(step, started, raw)
            raise
        run.on_success(step, started)

    # -------------------------------------------------------------- async

    async def _anext_step(self, run: _Run) -> Step:
        if self.pool.backend.io_bound:
            return await self.pool.in_thread(run.next_step, lambda step: step.credential)
        return run.next_step()

    async def _aoutcome(self, fn: Callable[..., R], *args: Any) -> R:
        """Report an outcome without blocking the event loop on a networked pool backend (Redis):
        the report runs in a worker thread, and finishes there even if the caller is cancelled.
        Aborts (cancellation itself) stay inline so the key is freed before the task unwinds."""
        if self.pool.backend.io_bound:
            return await asyncio.shield(asyncio.to_thread(fn, *args))
        return fn(*args)

    async def acomplete(self, prompt: Prompt, decision: RouteDecision,
                        options: CallOptions | None = None, *,
                        request_id: str | None = None) -> tuple[Completion, tuple[Attempt, ...]]:
        run = self._run(decision, options, request_id)
        while True:
            step = await self._anext_step(run)
            if step.kind == "sleep":
                await self.asleep(step.delay)
                continue
            assert step.candidate is not None and step.options is not None
            started = self.clock()
            try:
                sent = self._prompt_for(prompt, step, decision)
                result = await self._provider(step).acomplete(sent, step.candidate.model,
                                                              step.credential, step.options)
            except BaseException as raw:
                e = _coerce(raw, step.candidate.provider)
                if not isinstance(e, ProviderError):
                    run.on_abort(step, started, raw)
                    raise
                delay = await self._aoutcome(run.on_error, step, started, e)
                if delay > 0:
                    await self.asleep(delay)
                continue
            await self._aoutcome(run.on_success, step, started)
            return result, tuple(run.attempts)

    def astream(self, prompt: Prompt, decision: RouteDecision, options: CallOptions | None = None,
                *, request_id: str | None = None) -> AsyncCallStream:
        run = self._run(decision, options, request_id)
        return AsyncCallStream(run, self._astream(run, prompt))

    async def _astream(self, run: _Run, prompt: Prompt) -> AsyncIterator[Delta]:
        while True:
            step = await self._anext_step(run)
            if step.kind == "sleep":
                await self.asleep(step.delay)
                continue
            assert step.candidate is not None and step.options is not None
            started = self.clock()
            it: AsyncIterator[Delta] | None = None
            try:
                sent = self._prompt_for(prompt, step, run.decision)
                it = self._provider(step).astream(sent, step.candidate.model, step.credential,
                                                  step.options).__aiter__()
                first = await it.__anext__()
            except StopAsyncIteration:
                await self._aoutcome(run.on_success, step, started)
                return
            except BaseException as raw:
                await _aclose(it)
                e = _coerce(raw, step.candidate.provider)
                if not isinstance(e, ProviderError):
                    run.on_abort(step, started, raw)
                    raise
                delay = await self._aoutcome(run.on_error, step, started, e)
                if delay > 0:
                    await self.asleep(delay)
                continue
            break
        try:
            yield first
            async for delta in it:
                yield delta
        except BaseException as raw:
            await _aclose(it)
            e = _coerce(raw, step.candidate.provider)
            if isinstance(e, ProviderError):
                await self._aoutcome(run.on_stream_error, step, started, e)
                raise e from (raw if e is not raw else None)
            run.on_abort(step, started, raw)
            raise
        await self._aoutcome(run.on_success, step, started)


def _close(it: Any) -> None:
    close = getattr(it, "close", None)
    if close is not None:
        try:
            close()
        except Exception:
            pass


async def _aclose(it: Any) -> None:
    aclose = getattr(it, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:
            pass
