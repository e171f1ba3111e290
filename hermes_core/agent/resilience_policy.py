"""What the call loop does after a failed attempt or a refused acquire: pure decisions.

:func:`decide_failure` maps (error, the request's state, the loop's policy) to one
:class:`FailureAction`; :func:`wait_or_failover` decides whether to wait for a cooled key. The call
loop (:mod:`hermes_core.agent.resilience`) applies the action: it reports to the pool, records the
attempt and sleeps. Keeping the decisions here, free of I/O, is what lets them be tested as a table
and shared by the sync, async and streaming shells.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import httpx2
from tenacity import RetryCallState, wait_exponential

from hermes_core.agent.pool.state import RateLimitInfo, sane_retry_after
from hermes_core.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    ConnectionReset,
    ContextWindowExceeded,
    ModelNotFound,
    ProviderError,
    RateLimited,
    Timeout,
    parse_count,
    parse_reset,
    parse_retry_after,
    server_now,
)
from hermes_core.providers._sdk import undecodable

if TYPE_CHECKING:
    from hermes_core.config import Settings

Report = Literal["cool_down", "remove", "failure", "release"]


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


# --------------------------------------------------------------------------- backoff

class FullJitter(wait_exponential):
    """tenacity's exponential window with "full jitter" drawn from an injectable RNG:
    uniform(0, min(max, multiplier * 2 ** (n - 1)))."""

    def __init__(self, multiplier: float, max: float, rng: random.Random) -> None:
        super().__init__(multiplier=multiplier, max=max)
        self.rng = rng

    def __call__(self, retry_state: RetryCallState) -> float:
        return self.rng.uniform(0.0, super().__call__(retry_state))


def server_hint(error: BaseException | None, now: float | None = None) -> float | None:
    """The wait a failed call's server asked for (its Retry-After), or None."""
    if not isinstance(error, ProviderError):
        return None
    hinted = getattr(error, "retry_after", None)
    if hinted is None and error.headers:
        hinted = parse_retry_after(error.headers, now=now)
    return sane_retry_after(None if hinted is None else float(hinted))


def backoff_delay(retry_number: int, error: BaseException | None, *, base: float, cap: float,
                  rng: random.Random, now: float | None = None) -> float:
    """Seconds before retry ``retry_number`` (1-based): the server's Retry-After when it gave one,
    else full jitter."""
    hinted = server_hint(error, now)
    if hinted is not None:
        return hinted
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = max(1, retry_number)
    return FullJitter(base, cap, rng)(state)


# --------------------------------------------------------------------------- classification

def status_of(e: BaseException) -> str:
    """The attempt's status as the audit log shows it."""
    if isinstance(e, Timeout):
        return "timeout"
    if isinstance(e, ConnectionReset):
        return "connection_reset"
    if isinstance(e, ConnectionFailed):
        return "connection_error"
    if isinstance(e, ProviderError) and e.status_code:
        return str(e.status_code)
    return type(e).__name__


def coerce(e: BaseException, provider: str) -> BaseException:
    """Transport errors a provider did not map (e.g. raised mid-stream by httpx)."""
    if isinstance(e, ProviderError):
        return e
    if isinstance(e, httpx2.DecodingError):
        return undecodable(provider, type(e).__name__)
    if isinstance(e, TimeoutError | httpx2.TimeoutException):
        return Timeout(f"{provider}: timed out" + (f" ({e})" if str(e) else ""), provider=provider)
    if isinstance(e, httpx2.RemoteProtocolError | httpx2.ReadError | ConnectionResetError):
        return ConnectionReset(f"{provider}: the connection was reset during the response "
                               f"({type(e).__name__})", provider=provider)
    if isinstance(e, ConnectionError | httpx2.TransportError):
        return ConnectionFailed(f"{provider}: connection failed ({type(e).__name__})",
                                provider=provider)
    return e



def rate_limit_info(headers: Mapping[str, str], *, now: float | None = None) -> RateLimitInfo | None:
    """What an answer (a 200 as much as a 429) states about the key's *request* limit, or None.

    OpenAI: ``x-ratelimit-limit-requests``, ``-remaining-requests``, ``-reset-requests`` (a
    duration, ``1s`` / ``6m0s``); Anthropic: ``anthropic-ratelimit-requests-limit``,
    ``-remaining``, ``-reset`` (an RFC 3339 time, read against the wall clock ``now``). Token
    limits are not what the pool's request window counts and are left out; a value that is not
    a number counts as unsaid, and a limit of 0 (a 200 proves there is none) makes the whole
    answer unsaid, its remainder too."""
    if not headers:
        return None
    h = {k.lower(): v for k, v in headers.items()
         if "ratelimit" in k.lower()}
    if not h:
        return None
    limit = parse_count(h.get("x-ratelimit-limit-requests")
                        or h.get("anthropic-ratelimit-requests-limit"))
    remaining = parse_count(h.get("x-ratelimit-remaining-requests")
                            or h.get("anthropic-ratelimit-requests-remaining"))
    reset: float | None = None
    # the server's clock (its Date header) is the one absolute reset times are on
    if "x-ratelimit-reset-requests" in h:
        reset = parse_reset(h["x-ratelimit-reset-requests"],
                            server_now(headers, time.time() if now is None else now))
    elif "anthropic-ratelimit-requests-reset" in h:
        reset = parse_reset(h["anthropic-ratelimit-requests-reset"],
                           server_now(headers, time.time() if now is None else now))
    if limit is not None and limit <= 0:
        # no limit configured (a gateway's placeholder): its remainder counts nothing down, and
        # read as "nothing left" it blocked the key until the stated reset after every answer
        return None
    if limit is None and remaining is None:
        return None
    if limit is not None and remaining is not None:
        remaining = min(remaining, limit)   # more left than the limit: the limit is the bound
    return RateLimitInfo(limit, remaining, reset)


def stated_limit(error: ProviderError) -> int | None:
    """The request limit a 429 states (``x-ratelimit-limit-requests``), if any."""
    info = rate_limit_info(error.headers)
    return info.limit if info is not None else None


# --------------------------------------------------------------------------- the decision

@dataclass(frozen=True, slots=True)
class FailureState:
    """What the decision needs to know about the request so far."""

    has_key: bool                 # the attempt held a pool key
    key_429s: int                 # 429s this key already gave within this request
    retries_here: int             # retries already spent on this candidate
    budget: int                   # retries left for the whole request
    context_moved: bool           # already moved to the long-context model once
    long_context_target: str | None
    time_left: float              # seconds until the request's deadline
    more_candidates: bool = False  # a later candidate can be tried (has a key or needs none)


@dataclass(frozen=True, slots=True)
class FailureAction:
    """``decision`` as recorded in the audit log; ``report`` what the pool hears about the key;
    ``delay`` the sleep before the next step; ``cooldown`` the key's 429 cool-down; ``raise_``
    whether the error goes to the caller as is; ``asked`` the wait a server asked for that
    outlasts the request's deadline (shown in the final error: a bare "503" reads like an outage
    worth retrying at once)."""

    decision: str
    report: Report | None
    delay: float = 0.0
    cooldown: float | None = None
    raise_: bool = False
    next_candidate: bool = False
    long_context: str | None = None
    spend_retry: bool = False
    asked: float | None = None


def _report_for(e: ProviderError, has_key: bool) -> Report | None:
    if not has_key:
        return None
    if isinstance(e, RateLimited):
        return "cool_down"
    if isinstance(e, AuthenticationFailed):
        return "remove"
    return "failure" if e.retryable else "release"


def decide_failure(e: ProviderError, st: FailureState, policy: LoopPolicy,
                   rng: random.Random) -> FailureAction:
    """The one rule for every failed attempt, before the first streamed delta:

    * 429 with a key: cool the key down (a key refusing twice in one request cools for
      ``backoff_base_s * 2**n`` at least, so a "retry now" cannot spin) and rotate at once;
    * 401/403/402 with a key: the key leaves the rotation; the next key at once;
    * the model does not exist here (404, or a 400 naming it): the next candidate;
    * context window: once, to the long-context model when one is larger; else raise;
    * any other 4xx: the request is wrong: raise;
    * a non-retryable failure: the next candidate;
    * retryable (5xx, 529, timeout, reset, a cut stream, a 429 without a key): retry this
      candidate while its retries, the request's budget and the deadline allow; else the next.
      A back-off longer than ``max_wait_s`` (a 503 saying ``Retry-After: 60``) is not slept
      while another candidate can be tried: that one answers sooner; one the server asks for
      past the deadline is never slept (``wait_past_deadline``, the wait kept for the error).
    """
    report = _report_for(e, st.has_key)
    if isinstance(e, RateLimited) and st.has_key:
        wait = sane_retry_after(e.retry_after)
        if st.key_429s:
            floor = min(policy.backoff_max_s, policy.backoff_base_s * 2 ** (st.key_429s - 1))
            wait = max(wait or 0.0, floor)
        return FailureAction("rotate_key", report, cooldown=wait)
    if isinstance(e, AuthenticationFailed) and st.has_key:
        return FailureAction("remove_key", report)
    if isinstance(e, ModelNotFound):
        return FailureAction("model_not_found", report, next_candidate=True)
    if isinstance(e, ContextWindowExceeded):
        if st.context_moved or st.long_context_target is None:
            return FailureAction("raise", report, raise_=True)
        return FailureAction(f"long_context:{st.long_context_target}", report,
                             next_candidate=True, long_context=st.long_context_target)
    if isinstance(e, BadRequest):
        return FailureAction("raise", report, raise_=True)
    if not (e.retryable or isinstance(e, RateLimited)):
        return FailureAction("failover", report, next_candidate=True)
    if st.retries_here < policy.retries_per_provider:
        if st.budget <= 0:
            return FailureAction("budget_spent", report, next_candidate=True)
        delay = backoff_delay(st.retries_here + 1, e, base=policy.backoff_base_s,
                              cap=policy.backoff_max_s, rng=rng)
        # max_wait_s bounds a wait the server asks for; the loop's own jittered back-off is
        # what retries_per_provider promises, whatever max_wait_s says (max_wait_s: 0)
        too_long = delay > policy.max_wait_s and server_hint(e) is not None
        if delay < st.time_left and not (st.more_candidates and too_long):
            return FailureAction("retry", report, delay=delay, spend_retry=True)
        if delay >= st.time_left and server_hint(e) is not None:
            return FailureAction("wait_past_deadline", report, next_candidate=True, asked=delay)
    return FailureAction("failover", report, next_candidate=True)


def wait_allowance(waited: float, time_left: float, more_candidates: bool,
                   policy: LoopPolicy) -> float:
    """How much longer a request may wait on one provider's keys: what ``max_wait_s`` leaves of
    its total while other candidates remain, else what the deadline leaves."""
    return time_left if not more_candidates else min(time_left, policy.max_wait_s - waited)


def wait_or_failover(wait: float, waited: float, time_left: float, more_candidates: bool,
                     policy: LoopPolicy, rng: random.Random) -> float | None:
    """Every key of a provider is cooling: seconds the timed waiter sleeps before asking again,
    or None to move on. ``max_wait_s`` bounds the *total* a request waits on one provider while
    other candidates remain (with none left, the deadline does). Within a process only one
    waiter per provider sleeps on time (:mod:`hermes_core.agent.pool.waiters`), so the jitter is
    small (2% of the wait, at most 50 ms): enough that the processes of a fleet do not ask at the
    same instant, not so much that every freed slot goes unused for a tenth of the wait."""
    allowed = wait_allowance(waited, time_left, more_candidates, policy)
    if wait >= allowed:
        return None
    jitter = rng.uniform(0.0, min(0.05, max(0.001, wait * 0.02)))
    return min(wait + jitter, max(0.0, allowed))
