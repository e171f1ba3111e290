"""A provider that plays back a script, per model or per key, and records every call.

Why: the call loop's decisions (retry, rotate keys, fail over, give up) depend on the order of
failures; a script of exceptions and replies pins that order without any HTTP. For the SDKs'
own behaviour use the respx builders in :mod:`hermes_core.testing.builders` instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from hermes_core.providers.base import CallOptions
from hermes_core.testing.fakes import UNSET, run_out_default
from hermes_core.types import Completion, Credential, Delta, Prompt


@dataclass
class ScriptedCall:
    """One call as the provider saw it."""

    model: str
    fingerprint: str | None
    timeout_s: float


@dataclass
class ScriptedProvider:
    """Replies in order: each script item is an exception to raise, a str reply, a
    :class:`~hermes_core.types.Completion` (its tool calls streamed as tool-call deltas), or a
    list of stream pieces (str or :class:`~hermes_core.types.Delta`, sent as they are, and
    exceptions that cut the stream there; asked whole, its text joined or its first error).
    ``by_key`` maps a credential fingerprint to its own script
    (taken first); when both are empty, ``default`` answers ("ok" unless given; ``None`` makes
    a call past the script an AssertionError naming the call, the model, the key and why; the
    pytest plugin's ini ``hermes_strict_scripts = true`` makes None the default).

    Like every double it needs no key: with none configured for its name it is called with
    none (``fingerprint`` None), with keys configured they are used (rotated, removed) as a real
    provider's would be. ``requires_key=True`` models a provider that cannot be called without
    one (a call loop failing over a keyless backup; an Agent with no key answering offline);
    ``kind`` only says whose wire and tokenizer it stands for."""

    name: str
    kind: str = "openai"
    script: list[Any] = field(default_factory=list)
    by_key: dict[str, list[Any]] = field(default_factory=dict)
    calls: list[ScriptedCall] = field(default_factory=list)
    default: Any = UNSET
    requires_key: bool = False
    _strict_by: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.default, self._strict_by = run_out_default(self.default)

    def _next(self, model: str, cred: Credential | None, options: CallOptions) -> Any:
        fp = cred.fingerprint if cred else None
        self.calls.append(ScriptedCall(model, fp, options.timeout_s))
        queue = self.by_key.get(fp or "", None)
        if queue:
            return queue.pop(0)
        if self.script:
            return self.script.pop(0)
        if self.default is None:
            return AssertionError(
                f"ScriptedProvider {self.name!r}: no scripted reply left for call {len(self.calls)} "
                f"(model {model!r}, key {fp or 'none'}; {self._strict_by}: a call past the "
                "script is an error): script more, or pass default=... to answer every further "
                "call")
        return self.default

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        return {}

    def complete(self, prompt: Prompt, model: str, credential: Credential | None,
                 options: CallOptions) -> Completion:
        item = self._next(model, credential, options)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Completion):   # model/provider left empty: the ones asked
            return replace(item, model=item.model or model, provider=item.provider or self.name)
        if isinstance(item, list):          # a stream's script asked whole: its text, or its error
            return Completion(text="".join(_text(p) for p in item), model=model,
                              provider=self.name)
        return Completion(text=str(item), model=model, provider=self.name)

    def stream(self, prompt: Prompt, model: str, credential: Credential | None,
               options: CallOptions) -> Iterator[Delta]:
        item = self._next(model, credential, options)
        if isinstance(item, BaseException):
            raise item
        parts: list[Any] = item if isinstance(item, list) else (
            _deltas(item) if isinstance(item, Completion) else [str(item)])

        def gen() -> Iterator[Delta]:
            for p in parts:
                if isinstance(p, BaseException):
                    raise p
                yield p if isinstance(p, Delta) else Delta(text=str(p))

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


def _text(piece: Any) -> str:
    """One piece of a stream's script as text; an exception in it is raised."""
    if isinstance(piece, BaseException):
        raise piece
    return piece.text if isinstance(piece, Delta) else str(piece)


def _deltas(done: Completion) -> list[Delta]:
    """A scripted Completion as a stream delivers it: text, tool calls, then the finish."""
    finish = done.finish_reason or ("tool_calls" if done.tool_calls else "stop")
    return [*([Delta(text=done.text, from_output_tool=done.from_output_tool)] if done.text else []),
            *(Delta(tool_call=c) for c in done.tool_calls),
            Delta(usage=done.usage, finish_reason=finish)]
