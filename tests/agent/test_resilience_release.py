"""Tests of ``hermes_core/agent/resilience.py``: what a request gives back when it is cancelled,
closed early or goes elsewhere (its key, its place in the wait queue, its turn as head), and
that the pool hears of it off the event loop.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import pytest

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import AcquireResult, InMemoryPoolState, KeySpec, PoolPolicy
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.resilience_policy import LoopPolicy
from hermes_core.agent.smart_routing import Router
from hermes_core.errors import Attempt
from hermes_core.providers import build_providers
from hermes_core.testing import FakeClock, ScriptedProvider
from hermes_core.types import Candidate, Credential, RouteDecision
from tests.agent.conftest import OPTS, PRIMARY_URL, PROMPT, PROMPT_HTTP, decision, settings_for

A1_CANCEL = Credential("a", "sk-a-one-secret")


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
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    loop = CallLoop({"a": ScriptedProvider("a")}, pool, audit_path=False, policy=LoopPolicy())  # type: ignore[dict-item]
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")
    await _cancel_during_acquire(backend, lambda: loop.acomplete(PROMPT, dec))
    assert [k.in_flight for k in pool.status()] == [0]


async def test_cancelled_aacquire_does_not_leak_in_flight() -> None:
    backend = SlowBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
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
        self.released = threading.Event()
        self.threads: list[str] = []

    def release(self, provider, fingerprint, outcome, policy, *, lease=""):  # type: ignore[no-untyped-def]
        self.threads.append(threading.current_thread().name)
        self.entered.set()
        assert self.gate.wait(5.0), "the outcome report blocked the event loop"
        try:
            return super().release(provider, fingerprint, outcome, policy, lease=lease)
        finally:
            self.released.set()


async def _open_gate(backend: SlowReleaseBackend) -> None:
    assert await asyncio.to_thread(backend.entered.wait, 5.0)
    backend.gate.set()


async def test_acomplete_reports_outcomes_off_the_event_loop() -> None:
    backend = SlowReleaseBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    loop = CallLoop({"a": ScriptedProvider("a", default="hello")}, pool, audit_path=False,  # type: ignore[dict-item]
                    policy=LoopPolicy())
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")
    (completion, attempts), _ = await asyncio.gather(loop.acomplete(PROMPT, dec), _open_gate(backend))
    assert completion.text == "hello" and [a.status for a in attempts] == ["ok"]
    assert backend.threads and threading.main_thread().name not in backend.threads
    assert [k.in_flight for k in pool.status()] == [0]


async def test_astream_reports_outcomes_off_the_event_loop() -> None:
    backend = SlowReleaseBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    loop = CallLoop({"a": ScriptedProvider("a", default="hello")}, pool, audit_path=False,  # type: ignore[dict-item]
                    policy=LoopPolicy())
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")

    async def consume() -> str:
        return "".join([d.text async for d in loop.astream(PROMPT, dec)])

    text, _ = await asyncio.gather(consume(), _open_gate(backend))
    assert text == "hello"
    assert threading.main_thread().name not in backend.threads
    assert [k.in_flight for k in pool.status()] == [0]


async def _cancelled_at_the_provider(
        respx_mock: Any, **loop_kw: Any) -> tuple[CredentialPool, SlowReleaseBackend, asyncio.Future[Any]]:
    """A call whose request hangs at the provider (the real SDK awaiting the answer), its task
    cancelled there once: the pool behind a networked backend whose release waits for a gate."""
    settings = settings_for()
    pool = CredentialPool.from_settings(settings, backend := SlowReleaseBackend())
    loop = CallLoop(build_providers(settings), pool, settings, audit_path=False, **loop_kw)
    at_provider, never = asyncio.Event(), asyncio.Event()

    async def hang(request: httpx.Request) -> httpx.Response:
        at_provider.set()
        await never.wait()
        raise AssertionError("never answered")

    respx_mock.post(PRIMARY_URL).mock(side_effect=hang)
    task = asyncio.ensure_future(loop.acomplete(PROMPT_HTTP, Router.from_settings(settings)
                                                .select("hi"), OPTS))
    await at_provider.wait()
    task.cancel()
    return pool, backend, task


async def test_a_task_cancelled_mid_request_frees_its_key_off_the_loop_before_it_unwinds(
        respx_mock: Any) -> None:
    """A task cancelled while its request is at the provider (the real SDK awaiting the
    answer): the key's release is a round trip to a networked pool, made in a worker thread
    while the loop serves other tasks (here the task that lets the release through), and the key
    is free once the caller's await of the task returns. The release ran on the loop's thread
    and held every other task up for the round trip."""
    pool, backend, task = await _cancelled_at_the_provider(respx_mock)
    gate = asyncio.ensure_future(_open_gate(backend))   # a task of the loop lets it through
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [k.in_flight for k in pool.status("primary")] == [0, 0]
    assert threading.main_thread().name not in backend.threads
    await gate


async def test_a_second_cancellation_while_the_abort_s_release_is_on_its_way_keeps_the_attempt(
        respx_mock: Any) -> None:
    """Cancelled, then cancelled again while the aborted attempt's key release waits for a
    networked pool: the task ends at once (the release finishes in its thread), and the aborted
    attempt was recorded only once the release was done, so the caller's exception carried no
    attempts and the audit hook never heard of a request that was sent and billed."""
    heard: list[Attempt] = []
    pool, backend, task = await _cancelled_at_the_provider(respx_mock, on_attempt=heard.append)
    assert await asyncio.to_thread(backend.entered.wait, 5.0)   # the release is on its way
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as raised:
        await task
    assert [a.status for a in getattr(raised.value, "attempts", ())] == ["aborted"]
    assert [a.status for a in heard] == ["aborted"]
    backend.gate.set()
    assert await asyncio.to_thread(backend.released.wait, 5.0)
    assert [k.in_flight for k in pool.status("primary")] == [0, 0]


def test_a_second_ctrl_c_during_the_abort_s_release_keeps_the_attempt() -> None:
    """Ctrl-C mid-request, then again while the key's release is at the pool (a Redis round
    trip): the attempt was recorded after the release, so the second interrupt reached the
    caller carrying no attempts."""

    class InterruptedRelease(InMemoryPoolState):
        def release(self, provider, fingerprint, outcome, policy, *, lease=""):  # type: ignore[no-untyped-def]
            super().release(provider, fingerprint, outcome, policy, lease=lease)
            raise KeyboardInterrupt   # the second Ctrl-C, once the key is free

    pool = CredentialPool({"a": [A1_CANCEL]}, backend=InterruptedRelease())
    loop = CallLoop({"a": ScriptedProvider("a", script=[KeyboardInterrupt()])}, pool,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy())
    with pytest.raises(KeyboardInterrupt) as raised:
        loop.complete(PROMPT, RouteDecision("m1", (Candidate("a", "m1"),), "test"))
    assert [a.status for a in getattr(raised.value, "attempts", ())] == ["aborted"]
    assert [k.in_flight for k in pool.status()] == [0]


def test_a_second_ctrl_c_while_the_abort_is_recorded_still_frees_the_key() -> None:
    """Recording the abort before the release opened a window the other way: a second Ctrl-C
    while the attempt was being recorded (the audit line, the ``on_attempt`` hook) skipped the
    release, and the key stayed in flight for the rest of the process."""

    def hook(attempt: Attempt) -> None:
        if attempt.status == "aborted":
            raise KeyboardInterrupt   # the second Ctrl-C, in the middle of the record

    pool = CredentialPool({"a": [A1_CANCEL]})
    loop = CallLoop({"a": ScriptedProvider("a", script=[KeyboardInterrupt()])}, pool,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy(), on_attempt=hook)
    with pytest.raises(KeyboardInterrupt) as raised:
        loop.complete(PROMPT, RouteDecision("m1", (Candidate("a", "m1"),), "test"))
    assert [k.in_flight for k in pool.status()] == [0]
    assert [a.status for a in getattr(raised.value, "attempts", ())] == ["aborted"]


async def test_an_async_abort_whose_record_raises_still_frees_the_key() -> None:
    """The async twin: a hook that raises while the cancelled attempt is recorded left the key
    in flight, its release never reached the pool."""

    def hook(attempt: Attempt) -> None:
        if attempt.status == "aborted":
            raise RuntimeError("the audit hook failed")

    pool = CredentialPool({"a": [A1_CANCEL]})
    loop = CallLoop({"a": ScriptedProvider("a", script=[asyncio.CancelledError()])}, pool,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy(), on_attempt=hook)
    with pytest.raises((RuntimeError, asyncio.CancelledError)) as raised:
        await loop.acomplete(PROMPT, RouteDecision("m1", (Candidate("a", "m1"),), "test"))
    assert [k.in_flight for k in pool.status()] == [0]
    assert [a.status for a in getattr(raised.value, "attempts", ())] == ["aborted"]


async def test_an_async_stream_closed_mid_answer_frees_its_key_off_the_loop_before_aclose_returns(
        ) -> None:
    """The caller stops reading after the first delta: the abort's release goes through a
    worker thread (it blocked the loop) and is done when ``aclose`` returns."""
    backend = SlowReleaseBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    loop = CallLoop({"a": ScriptedProvider("a", script=[["one ", "two"]])}, pool,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy())
    stream = loop.astream(PROMPT, RouteDecision("m1", (Candidate("a", "m1"),), "test"))
    assert (await stream.__anext__()).text == "one "
    gate = asyncio.ensure_future(_open_gate(backend))   # a task of the loop lets it through
    await stream.aclose()
    assert [k.in_flight for k in pool.status()] == [0]
    assert [a.status for a in stream.attempts] == ["aborted"]
    assert threading.main_thread().name not in backend.threads
    await gate


async def test_a_head_cancelled_while_asking_again_passes_its_turn_on() -> None:
    """The timed head woke and asks the pool again in a worker thread (an io-bound backend) when
    its task is cancelled: the thread still finishes, finds no key, and nobody is head any more.
    The abandoned request must wake a follower, or the followers sleep out their whole bound
    while the key frees."""
    backend = SlowBackend()
    backend.gate.set()
    pool = CredentialPool({"a": [Credential("a", "sk-a-one-secret", max_rpm=1)]},
                          backend=backend)
    pool.success(pool.acquire("a"))                    # the key's one request per window is spent
    head_asleep, wake_head = threading.Event(), asyncio.Event()

    async def asleep(seconds: float) -> None:
        head_asleep.set()
        await wake_head.wait()

    loop = CallLoop({"a": ScriptedProvider("a", default="hello")}, pool, audit_path=False,  # type: ignore[dict-item]
                    asleep=asleep, policy=LoopPolicy())
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")
    head = asyncio.ensure_future(loop.acomplete(PROMPT, dec))
    assert await asyncio.to_thread(head_asleep.wait, 5.0)
    follower = threading.Thread(target=pool.waiters.wait,
                                args=("a", 3600.0, 3600.0, lambda s: None))
    follower.start()
    while pool.waiters.waiting("a") < 2:               # the head and its follower
        await asyncio.sleep(0.001)
    backend.gate.clear()
    backend.entered.clear()
    backend.finished.clear()
    wake_head.set()                                    # the head's sleep ends: it asks again
    assert await asyncio.to_thread(backend.entered.wait, 5.0)
    head.cancel()
    await asyncio.sleep(0)
    backend.gate.set()
    assert await asyncio.to_thread(backend.finished.wait, 5.0)
    for _ in range(50):                                # let the done-callbacks run
        await asyncio.sleep(0.01)
    with pytest.raises(asyncio.CancelledError):
        await head
    still_waiting = pool.waiters.waiting("a")
    pool.waiters.wake("a")                             # never leave the thread behind
    await asyncio.to_thread(follower.join, 5.0)
    assert still_waiting == 0


class FailingOnce(InMemoryPoolState):
    """An in-memory pool state whose next acquire raises once ``fail_next`` is set (a backend
    error, as a Redis reply that cannot be read)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.fail_next = threading.Event()

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        if self.fail_next.is_set():
            self.fail_next.clear()
            raise RuntimeError("the pool state could not be read")
        return super().acquire(provider, keys, policy, tokens=tokens, rand=rand)


def test_a_waiter_handed_the_turn_whose_acquire_raises_passes_the_turn_on() -> None:
    """Three requests wait for the only key; it frees and wakes the first follower, whose acquire
    raises (a backend error). That request fails, but the turn it was handed goes to the request
    behind it, which completes while the timed head still sleeps; the follower used to keep the
    turn to itself and the one behind waited out its whole bound."""
    clock = FakeClock()
    state = FailingOnce(clock)
    pool = CredentialPool({"a": [Credential("a", "sk-a-turn-secret-1")]},
                          policy=PoolPolicy(max_in_flight=1), backend=state, rng=random.Random(1))
    gate = threading.Event()
    loop = CallLoop({"a": ScriptedProvider("a", default="hello")}, pool, clock=clock,  # type: ignore[dict-item]
                    sleep=lambda s: gate.wait(30), rng=random.Random(2), audit_path=False,
                    policy=LoopPolicy(deadline_s=600.0, max_wait_s=600.0))
    dec = RouteDecision("m", (Candidate("a", "m"),), "test")
    held = pool.acquire("a")
    outcomes: dict[str, str] = {}
    lock = threading.Lock()

    def request(name: str) -> None:
        try:
            loop.complete(PROMPT, dec)
            result = "ok"
        except RuntimeError as e:
            result = str(e)
        with lock:
            outcomes[name] = result

    def until(cond: Callable[[], bool]) -> bool:
        for _ in range(5000):
            if cond():
                return True
            time.sleep(0.001)
        return False

    threads = [threading.Thread(target=request, args=(name,))
               for name in ("head", "first behind", "second behind")]
    try:
        for n, t in enumerate(threads, start=1):
            t.start()
            assert until(lambda n=n: pool.waiters.waiting("a") == n)   # type: ignore[misc]
        state.fail_next.set()
        pool.success(held)                         # the key frees: the first follower's turn
        assert until(lambda: len(outcomes) == 2), outcomes
        assert outcomes == {"first behind": "the pool state could not be read",
                            "second behind": "ok"}
    finally:
        gate.set()
        for t in threads:
            t.join(10)
    assert outcomes["head"] == "ok" and pool.waiters.waiting("a") == 0


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("strikes", [8, 1])    # the key quarantined, or removed for good
def test_a_request_that_goes_on_to_a_keyless_server_gives_up_the_wait_it_held(
        mode: str, strikes: int) -> None:
    """A request waits for provider a's only key; meanwhile another request has that key
    rejected, so the waiter goes on to a local server called without a key, which answers. It
    gives up the place it held in a's wait queue and its refusal: both stayed held for good (the
    process counted a waiter on a forever, so each later request for a's keys, once the key was
    back from its quarantine, queued behind nobody for its whole ``max_wait_s``)."""
    clock = FakeClock()
    key = Credential("a", "sk-a-keyless-secret-1", max_rpm=1)
    pool = CredentialPool({"a": [key]}, backend=InMemoryPoolState(clock), rng=random.Random(1),
                          policy=PoolPolicy(auth_recheck_s=600.0, auth_max_strikes=strikes))
    pool.success(pool.acquire("a"))                 # the key's one request this minute

    def rejected_meanwhile(seconds: float) -> None:
        pool.remove(key, "after HTTP 401")          # another request's 401
        clock.sleep(seconds)

    async def arejected_meanwhile(seconds: float) -> None:
        rejected_meanwhile(seconds)

    local = ScriptedProvider("local", kind="offline", default="local answer")
    loop = CallLoop({"a": ScriptedProvider("a"), "local": local}, pool,  # type: ignore[dict-item]
                    clock=clock, sleep=rejected_meanwhile, asleep=arejected_meanwhile,
                    rng=random.Random(2), audit_path=False, policy=LoopPolicy(max_wait_s=90.0))
    dec = decision(("a", "m1"), ("local", "m2"))
    if mode == "sync":
        done, attempts = loop.complete(PROMPT, dec)
    else:
        done, attempts = asyncio.run(loop.acomplete(PROMPT, dec))
    assert done.text == "local answer" and len(clock.sleeps) == 1
    assert [(x.provider, x.status) for x in attempts] == [("a", "no_key"), ("local", "ok")]
    assert pool.waiters.waiting("a") == 0 and pool._refused["a"] == 0


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_ctrl_c_while_a_wait_is_announced_gives_up_the_places_the_request_held(mode: str) -> None:
    """Ctrl-C reaches the caller's ``on_wait`` (the chat saying it waits for a key) as the
    request is about to wait a second time: the request gives up the wait-queue place it held
    and its refusal, as when Ctrl-C comes during the wait itself. Both stayed held for good (the
    announcement ran before the wait's clean-up was armed)."""
    clock = FakeClock()
    key = Credential("a", "sk-a-announce-secret-1", max_rpm=1)
    pool = CredentialPool({"a": [key]}, backend=InMemoryPoolState(clock), rng=random.Random(1))
    pool.success(pool.acquire("a"))                 # the key's one request this minute
    heard: list[float] = []

    def on_wait(provider: str, seconds: float) -> None:
        heard.append(seconds)
        if len(heard) == 2:
            raise KeyboardInterrupt

    async def asleep(seconds: float) -> None:       # the clock stays: refused again after it
        return None

    loop = CallLoop({"a": ScriptedProvider("a")}, pool, clock=clock,  # type: ignore[dict-item]
                    sleep=lambda s: None, asleep=asleep, rng=random.Random(2), audit_path=False,
                    policy=LoopPolicy(max_wait_s=90.0), on_wait=on_wait)
    with pytest.raises(KeyboardInterrupt):
        if mode == "sync":
            loop.complete(PROMPT, decision(("a", "m1")))
        else:
            asyncio.run(loop.acomplete(PROMPT, decision(("a", "m1"))))
    assert len(heard) == 2
    assert pool.waiters.waiting("a") == 0 and pool._refused["a"] == 0
