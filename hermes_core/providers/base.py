"""The Provider seam: one wire format, sync and async, complete and stream.

A Provider speaks an API; it does not own keys or retries. The credential (and with it the base
URL) is passed per call by the call loop, which owns rotation, retries and failover. SDK clients
are therefore built with ``max_retries=0`` and cached per (provider, key, endpoint).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from hermes_core.forked import renew_in_child
from hermes_core.types import Completion, Credential, Delta, Prompt, ToolCall, Usage

#: The tool Anthropic is forced to call for structured output; its input is the reply's JSON.
STRUCTURED_OUTPUT_TOOL = "structured_output"
#: ``reasoning_effort`` as an extended-thinking budget, for APIs that take a budget in tokens.
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Per-call knobs; the deadline is the call loop's business, ``timeout_s`` is one attempt's.

    Each provider sends only what its API (and the model) accepts and drops the rest: ``seed`` is
    OpenAI's; ``reasoning_effort`` goes to OpenAI reasoning models, and to Anthropic models with
    extended thinking as a thinking budget (``thinking_budget_tokens`` sets one directly).
    ``tool_choice``: "auto", "none", "required" or a tool's name. ``response_format``: the
    structured-output request, ``{"name", "schema", "description"}``.
    """

    max_tokens: int = 1024
    temperature: float | None = None
    timeout_s: float = 60.0          # the whole response, not only socket silence
    idle_timeout_s: float | None = None   # a stream's longest gap between content events
    max_stream_bytes: int | None = None   # a stream's most bytes (None: watch.MAX_STREAM_BYTES)
    tool_choice: str | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    thinking_budget_tokens: int | None = None
    response_format: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)


@runtime_checkable
class Provider(Protocol):
    """What the call loop needs from a model API.

    Optionally a provider may say ``requires_key = False`` (a local server, the offline provider,
    the test doubles): the call loop then calls it without a credential when the pool has none.
    Read it with :func:`requires_key`.
    """

    name: str
    kind: str

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        """The exact request payload this provider would send (cache markers included)."""
        ...

    def complete(self, prompt: Prompt, model: str, credential: Credential | None,
                 options: CallOptions) -> Completion: ...

    def stream(self, prompt: Prompt, model: str, credential: Credential | None,
               options: CallOptions) -> Iterator[Delta]: ...

    async def acomplete(self, prompt: Prompt, model: str, credential: Credential | None,
                        options: CallOptions) -> Completion: ...

    def astream(self, prompt: Prompt, model: str, credential: Credential | None,
                options: CallOptions) -> AsyncIterator[Delta]: ...


def requires_key(provider: object) -> bool:
    """Whether ``provider`` can only be called with a key (the default when it does not say)."""
    return bool(getattr(provider, "requires_key", True))


class ClientCache:
    """SDK clients keyed by (provider, key fingerprint, endpoint, sync/async, event loop).

    Building a client is not free (an httpx2 pool each), and reusing one keeps connections warm.
    The key itself is never part of the cache key, only its fingerprint. An async client's pooled
    connections belong to the event loop that opened them, so async clients are kept per running
    loop (``asyncio.run`` per request would otherwise reuse a connection of a closed loop:
    "Event loop is closed"); clients of closed loops are dropped. A forked child builds clients
    of its own (see :meth:`renew_after_fork`).
    """

    def __init__(self, factory: Callable[[Credential | None, bool], Any]) -> None:
        self._factory = factory
        self._clients: dict[tuple[Hashable, ...], Any] = {}
        self._loops: dict[int, asyncio.AbstractEventLoop] = {}
        self._lock = threading.Lock()
        # a forked child's copies of the parent's clients: never used, never closed
        self._inherited: list[Any] = []
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): a lock of its own (one a thread of the
        parent held, building a client, hung the child's first call), and no client of the
        parent's: their kept-alive connections are the parent's sockets, and a child's request
        on one shared it with the parent, their requests and replies interleaved. The copies
        are kept, not closed or collected: a client's close (the SDK closes one it collects)
        ends the connections, and one speaking HTTP/2 would tell the server so on the parent's
        socket."""
        self._lock = threading.Lock()
        self._inherited.append(self._clients)
        self._clients, self._loops = {}, {}

    def get(self, credential: Credential | None, *, is_async: bool = False) -> Any:
        loop = _running_loop() if is_async else None
        key = (credential.provider if credential else None,
               credential.fingerprint if credential else None,
               credential.endpoint if credential else None, is_async,
               id(loop) if loop is not None else None)
        # the common case, read without the lock (a dict read is atomic): a client built for
        # this key on a loop already seen
        client = self._clients.get(key)
        if client is not None and (loop is None or self._loops.get(id(loop)) is loop):
            return client
        with self._lock:
            if loop is not None and self._loops.get(id(loop)) is not loop:
                self._forget_closed_loops(loop)
            client = self._clients.get(key)
            if client is None:
                client = self._factory(credential, is_async)
                self._clients[key] = client
            return client

    def _forget_closed_loops(self, current: asyncio.AbstractEventLoop) -> None:
        """A loop not seen before: drop clients of loops that closed (or whose id it reuses)."""
        gone = {i for i, lp in self._loops.items() if lp.is_closed() or i == id(current)}
        if gone:
            self._clients = {k: c for k, c in self._clients.items() if k[-1] not in gone}
            self._loops = {i: lp for i, lp in self._loops.items() if i not in gone}
        self._loops[id(current)] = current

    def __len__(self) -> int:
        return len(self._clients)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Accumulator:
    """Joins a stream's deltas into the Completion they amount to: the text joined, tool calls
    and reasoning blocks in order, the last usage, finish reason, paused content, container and
    model given (a provider's stream gives those in its last piece). The one joiner of the
    agent's streamed rounds (``agent.turn.Shown``) and of a whole request a server answered with
    an event stream (``_sdk.delta_completion``); named after ``model`` when no piece names one."""

    def __init__(self, model: str) -> None:
        self.default_model = model
        self.parts: list[str] = []
        self.calls: list[ToolCall] = []
        self.usage: Usage | None = None
        self.finish: str | None = None
        self.reasoning: list[Mapping[str, Any]] = []
        self.paused: tuple[Mapping[str, Any], ...] = ()
        self.container: str | None = None
        self.model: str | None = None   # the model the stream says answered
        self.from_output_tool = False   # the text is the structured output tool's input
        self.request_id: str | None = None   # the provider's id of the request, when a piece says

    def add(self, d: Delta) -> bool:
        """Take ``d`` in; True when it brought text."""
        if d.tool_call is not None:
            self.calls.append(d.tool_call)
        if d.paused:
            self.paused = d.paused
        if d.container:
            self.container = d.container
        if d.model:
            self.model = d.model
        if d.reasoning is not None:
            self.reasoning.append(d.reasoning)
        if d.usage is not None:
            self.usage = d.usage
        if d.finish_reason:
            self.finish = d.finish_reason
        if d.request_id:
            self.request_id = d.request_id
        if d.text:
            self.parts.append(d.text)
            self.from_output_tool = self.from_output_tool or d.from_output_tool
            return True
        return False

    def completion(self, provider: str = "", *, request_id: str | None = None,
                   unreported: Usage = Usage()) -> Completion:
        """The reply so far; ``unreported``: its usage when no piece brought one (the agent
        keeps a bare provider's zero counts as they were; a server's event stream read whole
        says it reported none); ``request_id``: the one a caller read itself, else the pieces'."""
        return Completion("".join(self.parts), self.model or self.default_model, provider,
                          self.usage if self.usage is not None else unreported,
                          tuple(self.calls), self.finish, request_id or self.request_id,
                          reasoning=tuple(self.reasoning), paused=self.paused,
                          container=self.container, from_output_tool=self.from_output_tool)
