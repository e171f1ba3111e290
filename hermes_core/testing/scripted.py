"""A provider that plays back a script, per model or per key, and records every call.

Why: the call loop's decisions (retry, rotate keys, fail over, give up) depend on the order of
failures; a script of exceptions and replies pins that order without any HTTP. For the SDKs'
own behaviour use the respx builders in :mod:`hermes_core.testing.builders` instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_core.providers.base import CallOptions
from hermes_core.types import Completion, Credential, Delta, Prompt


@dataclass
class ScriptedCall:
    """One call as the provider saw it."""

    model: str
    fingerprint: str | None
    timeout_s: float


@dataclass
class ScriptedProvider:
    """Replies in order: each script item is an exception to raise, a str reply, or a list of
    deltas/exceptions for a stream. ``by_key`` maps a credential fingerprint to its own script
    (taken first); when both are empty, ``default`` answers."""

    name: str
    kind: str = "openai"
    script: list[Any] = field(default_factory=list)
    by_key: dict[str, list[Any]] = field(default_factory=dict)
    calls: list[ScriptedCall] = field(default_factory=list)
    default: Any = "ok"

    @property
    def requires_key(self) -> bool:
        return self.kind != "offline"

    def _next(self, model: str, cred: Credential | None, options: CallOptions) -> Any:
        fp = cred.fingerprint if cred else None
        self.calls.append(ScriptedCall(model, fp, options.timeout_s))
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
