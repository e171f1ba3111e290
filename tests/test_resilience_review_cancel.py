"""A caller cancelled while a network backend (Redis) is acquiring a key in a worker thread must
not leak that key's in-flight count: the thread finishes the acquire after the task is gone, and
nobody would ever release it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from routing_doubles import Scripted

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import AcquireResult, InMemoryPoolState, KeySpec, PoolPolicy
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


class SlowReleaseBackend(InMemoryPoolState):
    """An io-bound backend whose outcome report waits until the event loop itself sets ``gate``:
    reported on the loop's thread, it would wait forever (the loop cannot run the setter)."""

    io_bound = True

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.threads: list[str] = []

    def release(self, provider, fingerprint, outcome, policy, *, lease=""):  # type: ignore[no-untyped-def]
        self.threads.append(threading.current_thread().name)
        self.entered.set()
        assert self.gate.wait(5.0), "the outcome report blocked the event loop"
        return super().release(provider, fingerprint, outcome, policy, lease=lease)


async def _open_gate(backend: SlowReleaseBackend) -> None:
    assert await asyncio.to_thread(backend.entered.wait, 5.0)
    backend.gate.set()


async def test_acomplete_reports_outcomes_off_the_event_loop() -> None:
    backend = SlowReleaseBackend()
    pool = CredentialPool({"a": [A1]}, backend=backend)
    loop = CallLoop({"a": Scripted("a", default="hello")}, pool, audit_path=False,  # type: ignore[dict-item]
                    policy=LoopPolicy())
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")
    (completion, attempts), _ = await asyncio.gather(loop.acomplete(PROMPT, dec), _open_gate(backend))
    assert completion.text == "hello" and [a.status for a in attempts] == ["ok"]
    assert backend.threads and threading.main_thread().name not in backend.threads
    assert [k.in_flight for k in pool.status()] == [0]


async def test_astream_reports_outcomes_off_the_event_loop() -> None:
    backend = SlowReleaseBackend()
    pool = CredentialPool({"a": [A1]}, backend=backend)
    loop = CallLoop({"a": Scripted("a", default="hello")}, pool, audit_path=False,  # type: ignore[dict-item]
                    policy=LoopPolicy())
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")

    async def consume() -> str:
        return "".join([d.text async for d in loop.astream(PROMPT, dec)])

    text, _ = await asyncio.gather(consume(), _open_gate(backend))
    assert text == "hello"
    assert threading.main_thread().name not in backend.threads
    assert [k.in_flight for k in pool.status()] == [0]
