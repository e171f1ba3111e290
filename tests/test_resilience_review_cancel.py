"""A caller cancelled while a network backend (Redis) is acquiring a key in a worker thread must
not leak that key's in-flight count: the thread finishes the acquire after the task is gone, and
nobody would ever release it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from routing_doubles import Scripted

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool_state import AcquireResult, InMemoryPoolState, KeySpec, PoolPolicy
from hermes_core.agent.resilience import CallLoop, LoopPolicy
from hermes_core.types import Candidate, Credential, Message, Prompt, RouteDecision

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
A1 = Credential("a", "sk-a-one-secret")


class SlowBackend(InMemoryPoolState):
    """An io-bound backend whose acquire waits for ``gate`` (a slow Redis round trip)."""

    io_bound = True

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.finished = threading.Event()

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        self.entered.set()
        assert self.gate.wait(5.0)
        try:
            return super().acquire(provider, keys, policy, tokens=tokens, rand=rand)
        finally:
            self.finished.set()


async def _cancel_during_acquire(backend: SlowBackend, coro_factory: object) -> None:
    task = asyncio.ensure_future(coro_factory())  # type: ignore[operator]
    assert await asyncio.to_thread(backend.entered.wait, 5.0)
    task.cancel()
    await asyncio.sleep(0)
    backend.gate.set()
    assert await asyncio.to_thread(backend.finished.wait, 5.0)
    for _ in range(50):        # let the done-callbacks run
        await asyncio.sleep(0.01)
    try:
        await task
    except asyncio.CancelledError:
        pass


async def test_cancelled_acomplete_does_not_leak_in_flight() -> None:
    backend = SlowBackend()
    pool = CredentialPool({"a": [A1]}, backend=backend)
    loop = CallLoop({"a": Scripted("a")}, pool, audit_path=False, policy=LoopPolicy())  # type: ignore[dict-item]
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")
    await _cancel_during_acquire(backend, lambda: loop.acomplete(PROMPT, dec))
    assert [k.in_flight for k in pool.status()] == [0]


async def test_cancelled_aacquire_does_not_leak_in_flight() -> None:
    backend = SlowBackend()
    pool = CredentialPool({"a": [A1]}, backend=backend)
    await _cancel_during_acquire(backend, lambda: pool.aacquire("a"))
    assert [k.in_flight for k in pool.status()] == [0]
