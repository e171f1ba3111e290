"""Requests waiting for a provider's key: one timed waiter, the rest woken one per free slot.

When every key of a provider is busy, each request used to sleep until the earliest key frees
(plus jitter) and then ask the pool again: with 200 waiters, 200 acquires land on one freed slot,
one wins and 199 go back to sleep. Here the waiters of one process queue per provider:

* the first to arrive is the *head*: it alone sleeps until the time the pool named (jittered by
  the caller), then asks again;
* every other waiter is a *follower*: it waits, without polling, until it is handed the turn or
  its own bound (what is left of its ``max_wait_s`` / deadline) runs out;
* a key that frees (any outcome the pool hears of) wakes ONE follower; a waiter that stops
  waiting (it got a key, or it gives up on the provider) also wakes one: with a key, because
  another slot may be free; without, so that someone becomes the timed head again.

So each freed slot costs one or two acquires instead of one per waiter. The queue is first come,
first served: a woken follower that finds no key after all goes back to the *front* (``front``),
and a new request queues behind the waiters instead of taking the slot they wait for (see
``CallLoop``). Otherwise a follower woken by a release that freed no window slot went to the back
every time, and requests that had just been served took each freed slot first: with 200 tasks on
a key budget of 15 per second, a quarter of the requests waited past a 20 s deadline while the
queue as a whole was 13 s long. The head's place stays taken while a woken follower has yet to
run (a task is woken through its event loop) and, for a newcomer, while followers are queued
(their head is out asking the pool again); a newcomer arriving on another thread in between
found an empty queue, or a vacant place it entered with no delay, and took the freed slot
first. A waiter that returns to ask the pool with ``hold`` keeps its place (it still counts as
waiting) until it is :meth:`~SlotWaiters.done` (it got a key or gave up) or comes back to wait
(``front``): a lone head's place was vacant while it asked, and a newcomer on another thread found
no one waiting and took the slot the head had slept for, which then slept again. Processes
sharing a Redis pool each have their own queue; their heads' timed waits cover slots freed
elsewhere.
:func:`wait_role` and :func:`wakes_for` are the decisions; :class:`SlotWaiters` applies them with
one lock, for threads and asyncio tasks alike.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from hermes_core.forked import renew_in_child

Role = Literal["head", "follower"]


def wait_role(head_taken: bool, delay: float, allowed: float) -> tuple[Role, float]:
    """A waiter's role and how long it waits: the head sleeps ``delay`` (until the earliest slot
    frees, jittered, never past ``allowed``); a follower waits up to ``allowed`` for its turn."""
    if head_taken:
        return "follower", max(0.0, allowed)
    return "head", max(0.0, min(delay, allowed))


def wakes_for(freed: int, followers: int) -> int:
    """Followers to wake when ``freed`` slots free: one per slot, never more than are waiting."""
    return max(0, min(freed, followers))


class _Turn:
    """A follower's wake-up: a thread's Event or a task's Future on its loop."""

    __slots__ = ("event", "future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop = loop
        self.event: threading.Event | None = None if loop else threading.Event()
        self.future: asyncio.Future[None] | None = loop.create_future() if loop else None

    def wake(self) -> bool:
        """Hand this waiter its turn; False when it can never take it (its event loop was
        closed with the task still waiting)."""
        if self.event is not None:
            self.event.set()
        elif self.loop is not None and self.future is not None:
            fut = self.future
            try:
                self.loop.call_soon_threadsafe(_resolve, fut)
            except RuntimeError:     # "Event loop is closed"
                return False
        return True


    def live(self) -> bool:
        """Whether this waiter can still run (a task's event loop was not closed)."""
        return self.loop is None or not self.loop.is_closed()


@dataclass
class _Queue:
    head: bool = False
    followers: deque[_Turn] = field(default_factory=deque)
    woken: set[_Turn] = field(default_factory=set)   # handed the turn, not yet running
    asking: int = 0    # waiters back from their wait with ``hold``, asking the pool, not done

    def in_transit(self) -> int:
        return sum(1 for t in self.woken if t.live())


class SlotWaiters:
    """Per-provider wait queues of one process (see the module docstring)."""

    def __init__(self) -> None:
        self.renew_after_fork()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """Empty queues under a lock of their own; again in a forked child (:mod:`hermes_core.forked`):
        the parent's waiters are threads the child does not have, and a head among them made
        the child's first waiter a follower nobody woke."""
        self._lock = threading.Lock()
        self._queues: dict[str, _Queue] = {}

    def waiting(self, provider: str) -> int:
        """Requests waiting on ``provider`` now (the head included, and those asking the pool
        with their place held)."""
        with self._lock:
            q = self._queues.get(provider)
            return 0 if q is None else (int(q.head) + len(q.followers) + q.in_transit()
                                        + q.asking)

    def wake(self, provider: str, freed: int = 1) -> int:
        """``freed`` slots of the provider freed (or a waiter left): wake that many followers
        (:func:`wakes_for`); returns how many were woken. A follower that can never wake (its
        event loop is closed) is dropped and the turn goes to the next."""
        woken = 0
        while True:
            with self._lock:
                q = self._queues.get(provider)
                if q is None or wakes_for(freed - woken, len(q.followers)) == 0:
                    return woken
                turn = q.followers.popleft()
                q.woken.add(turn)
            if turn.wake():
                woken += 1
            else:
                with self._lock:
                    q.woken.discard(turn)

    def done(self, provider: str) -> int:
        """A waiter that returned with ``hold`` got its key or gives up on the provider: its
        place is free, and one follower is woken (another slot may be free; or someone must
        become the timed head). Returns how many were woken."""
        with self._lock:
            q = self._queues.get(provider)
            if q is not None and q.asking > 0:
                q.asking -= 1
        return self.wake(provider)

    def _enter(self, provider: str, delay: float, allowed: float,
               loop: asyncio.AbstractEventLoop | None,
               front: bool = False, hold: bool = False) -> tuple[Role, float, _Turn | None]:
        with self._lock:
            q = self._queues.setdefault(provider, _Queue())
            if front and hold and q.asking > 0:
                q.asking -= 1    # back from asking: the place it held is the one it takes now
            # the head's place is taken while the head sleeps, while a woken follower has yet to
            # run and, for a newcomer, while others are queued or out asking the pool with their
            # place held: only a request that waited already steps into a vacant place
            taken = (q.head or q.in_transit() > 0
                     or (not front and (q.asking > 0 or any(t.live() for t in q.followers))))
            role, timeout = wait_role(taken, delay, allowed)
            if role == "head":
                q.head = True
                return role, timeout, None
            turn = _Turn(loop)
            if front:
                q.followers.appendleft(turn)
            else:
                q.followers.append(turn)
            return role, timeout, turn

    def _leave_head(self, provider: str, hold: bool = False) -> None:
        with self._lock:
            q = self._queues[provider]
            q.head = False
            q.asking += int(hold)

    def _give_up(self, provider: str, turn: _Turn, hold: bool = False) -> bool:
        """A follower stops waiting (its turn came, its bound ran out, or it was interrupted):
        it leaves the queue, holding its place while it asks the pool with ``hold``; False when
        it had been handed the turn."""
        with self._lock:
            q = self._queues[provider]
            q.asking += int(hold)
            try:
                q.followers.remove(turn)
                return True
            except ValueError:
                q.woken.discard(turn)
                return False

    def wait(self, provider: str, delay: float, allowed: float,
             sleep: Callable[[float], None], *, front: bool = False, hold: bool = False) -> Role:
        """Block until this request's turn to ask the pool again; ``sleep`` times the head.
        ``front``: it waited already and keeps its place (a follower goes first in line).
        ``hold``: it keeps its place while it asks the pool, until :meth:`done` or it comes back
        with ``front`` (then the place it held is given back as it enters)."""
        role, timeout, turn = self._enter(provider, delay, allowed, None, front, hold)
        if turn is None:
            try:
                sleep(timeout)
            except BaseException:
                self._leave_head(provider)
                self.wake(provider)      # someone else must become the timed head
                raise
            self._leave_head(provider, hold)
            return role
        assert turn.event is not None
        try:
            turn.event.wait(timeout)
        except BaseException:   # Ctrl-C while queued: leave no ghost to take a slot's wake-up
            if not self._give_up(provider, turn):
                self.wake(provider)      # it was handed the turn: pass it on
            raise
        self._give_up(provider, turn, hold)
        return role

    async def await_turn(self, provider: str, delay: float, allowed: float,
                         asleep: Callable[[float], Awaitable[None]], *,
                         front: bool = False, hold: bool = False) -> Role:
        """:meth:`wait` for asyncio tasks."""
        role, timeout, turn = self._enter(provider, delay, allowed,
                                          asyncio.get_running_loop(), front, hold)
        if turn is None:
            try:
                await asleep(timeout)
            except BaseException:
                self._leave_head(provider)
                self.wake(provider)      # someone else must become the timed head
                raise
            self._leave_head(provider, hold)
            return role
        assert turn.future is not None
        try:
            await asyncio.wait_for(asyncio.shield(turn.future), timeout)
        except TimeoutError:
            pass
        except BaseException:
            if not self._give_up(provider, turn):
                self.wake(provider)      # it was handed the turn: pass it on
            raise
        self._give_up(provider, turn, hold)
        return role


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
