"""A minimal scripted provider, fake clock and recorded sleep for the call-loop tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_core.providers.base import CallOptions
from hermes_core.types import Completion, Credential, Delta, Prompt


class FakeClock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.t += s

    async def asleep(self, s: float) -> None:
        self.sleep(s)


@dataclass
class Call:
    model: str
    fingerprint: str | None
    timeout_s: float


@dataclass
class Scripted:
    """Replies per model/key: each item is an Exception to raise, a str reply, or a list of
    deltas/exceptions for a stream. ``by_key`` maps fingerprint -> script (takes precedence)."""

    name: str
    kind: str = "openai"
    script: list[Any] = field(default_factory=list)
    by_key: dict[str, list[Any]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    default: Any = "ok"

    @property
    def requires_key(self) -> bool:
        return self.kind != "offline"

    def _next(self, model: str, cred: Credential | None, options: CallOptions) -> Any:
        fp = cred.fingerprint if cred else None
        self.calls.append(Call(model, fp, options.timeout_s))
        queue = self.by_key.get(fp or "", None)
        if queue:
            return queue.pop(0)
        if self.script:
            return self.script.pop(0)
        return self.default

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        return {}

    def complete(self, prompt: Prompt, model: str, credential: Credential | None,
                 options: CallOptions) -> Completion:
        item = self._next(model, credential, options)
        if isinstance(item, BaseException):
            raise item
        return Completion(text=str(item), model=model, provider=self.name)

    def stream(self, prompt: Prompt, model: str, credential: Credential | None,
               options: CallOptions) -> Iterator[Delta]:
        item = self._next(model, credential, options)
        if isinstance(item, BaseException):
            raise item
        parts = item if isinstance(item, list) else [str(item)]

        def gen() -> Iterator[Delta]:
            for p in parts:
                if isinstance(p, BaseException):
                    raise p
                yield Delta(text=p)

        return gen()

    async def acomplete(self, prompt: Prompt, model: str, credential: Credential | None,
                        options: CallOptions) -> Completion:
        return self.complete(prompt, model, credential, options)

    def astream(self, prompt: Prompt, model: str, credential: Credential | None,
                options: CallOptions) -> AsyncIterator[Delta]:
        sync = self.stream(prompt, model, credential, options)

        async def gen() -> AsyncIterator[Delta]:
            for d in sync:
                yield d

        return gen()
