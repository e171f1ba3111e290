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


def failover_loop(primary_kind: str, primary_key: str, backup_key: str) -> tuple[Any, Any]:
    """A real call loop over the real SDK adapters (mock them with respx): "primary" of
    ``primary_kind`` first, then "backup" of the other kind, no retries, a fake clock.
    Returns (loop, router)."""
    import random

    from hermes_core.agent.credential_pool import CredentialPool
    from hermes_core.agent.pool.state import InMemoryPoolState
    from hermes_core.agent.resilience import CallLoop
    from hermes_core.agent.smart_routing import Router
    from hermes_core.config import load_settings
    from hermes_core.providers import build_providers

    models = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4"}
    backup_kind = "anthropic" if primary_kind == "openai" else "openai"
    backup_model = "claude-haiku" if backup_kind == "anthropic" else "gpt-4o"
    settings = load_settings({
        "llm": {"routing": {"default_model": models[primary_kind], "providers": [
            {"name": "primary", "type": primary_kind, "priority": 1, "models": [models[primary_kind]]},
            {"name": "backup", "type": backup_kind, "priority": 2, "models": [backup_model]}]}},
        "credentials": {"primary": {"keys": [{"key": primary_key}]},
                        "backup": {"keys": [{"key": backup_key}]}},
        "credential_pool": {"retries_per_provider": 0},
    })
    clock = FakeClock()
    pool = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(build_providers(settings), pool, settings, clock=clock, sleep=clock.sleep,
                    asleep=clock.asleep, rng=random.Random(2), audit_path=False)
    return loop, Router.from_settings(settings)


async def assert_both_streams_raise(provider: Any, credential: Credential,
                                    error: type[BaseException]) -> None:
    """``stream`` and ``astream`` of ``provider`` both raise ``error`` (the sync and async SDK
    paths parse separately, so both are checked)."""
    import pytest

    from hermes_core.types import Message

    prompt = Prompt(system="s", messages=(Message("user", "hi"),))
    options = CallOptions(max_tokens=16, timeout_s=5)
    with pytest.raises(error):
        list(provider.stream(prompt, "m", credential, options))
    with pytest.raises(error):
        async for _ in provider.astream(prompt, "m", credential, options):
            pass
