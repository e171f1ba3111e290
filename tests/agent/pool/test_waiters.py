"""Tests of ``hermes_core/agent/pool/waiters.py``: one timed waiter per provider, the others woken
one per freed slot. Threads are sequenced with events and a barrier, never with sleeps."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import AcquireResult, InMemoryPoolState, KeySpec, PoolPolicy
from hermes_core.agent.pool.waiters import SlotWaiters, wait_role, wakes_for
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.resilience_policy import LoopPolicy
from hermes_core.testing import FakeClock, ScriptedProvider
from hermes_core.types import Candidate, Credential, Message, Prompt, RouteDecision

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
KEY = Credential("a", "sk-a-waiters-secret-1")
ROUTE = RouteDecision("m", (Candidate("a", "m"),), "test")


@pytest.mark.parametrize(("head_taken", "delay", "allowed", "expected"), [
    (False, 2.0, 10.0, ("head", 2.0)),
    (False, 12.0, 10.0, ("head", 10.0)),      # never past what the request may still wait
    (True, 2.0, 10.0, ("follower", 10.0)),    # a follower waits for its turn, not for a time
    (True, 2.0, -1.0, ("follower", 0.0)),
])
def test_wait_role(head_taken: bool, delay: float, allowed: float,
                   expected: tuple[str, float]) -> None:
    assert wait_role(head_taken, delay, allowed) == expected


@pytest.mark.parametrize(("freed", "followers", "woken"), [(1, 5, 1), (3, 2, 2), (0, 4, 0),
                                                           (2, 0, 0)])
def test_wakes_for_one_follower_per_freed_slot(freed: int, followers: int, woken: int) -> None:
    assert wakes_for(freed, followers) == woken


def _until(cond: object, what: str) -> None:
    """Wait (bounded) for another thread to reach a state; the test asserts states, not times."""
    for _ in range(5000):
        if cond():  # type: ignore[operator]
            return
        time.sleep(0.001)
    raise AssertionError(f"never reached: {what}")


def test_a_freed_slot_wakes_exactly_one_follower() -> None:
    waiters = SlotWaiters()
    gate = threading.Event()
    returned: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(5)

    def waiter(i: int) -> None:
        start.wait()
        if i:    # the head arrives first (below); these four queue behind it
            _until(lambda: waiters.waiting("p") >= 1, "a head")
        role = waiters.wait("p", 1.0, 30.0, lambda s: gate.wait(30))
        with lock:
            returned.append(role)

    threads = [threading.Thread(target=waiter, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    _until(lambda: waiters.waiting("p") == 5, "five waiting")
    assert waiters.wake("p") == 1
    _until(lambda: len(returned) == 1, "one woken")
    assert returned == ["follower"] and waiters.waiting("p") == 4   # the head and three
    assert waiters.wake("p", freed=2) == 2
    _until(lambda: len(returned) == 3, "two more woken")
    gate.set()                                   # the head's timed sleep ends
    waiters.wake("p")
    for t in threads:
        t.join(10)
    assert sorted(returned) == ["follower"] * 4 + ["head"] and waiters.waiting("p") == 0


class CountingState(InMemoryPoolState):
    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.acquires = 0
        self.count_lock = threading.Lock()

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        with self.count_lock:
            self.acquires += 1
        return super().acquire(provider, keys, policy, tokens=tokens, rand=rand)


def _one_key_loop(state: InMemoryPoolState, clock: FakeClock
                  ) -> tuple[CredentialPool, CallLoop, threading.Event]:
    """One provider with one key that allows one request in flight; the loop's timed sleeps
    last until the test sets the returned event."""
    pool = CredentialPool({"a": [KEY]}, policy=PoolPolicy(max_in_flight=1), backend=state,
                          rng=random.Random(1))
    gate = threading.Event()
    loop = CallLoop({"a": ScriptedProvider("a")}, pool, clock=clock,
                    sleep=lambda s: gate.wait(30), rng=random.Random(2), audit_path=False,
                    policy=LoopPolicy(deadline_s=600.0, max_wait_s=600.0))
    return pool, loop, gate


def test_a_key_that_frees_wakes_one_waiting_request_not_all() -> None:
    """Four requests wait for the only key (one in flight at most). The timed head sleeps until
    the test lets it; the key freeing wakes one follower, whose success wakes the next: the three
    complete while the head still sleeps, at most two acquires each (no herd)."""
    clock = FakeClock()
    state = CountingState(clock)
    pool, loop, gate = _one_key_loop(state, clock)
    held = pool.acquire("a")
    done: list[str] = []
    lock = threading.Lock()

    def request() -> None:
        completion, _ = loop.complete(PROMPT, ROUTE)
        with lock:
            done.append(completion.text)

    threads = [threading.Thread(target=request) for _ in range(4)]
    for t in threads:
        t.start()
    _until(lambda: pool.waiters.waiting("a") == 4, "four waiting")
    before = state.acquires                       # 1 held + 4 refused
    pool.success(held)
    _until(lambda: len(done) == 3, "three followers served while the head sleeps")
    assert pool.waiters.waiting("a") == 1
    assert state.acquires - before <= 2 * 3
    gate.set()
    for t in threads:
        t.join(10)
    assert done == ["ok"] * 4 and pool.waiters.waiting("a") == 0


def test_async_waiters_are_woken_one_per_slot() -> None:
    async def main() -> list[str]:
        waiters = SlotWaiters()
        gate = asyncio.Event()

        async def head_sleep(s: float) -> None:
            await gate.wait()

        tasks = [asyncio.ensure_future(waiters.await_turn("p", 1.0, 30.0, head_sleep))]
        await asyncio.sleep(0)
        tasks += [asyncio.ensure_future(waiters.await_turn("p", 1.0, 30.0, head_sleep))
                  for _ in range(3)]
        for _ in range(3):
            await asyncio.sleep(0)
        assert waiters.waiting("p") == 4
        # woken from another thread, as a pool release on a worker thread does
        await asyncio.to_thread(waiters.wake, "p")
        finished, _ = await asyncio.wait(tasks, timeout=5, return_when=asyncio.FIRST_COMPLETED)
        assert len(finished) == 1 and waiters.waiting("p") == 3
        tasks[-1].cancel()                          # a cancelled follower leaves the queue
        await asyncio.gather(tasks[-1], return_exceptions=True)
        assert waiters.waiting("p") == 2
        gate.set()
        waiters.wake("p")
        roles = await asyncio.gather(*tasks[:-1])
        return sorted(roles)

    assert asyncio.run(main()) == ["follower", "follower", "head"]


def test_a_follower_whose_event_loop_closed_is_skipped_not_raised_into_the_waker(
        head_asleep: Callable[[SlotWaiters, str], None]) -> None:
    """A task left waiting on an event loop that was closed can never run again: the key's
    release (``pool.success`` in another thread) must not raise "Event loop is closed", and the
    freed slot goes to the next follower instead."""
    waiters = SlotWaiters()
    head_asleep(waiters, "p")
    dead = asyncio.new_event_loop()
    stranded = dead.create_task(waiters.await_turn("p", 1.0, 3600.0, asyncio.sleep))
    dead.run_until_complete(asyncio.sleep(0))          # the task is queued as a follower
    assert waiters.waiting("p") == 2
    alive = threading.Thread(target=waiters.wait, args=("p", 1.0, 3600.0, time.sleep))
    alive.start()
    while waiters.waiting("p") < 3:                    # the thread is queued behind the task
        time.sleep(0.001)
    dead.close()
    assert not stranded.done()                         # it can never run again
    try:
        assert waiters.wake("p") == 1
        alive.join(5.0)
        assert not alive.is_alive()
    finally:
        waiters.wake("p", 10)
        alive.join(5.0)


def test_a_follower_that_waited_already_goes_back_to_the_front_of_the_queue() -> None:
    """A follower woken by a release that freed no slot it could take keeps its place: it
    re-enters first in line, not behind requests that came after it."""
    waiters = SlotWaiters()
    head_in, release_head = threading.Event(), threading.Event()
    order: list[str] = []
    lock = threading.Lock()

    def head_sleep(seconds: float) -> None:
        head_in.set()
        release_head.wait(30.0)

    def follower(name: str, front: bool) -> None:
        waiters.wait("p", 1.0, 30.0, time.sleep, front=front)
        with lock:
            order.append(name)

    head = threading.Thread(target=waiters.wait, args=("p", 30.0, 30.0, head_sleep))
    head.start()
    assert head_in.wait(5.0)
    late = threading.Thread(target=follower, args=("came later", False))
    late.start()
    _until(lambda: waiters.waiting("p") == 2, "one follower")
    back = threading.Thread(target=follower, args=("waited before", True))
    back.start()
    _until(lambda: waiters.waiting("p") == 3, "two followers")
    try:
        assert waiters.wake("p") == 1
        _until(lambda: len(order) == 1, "one woken")
        assert order == ["waited before"]
    finally:
        waiters.wake("p", 5)
        release_head.set()
        for t in (head, late, back):
            t.join(5.0)


def test_a_new_request_queues_behind_the_ones_waiting_for_the_provider() -> None:
    """The only key frees while a request waits for it (its timed sleep not over): a request
    arriving then does not take the key ahead of it, it queues behind; first come, first served.
    (Requests that had just been served took each freed slot first, and with 200 tasks on a
    budget of 15 per second a quarter of them waited past their deadline.)"""
    clock = FakeClock()
    pool, loop, gate = _one_key_loop(InMemoryPoolState(clock), clock)
    held = pool.acquire("a")
    done: list[str] = []
    lock = threading.Lock()

    def request(name: str) -> None:
        loop.complete(PROMPT, ROUTE)
        with lock:
            done.append(name)

    first = threading.Thread(target=request, args=("first",))
    first.start()
    _until(lambda: pool.waiters.waiting("a") == 1, "the first waiting")
    pool.success(held)                        # the key is free; the first still sleeps
    second = threading.Thread(target=request, args=("second",))
    second.start()
    _until(lambda: pool.waiters.waiting("a") == 2, "the second queued behind it")
    assert done == []
    gate.set()
    for t in (first, second):
        t.join(10)
    assert done == ["first", "second"] and pool.waiters.waiting("a") == 0


def test_a_follower_interrupted_while_waiting_leaves_the_queue(monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """Ctrl-C in the chat while its request waits behind others: the interrupt must not leave a
    ghost in the queue, which took the next freed slot's wake-up from a real waiter and made every
    later request of the process queue behind it."""
    import hermes_core.agent.pool.waiters as waiters_module

    class Interrupted(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            raise KeyboardInterrupt

    waiters = SlotWaiters()
    waiters._enter("a", 5.0, 10.0, None)           # someone else is the timed head
    monkeypatch.setattr(waiters_module.threading, "Event", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        waiters.wait("a", 5.0, 10.0, lambda s: None)
    assert waiters.waiting("a") == 1                # the head only
    assert waiters.wake("a") == 0                   # no ghost to hand a slot to


def test_a_follower_handed_its_turn_keeps_its_place_until_it_runs() -> None:
    """A key frees and wakes a task waiting for it; before that task's event loop runs it, a
    request arrives on a thread. The woken task is still ahead: the newcomer must see it waiting
    and queue behind it, not find an empty queue (or a vacant head's place with no delay) and take
    the freed slot first."""
    order: list[str] = []
    lock = threading.Lock()
    newcomer_slept: list[float] = []

    def newcomer_sleep(seconds: float) -> None:
        newcomer_slept.append(seconds)

    async def main(waiters: SlotWaiters) -> threading.Thread:
        gate = asyncio.Event()

        async def head_sleep(seconds: float) -> None:
            await gate.wait()

        head = asyncio.ensure_future(waiters.await_turn("p", 5.0, 30.0, head_sleep))
        await asyncio.sleep(0)
        follower = asyncio.ensure_future(waiters.await_turn("p", 1.0, 30.0, asyncio.sleep))
        await asyncio.sleep(0)
        gate.set()
        assert await head == "head"                 # the head asks the pool again
        assert waiters.waiting("p") == 1
        waiters.wake("p")                           # a key frees: the task is handed its turn
        assert waiters.waiting("p") == 1            # ... and has not run yet: still waiting

        def newcomer() -> None:
            waiters.wait("p", 0.0, 30.0, newcomer_sleep)
            with lock:
                order.append("newcomer")

        thread = threading.Thread(target=newcomer)
        thread.start()
        # the loop is blocked here, so the woken task cannot run meanwhile
        _until(lambda: waiters.waiting("p") == 2, "the newcomer queued behind the woken task")
        assert newcomer_slept == []                 # not a head let through at once
        assert await follower == "follower"
        with lock:
            order.append("woken task")
        return thread

    waiters = SlotWaiters()
    thread = asyncio.run(main(waiters))
    try:
        assert waiters.wake("p") == 1               # the woken task's request got its key
    finally:
        waiters.wake("p", 5)
        thread.join(5.0)
    assert order == ["woken task", "newcomer"] and waiters.waiting("p") == 0


def test_a_new_request_does_not_take_the_place_of_a_head_gone_to_ask_the_pool() -> None:
    """The timed head's sleep ends and it asks the pool again, its place vacant meanwhile, while
    another request waits behind it. A request arriving then queues behind that follower: it does
    not become the head with no delay and ask the pool ahead of everyone queued."""
    waiters = SlotWaiters()
    head_in, release_head = threading.Event(), threading.Event()
    order: list[str] = []
    newcomer_slept: list[float] = []
    lock = threading.Lock()

    def head_sleep(seconds: float) -> None:
        head_in.set()
        release_head.wait(30.0)

    def newcomer_sleep(seconds: float) -> None:
        newcomer_slept.append(seconds)

    def request(name: str, delay: float, sleep: object) -> None:
        waiters.wait("p", delay, 30.0, sleep)  # type: ignore[arg-type]
        with lock:
            order.append(name)

    head = threading.Thread(target=waiters.wait, args=("p", 30.0, 30.0, head_sleep))
    head.start()
    assert head_in.wait(5.0)
    follower = threading.Thread(target=request, args=("follower", 1.0, time.sleep))
    follower.start()
    _until(lambda: waiters.waiting("p") == 2, "a follower behind the head")
    release_head.set()
    head.join(5.0)                                   # the head is asking the pool again
    assert not head.is_alive() and waiters.waiting("p") == 1
    newcomer = threading.Thread(target=request, args=("newcomer", 0.0, newcomer_sleep))
    newcomer.start()
    try:
        _until(lambda: waiters.waiting("p") == 2, "the newcomer queued behind the follower")
        assert order == [] and newcomer_slept == []
        assert waiters.wake("p") == 1                # the head got a key: it wakes the next
        _until(lambda: order == ["follower"], "the follower served first")
        assert waiters.wake("p") == 1
        _until(lambda: len(order) == 2, "the newcomer served next")
    finally:
        waiters.wake("p", 5)
        follower.join(5.0)
        newcomer.join(5.0)
    assert order == ["follower", "newcomer"] and waiters.waiting("p") == 0


class PausedAcquireState(InMemoryPoolState):
    """Holds one chosen thread inside ``acquire`` until the test lets it go."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.paused_thread: int | None = None
        self.entered, self.go = threading.Event(), threading.Event()

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        if threading.get_ident() == self.paused_thread:
            self.entered.set()
            self.go.wait(30.0)
        return super().acquire(provider, keys, policy, tokens=tokens, rand=rand)


def test_a_new_request_does_not_take_the_slot_a_lone_head_is_asking_for() -> None:
    """The only waiter's timed sleep ends and it asks the pool for the key that freed meanwhile.
    A request arriving while that ask is under way found no one waiting (the head's place vacant,
    no follower) and took the key first; the head was refused and slept again. It must queue
    behind the head instead: first come, first served."""
    clock = FakeClock()
    state = PausedAcquireState(clock)
    pool, loop, gate = _one_key_loop(state, clock)
    held = pool.acquire("a")
    done: list[str] = []
    lock = threading.Lock()

    def request(name: str) -> None:
        loop.complete(PROMPT, ROUTE)
        with lock:
            done.append(name)

    first = threading.Thread(target=request, args=("first",))
    first.start()
    _until(lambda: pool.waiters.waiting("a") == 1, "the first waiting as the head")
    state.paused_thread = first.ident             # its next ask of the pool is held
    pool.success(held)                            # the key frees while the head sleeps
    gate.set()                                    # its sleep ends: it asks the pool again
    assert state.entered.wait(10.0)
    second = threading.Thread(target=request, args=("second",))
    second.start()
    try:
        _until(lambda: bool(done) or pool.waiters.waiting("a") == 2,
               "the second served or queued")
        assert done == []
    finally:
        state.go.set()
        for t in (first, second):
            t.join(10)
    assert done == ["first", "second"] and pool.waiters.waiting("a") == 0


def test_a_waiter_that_holds_its_place_keeps_it_until_it_is_done() -> None:
    """A waiter that returns to ask the pool with ``hold`` still counts as waiting, and a
    newcomer queues behind it, until it says it is done (got a key or gave up), which hands the
    turn on; coming back to wait again it is the head once more."""
    waiters = SlotWaiters()
    newcomer_slept: list[float] = []
    assert waiters.wait("p", 1.0, 30.0, lambda s: None, hold=True) == "head"
    assert waiters.waiting("p") == 1
    newcomer = threading.Thread(target=waiters.wait,
                                args=("p", 0.0, 30.0, newcomer_slept.append))
    newcomer.start()
    try:
        _until(lambda: waiters.waiting("p") == 2, "the newcomer queued behind")
        assert newcomer_slept == []
        assert waiters.wait("p", 1.0, 30.0, lambda s: None, front=True, hold=True) == "head"
        assert waiters.waiting("p") == 2
        assert waiters.done("p") == 1                # the turn goes to the newcomer
        newcomer.join(5.0)
        assert not newcomer.is_alive()
    finally:
        waiters.wake("p", 5)
        newcomer.join(5.0)
    assert waiters.waiting("p") == 0 and waiters.done("p") == 0


def test_an_async_waiter_that_holds_its_place_keeps_it_until_it_is_done() -> None:
    """:meth:`SlotWaiters.await_turn` with ``hold``, as the async call loop waits: the task back
    from its timed sleep still counts as waiting, and a newcomer task queues behind it."""

    async def nothing(seconds: float) -> None:
        return None

    async def main(waiters: SlotWaiters) -> None:
        assert await waiters.await_turn("p", 1.0, 30.0, nothing, hold=True) == "head"
        newcomer = asyncio.ensure_future(waiters.await_turn("p", 0.0, 30.0, nothing, hold=True))
        await asyncio.sleep(0)
        assert not newcomer.done() and waiters.waiting("p") == 2
        assert waiters.done("p") == 1                # the holder got its key: the newcomer's turn
        assert await newcomer == "follower"
        assert waiters.waiting("p") == 1             # the newcomer now holds its own place
        assert waiters.done("p") == 0 and waiters.waiting("p") == 0

    asyncio.run(main(SlotWaiters()))


def test_a_forked_child_is_not_queued_behind_the_parent_s_waiters(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any],
        head_asleep: Callable[[SlotWaiters, str], None]) -> None:
    """A head sleeping in the parent at the fork: the child's copy of the queue had a head no
    thread of the child's would ever be, so the child's first waiter became a follower nobody
    woke, waiting its whole bound (a request's deadline), and a thread of the parent's inside
    the queue's lock left it held for ever. The child's queue is its own: its first waiter is
    the head."""
    waiters = SlotWaiters()
    head_asleep(waiters, "p")
    with held_by_a_thread(waiters._lock):
        got = in_forked_child(lambda: (waiters.waiting("p"),
                                       waiters.wait("p", 0.0, 3.0, lambda _: None)))
    assert got == (0, "head")
