"""The one error tree, and the one function that maps an HTTP status + headers onto it.

Never decide what went wrong by searching a message for "429": the status code and headers carry
the facts, and :func:`error_from_status` is the only place that reads them.
"""

from __future__ import annotations

import email.utils
import html.parser
import math
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core.error_echo import own_words
from hermes_core.redact import clip, redact, redact_cut, redact_data, redact_headers
from hermes_core.request_ids import printable, stated_request_id

if TYPE_CHECKING:
    from hermes_core.types import Usage


class HermesError(Exception):
    """Root of every error hermes_core raises on purpose."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as what the error holds, not by calling its constructor again: a worker
        process (multiprocessing, celery) sends its exception back pickled, and Exception's own
        way calls ``cls(*args)`` with the finished message, which AllProvidersFailed (attempts),
        a store's error (path, reason) or NoCredentialAvailable (provider) cannot take. The
        message, the attributes and any note are redacted on the way: the pickle goes to
        another process, a queue or a result store."""
        return _reduced(self)


def _reduced(error: BaseException) -> tuple[Any, ...]:
    """``error`` pickled as :func:`_unpickled` rebuilds it, its arguments and attributes
    redacted (:func:`_scrubbed`)."""
    return (_unpickled, (type(error), _scrubbed(error.args),
                         _scrubbed(getattr(error, "__dict__", {}))))


def _unpickled(cls: type[BaseException], args: tuple[Any, ...],
               state: dict[str, Any]) -> BaseException:
    """The error :meth:`HermesError.__reduce__` (or :class:`_Held`) pickled, its constructor
    not run."""
    error = cls.__new__(cls, *args)
    error.args = args
    vars(error).update(state)
    return error


class _Held:
    """Another library's exception inside an error's state (AllProvidersFailed's last_error, a
    wrapped cause): pickled as :func:`_unpickled` rebuilds it, redacted like the error holding it,
    where its own class would pickle its message and attributes in clear. (``__cause__`` and
    ``__context__`` are not pickled at all.)"""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __reduce__(self) -> tuple[Any, ...]:
        return _reduced(self.error)


def _scrubbed(value: Any, depth: int = 0) -> Any:
    """:func:`redact_data` of an error's state that also reaches the exceptions inside it: a
    HermesError pickles itself redacted, any other is pickled through :class:`_Held`."""
    if isinstance(value, BaseException):
        return value if isinstance(value, HermesError) else _Held(value)
    if depth < 32 and isinstance(value, Mapping):
        return {redact_data(k): _scrubbed(v, depth + 1) for k, v in value.items()}
    if depth < 32 and isinstance(value, list | tuple):
        items = [_scrubbed(v, depth + 1) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    return redact_data(value)


_LONG_WORD = re.compile(r"\S{81,}")
MAX_CONFIG_MESSAGE = 300


def _bounded(text: str) -> str:
    """A message a person reads: a word over 80 characters (a megabyte value quoted by a
    validator, a variable name, a rule) is shown by its head and length, the whole kept short."""
    text = _LONG_WORD.sub(lambda m: f"{m.group(0)[:37]}...({len(m.group(0))} characters)", text)
    return text if len(text) <= MAX_CONFIG_MESSAGE else text[:MAX_CONFIG_MESSAGE - 3] + "..."


class ConfigError(HermesError):
    """Invalid configuration; names the file, the key path and the line when known."""

    def __init__(self, message: str, *, file: str | None = None, key_path: str | None = None,
                 line: int | None = None) -> None:
        self.file = file
        self.key_path = None if key_path is None else _bounded(key_path)
        self.line = line
        self.reason = message = _bounded(message)
        key_path = self.key_path
        where = []
        if file:
            where.append(f"{file}:{line}" if line else file)
        if key_path:
            where.append(f"key '{key_path}'")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class DependencyMissing(HermesError):
    """An optional part is not installed; the message names the extra to install."""

    def __init__(self, what: str, extra: str) -> None:
        self.extra = extra
        super().__init__(f"{what} needs an optional dependency: pip install 'hermes-core[{extra}]'")


class ProviderError(HermesError):
    """A provider call failed. ``body`` is already redacted of secrets."""

    retryable: bool = False

    def __init__(self, message: str, *, status_code: int | None = None,
                 headers: Mapping[str, str | Sequence[str]] | None = None, body: Any = None,
                 provider: str | None = None) -> None:
        self.status_code = status_code
        # a server may echo the key in a header (or a debugging proxy add it): never keep it
        self.headers = redact_headers(headers or {})
        self.body = redact_data(body)   # a parsed JSON body too: any string in it
        self.provider = provider
        stated = stated_request_id(self.headers)   # what the provider's support asks for
        self.request_id = stated[1] if stated else None
        # what the provider billed for the attempt before it failed (a stream cut after its
        # usage arrived), when known: counted as wasted, not lost
        self.usage: Usage | None = None
        super().__init__(redact(message))


class RateLimited(ProviderError):
    """429: the key is cooling down for ``retry_after`` seconds (None when the server did not say)."""

    def __init__(self, message: str = "rate limited", *, retry_after: float | None = None,
                 **kw: Any) -> None:
        kw.setdefault("status_code", 429)
        super().__init__(message, **kw)
        self.retry_after = retry_after


class AuthenticationFailed(ProviderError):
    """401/403: the key is bad or not allowed; it leaves the rotation for good."""


class QuotaExhausted(AuthenticationFailed):
    """402 or an insufficient-quota answer: the key cannot be used until billing changes."""


class BadRequest(ProviderError):
    """400/404/422: the request itself is wrong; retrying it elsewhere will not help."""


class ContextWindowExceeded(BadRequest):
    """400 because the prompt is longer than the model's context window."""


class ModelNotFound(BadRequest):
    """404 (or a 400 naming the model): this provider does not serve the model; another
    candidate may."""


class ServerError(ProviderError):
    """5xx: the provider failed; counts against the retry budget."""

    retryable = True


class Overloaded(ServerError):
    """529 (Anthropic) or 503 overloaded: like a 5xx, but a signal to back off harder."""


class IncompleteResponse(ServerError):
    """The reply ended without its wire format's end marker (a stream closed early, cleanly).

    Before the first token it is retried or failed over like any server error. After tokens the
    caller gets it with ``partial_text``, what arrived; it is not an answer and is not stored."""

    def __init__(self, message: str, *, partial_text: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.partial_text = redact_cut(partial_text)   # a key the cut fell inside: its start too


class UnofferedToolCall(ProviderError):
    """The model called a tool in answer to a request that offered none (a compatible server
    speaking the wire loosely: the APIs themselves send no call without tool definitions).

    The call cannot be answered: Anthropic's API refuses a request holding tool_use or
    tool_result blocks that declares no tools, so the turn would end on a 400 one request later,
    and every later turn of the chat with it. Nothing is run and the turn is not kept. ``tools``
    names the calls; ``text`` is the start of the model's words beside them (both redacted)."""

    def __init__(self, message: str, *, tools: Sequence[str] = (), text: str = "",
                 **kw: Any) -> None:
        super().__init__(message, **kw)
        # redacted like the message: a server calling tools nobody offered may echo a key as a
        # call's name, and ``tools`` is what a caller logs to say what was called
        self.tools = tuple(redact(name) for name in tools)
        self.text = clip(text, 2000)


class Timeout(ProviderError):
    """The request did not finish in time: no byte for too long, no content event for too long
    in a stream (keep-alive pings do not count), or the attempt's whole-response budget spent."""

    retryable = True


class ConnectionFailed(ProviderError):
    """The endpoint could not be reached (refused, DNS, TLS)."""

    retryable = True


class ConnectionReset(ConnectionFailed):
    """The connection was reached and then dropped in the middle of the response."""


class NoCredentialAvailable(HermesError):
    """Every key of a provider is blocked, removed or at its limit."""

    def __init__(self, provider: str, available_at: float | None = None,
                 *, now: float | None = None, recheck_at: float | None = None) -> None:
        self.provider = provider
        self.available_at = available_at
        # the backend's clock when it answered (Redis TIME for a shared pool): waits computed from
        # it need no second round trip, and stay right when the local clock disagrees with Redis
        self.now = now
        # the earliest recheck of a key quarantined after the provider rejected it (not waited
        # for: it is more likely rejected again than not)
        self.recheck_at = recheck_at
        if available_at is None and recheck_at is not None:
            wait = max(0.0, recheck_at - (now if now is not None else time.time()))
            msg = (f"no usable API key for provider '{provider}' (the rest removed; quarantined "
                   f"after the provider rejected them, the first recheck in {wait:.0f}s)")
        elif available_at is None:
            msg = f"no usable API key for provider '{provider}' (none configured or all removed)"
        else:
            wait = max(0.0, available_at - (now if now is not None else time.time()))
            msg = f"every API key for provider '{provider}' is busy; the earliest frees in {wait:.1f}s"
        super().__init__(msg)


# --------------------------------------------------------------------------- local stores and inputs

class SessionStoreError(HermesError):
    """The sessions database (episodic memory) cannot be used; ``path`` names the file."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"memory database {self.path}: {reason}")


class SessionDatabaseUnusable(SessionStoreError):
    """The file at the path is corrupted, foreign or from a newer version; it was left untouched."""


class SessionQueryInvalid(SessionStoreError, ValueError):
    """A search expression FTS5 cannot parse: the caller's query is at fault, not the file."""


class SessionDatabaseMissing(SessionStoreError):
    """No database exists at the path and the caller asked not to create one."""


class SummaryFailed(HermesError):
    """A summariser answered with nothing usable (the caller falls back to the extractive one)."""


class MemoryWriteError(HermesError):
    """A memory write was refused or failed; names the file and why. Nothing was changed."""

    def __init__(self, file: str | os.PathLike[str], reason: str) -> None:
        self.file = str(file)
        self.reason = reason
        super().__init__(f"{file}: {reason}")


class PromptInputError(HermesError):
    """A ``--history`` file or the message piped in is unusable; names the file and where."""

    def __init__(self, file: str | os.PathLike[str], where: str, reason: str) -> None:
        self.file = str(file)
        super().__init__(f"{file}{': ' + where if where else ''}: {reason}")


class StructuredOutputError(HermesError):
    """The reply did not validate against the requested output model, even after a repair round.

    ``errors`` says what was wrong; ``text`` is the start of the last reply (the model's words, for
    debugging the schema or the prompt).
    """

    def __init__(self, model_name: str, errors: str, text: str, *, refused: bool = False) -> None:
        # a model or proxy echoing the key puts it in the reply and in the field names: redacted,
        # the reply before it is cut (a key across the cut would keep its head)
        self.model_name = model_name
        self.errors = redact(errors)
        self.text = clip(text, 2000)
        # the model declined (no repair round was tried: it would press the model to comply)
        self.refused = refused
        super().__init__(f"no {model_name}: {self.errors}" if refused else
                         f"the reply is not a valid {model_name} after one repair round: "
                         f"{self.errors}")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try of the call loop, as it appears in the audit log (never a secret)."""

    provider: str
    model: str
    key_fingerprint: str | None
    status: str
    latency_ms: float
    retry_after: float | None = None
    decision: str = ""
    error: str | None = None
    usage: Usage | None = None   # billed by a failed attempt, when known (ProviderError.usage)
    request_id: str | None = None   # the provider's id of a failed attempt's request, if stated


def _tried(a: Attempt) -> str:
    """One attempt as the final error lists it; a provider whose keys were all rate limited says
    how long: "blocked" alone reads like an outage, and the wait decides what the person does. A
    timed-out attempt says how long it was waited on."""
    shown = f"{a.provider}/{a.model}:{a.status}"
    wait = a.retry_after   # rounded up: "frees in 0s" on a request that gave up misleads
    said = f"{math.ceil(wait) if math.isfinite(wait) else wait:.0f}s" if wait is not None else ""
    if a.status == "timeout":   # a second or a minute: what the person tunes next
        shown += f" after {a.latency_ms / 1000:.1f}s"
    elif a.status == "all_keys_blocked" and said:
        shown += f" (the first key frees in {said})"
    elif a.decision == "wait_past_deadline" and said:
        shown += f" (the server asked to wait {said}, past the deadline)"
    return shown


class AllProvidersFailed(HermesError):
    """Every candidate failed, or the deadline ended the request first; ``attempts`` lists each
    try in order, ``untried`` the candidates (``provider/model``) the deadline left untried."""

    def __init__(self, attempts: Sequence[Attempt], last_error: BaseException | None = None, *,
                 rejections: Sequence[AuthenticationFailed] = (),
                 last_errors: Mapping[str, BaseException] | None = None,
                 untried: Sequence[str] = (), deadline_s: float | None = None) -> None:
        self.attempts = tuple(attempts)
        self.last_error = last_error
        self.untried = tuple(untried)
        tried = ", ".join(_tried(a) for a in self.attempts) or "none"
        missing = list(dict.fromkeys(f"{a.provider}/{a.model}" for a in self.attempts
                                     if a.decision == "model_not_found"))
        note = f"; model not found: {', '.join(missing)}" if missing else ""
        # which keys were rejected, and where each was configured: a backup failing afterwards
        # (no key, a 500) must not hide what the person has to fix
        named = list(dict.fromkeys([*(str(e) for e in rejections), *(
            [str(last_error)] if isinstance(last_error, AuthenticationFailed) else [])]))
        for text in named:
            note += f"; {text}"
        # what each provider last answered: a status or a class name alone ("ServerError") does
        # not tell a proxy's sign-in page from an outage; the messages were redacted when made
        for provider, error in (last_errors or {}).items():
            text = str(error)
            if text and text not in named:
                note += f"; {text if text.startswith(f'{provider}:') else f'{provider}: {text}'}"
        # "all providers failed" after one slow provider read as an outage of all of them
        if self.untried:
            spent = f"the {deadline_s:g}s deadline" if deadline_s is not None else "the deadline"
            note += f"; {spent} was spent before trying {', '.join(self.untried)}"
        super().__init__(f"all providers failed after {len(self.attempts)} attempt(s): "
                         f"{tried}{note}")


# --------------------------------------------------------------------------- retry-after parsing

# Go's time.Duration text (OpenAI's resets): under a millisecond it says "µs" (U+00B5) or "ns";
# "us" and the Greek mu (U+03BC) are what a proxy retyping it sends
_DURATION = re.compile(r"(?P<num>\d+(?:\.\d+)?)(?P<unit>ms|us|\u00b5s|\u03bcs|ns|h|m|s)")
_UNIT_S = {"ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ns": 1e-9,
           "h": 3600.0, "m": 60.0, "s": 1.0}
# the weekday that opens an HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT", RFC 850's "Wednesday,
# 21-Oct-26 ..."): the comma after it is the date's own, not the one httpx joins values with
_WEEKDAY = re.compile(r"(?:mon|tue|wed|thu|fri|sat|sun)|(?:mon|tues|wednes|thurs|fri|satur|sun)day",
                      re.IGNORECASE)


def header_values(value: str | Sequence[str]) -> list[str]:
    """A header's values: the same header sent twice (a proxy adding its own beside the
    provider's) reaches us joined by ", " (httpx) or as a list; an HTTP date in it stays whole."""
    texts = [value] if isinstance(value, str) else [str(v) for v in value]
    out: list[str] = []
    for text in texts:
        pending = ""
        for part in text.split(","):
            part = part.strip()
            if pending:
                out.append(f"{pending}, {part}")
                pending = ""
            elif _WEEKDAY.fullmatch(part):
                pending = part
            elif part:
                out.append(part)
        if pending:
            out.append(pending)
    return out


def _seconds(text: str) -> float | None:
    """One value's number of seconds, or None for what no server means: not a number, NaN,
    infinity, a negative wait (taken as 0 it put the key back at once, to be refused again; as
    unsaid, the next header or the pool's default cool-down decides)."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return value + 0.0   # -0 -> 0


def _latest(waits: Sequence[float | None]) -> float | None:
    """The wait a repeated header states: each copy is one sender's refusal (the provider's, a
    proxy's) until its own time, so the longest holds; a copy stating no wait we can read (a
    proxy's garbage, a negative number) is left out rather than silencing the others."""
    said = [w for w in waits if w is not None]
    return max(said) if said else None


def parse_duration(text: str) -> float | None:
    """OpenAI's ``x-ratelimit-reset-*`` form: ``1s``, ``6m0s``, ``120ms``, ``1h2m3.5s``, ``500µs``,
    or plain seconds; repeated (joined by ", "), the longest."""
    values = header_values(text)
    if len(values) != 1:
        return _latest([parse_duration(v) for v in values])
    text = values[0]
    seconds = _seconds(text)
    if seconds is not None:
        return seconds
    total, pos = 0.0, 0
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            return None
        pos = m.end()
        n = float(m.group("num"))
        total += n * _UNIT_S[m.group("unit")]
    return total if pos == len(text) and pos else None


# a reset this many seconds away is no duration a server means (31 years): it is a Unix time;
# from _EPOCH_MS_FROM on (that many seconds is 31,000 years; as milliseconds, 2001) a Unix time in
# milliseconds, as some gateways send it
_EPOCH_FROM = 1e9
_EPOCH_MS_FROM = 1e12


def parse_count(text: str | Sequence[str] | None) -> int | None:
    """A rate-limit count (a limit, what remains): None when absent or not a whole number. The
    same header sent twice (a proxy stating its own beside the provider's) reaches us joined by
    ", ": the lowest holds, as both counters refuse. A negative remainder (a proxy counting past
    the limit) stays negative: nothing remains."""
    if not text:
        return None
    try:
        return min(int(part) for part in header_values(text))
    except ValueError:
        return None


def _wait_until(value: str, now: float) -> float | None:
    """One value of a reset or Retry-After header -> seconds from ``now`` (never negative)."""
    d = parse_duration(value)
    if d is None:
        return parse_when(value, now)
    at = d / 1000.0 if d >= _EPOCH_MS_FROM else d if d >= _EPOCH_FROM else None
    if at is None:
        return d
    # a Unix time years gone is no reset a server states ("retry at once" to a key it refused
    # a moment ago): a proxy's "very long" (1e9), taken as the duration it is
    return d if at < now - _SKEW_MAX_S else max(0.0, at - now)


def parse_reset(text: str | Sequence[str], now: float) -> float | None:
    """An ``x-ratelimit-reset-*`` value -> seconds from ``now`` (the server's clock): OpenAI's
    durations (``1s``, ``1m30s``, ``120ms``), plain seconds, and what proxies send in their place,
    a Unix time in seconds or milliseconds (read as 1.7e9 seconds it was a day's cool-down, the
    cap) or an HTTP / RFC 3339 date. Repeated (joined by ", " or a list), in one form or mixed,
    the longest wait holds (:func:`_latest`); one already past is 0, one years past a long wait."""
    return _latest([_wait_until(v, now) for v in header_values(text)])


def _unknown_zone(text: str) -> bool:
    """Whether an HTTP date email.utils read without a zone ends on a zone name it does not
    know (``CET``, ``JST``): it reads those as no zone at all, not as an error. A date with no
    zone (asctime, GMT by HTTP's rule) or ``-0000`` (UTC) ends on digits."""
    words = text.split()
    return bool(words) and any(c.isalpha() for c in words[-1])


def parse_when(text: str, now: float) -> float | None:
    """An HTTP date or an RFC 3339 timestamp -> seconds from ``now`` (never negative). A date in
    a zone email.utils does not know is unreadable (None): taken for GMT, a Berlin server's wait
    was an hour too long and a Tokyo one's nine; no other zone table is trusted to be right."""
    text = text.strip()
    try:
        dt = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        dt = None
    if dt is not None and dt.tzinfo is None and _unknown_zone(text):
        return None
    if dt is None:
        from datetime import datetime

        try:
            # RFC 3339 allows a lower-case "t" and "z"; fromisoformat takes neither
            dt = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
        except ValueError:
            return None
    if dt.tzinfo is None:
        from datetime import UTC

        dt = dt.replace(tzinfo=UTC)
    return max(0.0, dt.timestamp() - now)


# a server clock this far from ours is no clock: a proxy's zeroed one (1970), a cache's stale
# copy of an answer; the times the answer states are not on it
_SKEW_MAX_S = 86400.0


def server_now(headers: Mapping[str, str | Sequence[str]], now: float) -> float:
    """The time the answer was made by the server's own clock (its ``Date`` header), else
    ``now``. The absolute times a server states (a Retry-After HTTP date, Anthropic's resets) are
    on that clock: read against ours, a server a few minutes behind stated waits already past
    (retried at once, refused again) and one ahead waits its lead too long. A ``Date`` more than
    a day from ours is not trusted (:data:`_SKEW_MAX_S`)."""
    raw = next((v for k, v in headers.items() if k.lower() == "date"), None)
    values = header_values(raw) if raw is not None else []
    if not values:
        return now
    try:
        dt = email.utils.parsedate_to_datetime(values[0])
    except (TypeError, ValueError, IndexError):
        return now
    if dt is None or dt.tzinfo is None or abs(dt.timestamp() - now) > _SKEW_MAX_S:
        return now
    return dt.timestamp()


def _left(remaining: str | Sequence[str] | None) -> bool:
    """A limit with requests left (or a remainder that is no number) did not refuse us; one that
    states nothing, none, fewer than none, or 0 twice, may have."""
    if remaining is None:
        return False
    count = parse_count(remaining)
    return count is None or count > 0


def parse_retry_after(headers: Mapping[str, str | Sequence[str]], *,
                      now: float | None = None) -> float | None:
    """Seconds to wait, from the strongest signal present; None when no header says.

    Order: ``retry-after-ms``, then ``retry-after`` (seconds or HTTP date); when neither is present,
    the largest of ``x-ratelimit-reset-*`` (OpenAI durations), ``anthropic-ratelimit-*-reset``
    (RFC 3339 times) and a gateway's ``x-ratelimit-reset`` / ``ratelimit-reset`` among limits
    that are exhausted (remaining 0) or say nothing about what remains. A limit with requests
    left is not why we were refused: its reset time is ignored, and None (the pool's default
    cool-down) is better than waiting for the wrong clock. Absolute times are read against the
    server's ``Date`` (:func:`server_now`). A header sent twice (the provider's and a proxy's,
    joined by ", " or as a list), in one form or mixed, is read as the longest wait among its
    copies (:func:`_latest`).
    """
    now = server_now(headers, time.time() if now is None else now)
    h = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in h:
        ms = _latest([_seconds(v) for v in header_values(h["retry-after-ms"])])
        if ms is not None:
            return ms / 1000.0
    if "retry-after" in h:
        # seconds or an HTTP date, and what proxies send instead: a Unix time, a duration
        when = parse_reset(h["retry-after"], now)
        if when is not None:
            return when
    resets: list[float] = []
    for k, v in h.items():
        remaining = _remaining_header(k)
        if remaining is None or _left(h.get(remaining)):
            continue
        d = parse_reset(v, now)
        if d is not None:
            resets.append(d)
    return max(resets) if resets else None


def _remaining_header(reset: str) -> str | None:
    """The header stating what remains of the limit whose reset header is ``reset`` (lower
    case), or None when ``reset`` names no reset: OpenAI's per limit (``x-ratelimit-reset-
    tokens``), Anthropic's (``anthropic-ratelimit-requests-reset``), and a gateway's one limit
    (Envoy's and Kong's ``x-ratelimit-reset``, the IETF draft's ``ratelimit-reset``)."""
    if reset.startswith("x-ratelimit-reset-"):
        return "x-ratelimit-remaining-" + reset.removeprefix("x-ratelimit-reset-")
    if reset.startswith("anthropic-ratelimit-") and reset.endswith("-reset"):
        return reset.removesuffix("-reset") + "-remaining"
    if reset in ("x-ratelimit-reset", "ratelimit-reset"):
        return reset.removesuffix("reset") + "remaining"
    return None


# --------------------------------------------------------------------------- the one mapping

_CONTEXT_MARKERS = ("context_length_exceeded", "prompt is too long", "maximum context length",
                    "context window", "too many tokens")
_QUOTA_CODES = ("insufficient_quota", "billing_hard_limit_reached",
                # Moonshot's type and Baidu Qianfan's code for an empty balance (both a 429)
                "exceeded_current_quota_error", "billing_insufficient_balance",
                # an account in arrears: Volcengine Ark's 403 ("... has an overdue balance"),
                # DashScope's 400 ("Access denied, please make sure your account is in good
                # standing."), as the providers send them or behind a gateway's 429
                "accountoverdueerror", "arrearage")
# Anthropic answers an exhausted prepaid balance with a 400 (or a ``billing_error`` type); Zhipu
# an unpaid account with a 429 (code 1113: "余额不足或无可用资源包", "您的账户已欠费", in English
# "Insufficient balance ...", "... in arrears"); Moonshot "suspended due to insufficient balance";
# SiliconFlow "Your paid balance is insufficient". Rate limits there speak of 并发, 频率, 限额
# and 上限, never of a balance (余额) or arrears (欠费)
_QUOTA_MARKERS = ("credit balance is too low", "insufficient balance", "balance is insufficient",
                  "in arrears", "overdue balance", "余额不足", "欠费")
# Qwen (DashScope's OpenAI-compatible mode) sends its per-minute token limit in OpenAI's quota
# words and code; its link to the token-limit section of its error codes says what it is
_THROTTLE_MARKERS = ("#token-limit",)


# a quota code in a gateway's words is a field's value ('code': 'arrearage'; own_words keeps a
# code's), not a word a quoted request may hold (a tool named list_arrearage_accounts)
_QUOTA_FIELD = re.compile(r"[:=]\s*['\"](?:" + "|".join(_QUOTA_CODES) + r")['\"]")


def _words_say(lowered: str, markers: tuple[str, ...]) -> bool:
    """Whether one of ``markers`` is in the provider's own words of ``lowered``, not in the
    request a validation error quotes back (:mod:`hermes_core.error_echo`)."""
    return any(m in lowered for m in markers) and any(m in own_words(lowered) for m in markers)


def _says_unpaid(kind: str, code: str, lowered: str) -> bool:
    """A 400 or 403 saying the account has no money: its code or type, a gateway's re-raise of
    them, or a balance marker in the provider's own words (not in the request a validation error
    quotes back: :mod:`hermes_core.error_echo`)."""
    if kind == "billing_error" or code in _QUOTA_CODES or kind in _QUOTA_CODES:
        return True
    if not any(m in lowered for m in _QUOTA_CODES + _QUOTA_MARKERS):
        return False   # most refusals: no quotation to take apart
    own = own_words(lowered)
    return _QUOTA_FIELD.search(own) is not None or any(m in own for m in _QUOTA_MARKERS)


_MAX_MESSAGE = 500
# "does not exist" (OpenAI, vLLM), "not a valid model" (Anthropic, OpenRouter), "Model Not Exist"
# (DeepSeek), "Invalid model name" (LiteLLM), "not found" (Ollama)
_MODEL_MARKERS = ("not exist", "not found", "unknown model", "no such model", "invalid model",
                  "not a valid model")


def _names_missing_model(status: int, kind: str, code: str, lowered: str) -> bool:
    """A 404 (every 404 from a chat endpoint is about the model or the path), or a 400 whose
    code or message says the model is unknown."""
    if status == 404:
        return True
    if status != 400:
        return False
    if code == "model_not_found" or kind == "model_not_found":
        return True
    return "model" in lowered and any(m in lowered for m in _MODEL_MARKERS)


_HTML_START = re.compile(r"\s*(?:<!doctype\s+html|<html|<head|<body|<!--)", re.IGNORECASE)


class _PageText(html.parser.HTMLParser):
    """The title and the visible text of an HTML page (scripts and styles left out)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.text: list[str] = []
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("title", "script", "style"):
            self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        where = self._in[-1] if self._in else ""
        if where == "title":
            self.title.append(data)
        elif not where:
            self.text.append(data)


PAGE_NOTE = "(an HTML page, not the API's error)"
PAGE_CHARS = 200   # of a page's title or text, shown before the note


def page_text(text: str) -> str | None:
    """A proxy's or CDN's HTML error page (a 502 from nginx, a Cloudflare page) as a person reads
    it: its title, else its visible text, whole; None when ``text`` is not HTML. Its first 500
    characters are doctype, comments and CSS, which say nothing."""
    if not _HTML_START.match(text):
        return None
    page = _PageText()
    try:
        page.feed(text[:100_000])
        page.close()
    except Exception:   # html.parser is lenient; a page it cannot read is still not a message
        return ""
    return printable(" ".join(" ".join(page.title).split()) or " ".join(" ".join(page.text).split()))


def _error_fields(body: Any) -> tuple[str, str, str, bool]:
    """(type, code, message, is a page) from an OpenAI or Anthropic error body, or a proxy's HTML
    page; type and code lower-cased.

    The message is whole: it is cut only after redaction, or a key straddling the cut would keep
    its first characters (no longer the exact secret nor key-shaped)."""
    if isinstance(body, bytes | bytearray):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, Mapping):
        text = str(body or "")
        page = page_text(text)
        return ("", "", text, False) if page is None else ("", "", page, True)
    err = body.get("error", body)
    if not isinstance(err, Mapping):
        return "", "", str(err), False
    return (str(err.get("type") or "").lower(), str(err.get("code") or "").lower(),
            str(err.get("message") or ""), False)


def error_from_status(status_code: int, headers: Mapping[str, str | Sequence[str]],
                      body: Any = None, *,
                      provider: str | None = None, now: float | None = None,
                      redact: Callable[[str], str] | None = None) -> ProviderError:
    """Map an HTTP status, its headers and the parsed error body to the error tree.

    The body is consulted only for structured fields (``error.type`` / ``error.code``), to tell a
    context-window 400 or a quota 429 from the rest; the status code decides the family.
    ``redact`` (the call's secrets) scrubs the message, the body and every header's value.
    """
    kind, code, message, page = _error_fields(body)
    lowered = message.lower()
    shown = message or ("" if page else kind or f"HTTP {status_code}")
    if redact is not None:
        shown = redact(shown)
        # a gateway may echo the call's key in a header: it is scrubbed as the body is, not only
        # of key shapes and registered keys (ProviderError's own net)
        headers = {k: redact(v) for k, v in redact_headers(headers).items()}
        if body is not None:   # any shape: a proxy may answer with a JSON array or bytes
            body = redact(body.decode("utf-8", "replace") if isinstance(body, bytes | bytearray)
                          else str(body))
    shown = f"{shown[:PAGE_CHARS]} {PAGE_NOTE}".lstrip() if page else shown[:_MAX_MESSAGE]
    label = f"{provider}: " if provider else ""
    stated = stated_request_id(headers)
    text = f"{label}HTTP {status_code}: {shown}" + (f" ({stated[0]} {stated[1]})" if stated else "")
    kw: dict[str, Any] = {"status_code": status_code, "headers": headers, "body": body,
                          "provider": provider}
    if status_code == 429:
        # a proxy re-raising the provider's quota error keeps its code only in the words
        # (LiteLLM's "code": "429"); a gateway answering all refusals with 429 an empty balance,
        # and its validation errors with 429 too: the words read are the provider's own
        if (code in _QUOTA_CODES or kind in _QUOTA_CODES or _words_say(
                lowered, _QUOTA_CODES + _QUOTA_MARKERS)) and not any(
                m in lowered for m in _THROTTLE_MARKERS):
            return QuotaExhausted(text, **kw)
        return RateLimited(text, retry_after=parse_retry_after(headers, now=now), **kw)
    if status_code == 402 or (status_code in (400, 403) and _says_unpaid(kind, code, lowered)):
        return QuotaExhausted(text, **kw)
    if status_code in (401, 403):
        return AuthenticationFailed(text, **kw)
    if _names_missing_model(status_code, kind, code, lowered):
        return ModelNotFound(text, **kw)
    if status_code == 413 or (status_code == 400 and (
            code == "context_length_exceeded" or any(m in lowered for m in _CONTEXT_MARKERS))):
        return ContextWindowExceeded(text, **kw)
    if status_code == 529 or (status_code == 503 and "overload" in (kind + lowered)):
        return Overloaded(text, **kw)
    if status_code == 408:
        return Timeout(text, **kw)
    if status_code >= 500:
        return ServerError(text, **kw)
    return BadRequest(text, **kw)
