"""The pool backends the contract suite (test_state_contract.py) runs against; a head asleep in a
provider's wait queue (test_waiters.py); for the Redis backend's files (test_redis*.py,
test_forked.py) a client of the test redis-server (``rds``), an injected monotonic clock
(``Mono``), the backend's log lines (``logged_messages``) and a fleet whose slots were born a
TTL ago (``born_a_ttl_ago``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import ClassVar

import pytest
import redis

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import InMemoryPoolState, PoolStateBackend
from hermes_core.agent.pool.waiters import SlotWaiters
from hermes_core.agent.pool.worker_slot import WorkerSlot
from hermes_core.testing import FakeClock

BACKEND_KINDS = ("memory", "redis")


@pytest.fixture
def backend_kinds() -> tuple[str, ...]:
    return BACKEND_KINDS


@pytest.fixture(params=BACKEND_KINDS)
def backend(request: pytest.FixtureRequest) -> Iterator[PoolStateBackend]:
    """Each PoolStateBackend in turn; Redis on a real redis-server with a fresh key prefix."""
    if request.param == "memory":
        yield InMemoryPoolState()
        return
    url = request.getfixturevalue("redis_url")
    prefix = request.getfixturevalue("redis_prefix")
    be = RedisPoolState(url, options=RedisPoolOptions(key_prefix=prefix))
    yield be
    assert not be.degraded, "the contract ran against the local fallback, not Redis"
    be.close()


@pytest.fixture(params=BACKEND_KINDS)
def clocked_backend(request: pytest.FixtureRequest) -> Iterator[tuple[PoolStateBackend, FakeClock]]:
    """Each PoolStateBackend on an injected clock (Redis takes it in place of ``TIME``)."""
    clock = FakeClock(1000.0)
    if request.param == "memory":
        yield InMemoryPoolState(clock), clock
        return
    be = RedisPoolState(request.getfixturevalue("redis_url"), clock=clock,
                        options=RedisPoolOptions(key_prefix=request.getfixturevalue("redis_prefix")))
    yield be, clock
    assert not be.degraded, "the test ran against the local fallback, not Redis"
    be.close()


class ReplyLost(redis.Connection):
    """A connection whose next reply to one of the scripts named in ``lose`` is read and then
    lost, as when the link drops after Redis ran the script: redis-py reconnects and runs the
    script again (its one retry)."""

    lose: ClassVar[dict[str, int]] = {}

    def send_command(self, *args: object, **kwargs: object) -> None:
        super().send_command(*args, **kwargs)    # a reconnect's handshake goes first
        self._losing = (len(args) > 1 and str(args[0]).upper() == "EVALSHA"
                        and self.lose.get(str(args[1]), 0) > 0)

    def read_response(self, *args: object, **kwargs: object) -> object:
        reply = super().read_response(*args, **kwargs)
        if getattr(self, "_losing", False):
            self._losing = False
            name = next(iter(k for k, v in self.lose.items() if v > 0))
            self.lose[name] -= 1
            raise redis.exceptions.TimeoutError("reply lost")
        return reply


@pytest.fixture
def lossy(redis_url: str, redis_prefix: str) -> Iterator[RedisPoolState]:
    """A Redis backend whose connections lose the replies :class:`ReplyLost` is told to."""
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    client = redis.Redis.from_url(redis_url, decode_responses=True, retry=Retry(NoBackoff(), 1),
                                  retry_on_error=[redis.exceptions.ConnectionError,
                                                  redis.exceptions.TimeoutError])
    client.connection_pool.connection_class = ReplyLost
    ReplyLost.lose = {}
    be = RedisPoolState(client=client, options=RedisPoolOptions(key_prefix=redis_prefix,
                                                                   reconnect_interval_s=0.0),
                        clock=FakeClock(1_700_000_000.25))
    yield be
    be.close()



@pytest.fixture
def head_asleep() -> Iterator[Callable[[SlotWaiters, str], None]]:
    """``put(waiters, provider)``: a thread becomes the head of ``provider``'s queue and sleeps
    there until the test ends."""
    asleep, wake = threading.Event(), threading.Event()
    heads: list[threading.Thread] = []

    def sleep(seconds: float) -> None:
        asleep.set()
        wake.wait(60)

    def put(waiters: SlotWaiters, provider: str) -> None:
        asleep.clear()
        heads.append(threading.Thread(target=waiters.wait, args=(provider, 3600.0, 3600.0, sleep)))
        heads[-1].start()
        assert asleep.wait(60)

    yield put
    wake.set()
    for head in heads:
        head.join(60)


@pytest.fixture
def rds(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


class Mono:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def logged_messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "hermes_core.agent.pool.redis"]


def born_a_ttl_ago(client: redis.Redis, prefix: str, workers: int,
                    redis_clock: FakeClock | None = None) -> FakeClock:
    """A Redis clock (``TIME`` replaced) a TTL after the fleet's slots were born: a worker since
    gone claimed one first. Whoever claims now takes its slot's share at once: no worker that
    has not heard of a restart can still believe it (see WorkerSlot.serving)."""
    redis_clock = redis_clock or FakeClock(5000.0)
    founder = WorkerSlot(client, prefix, workers, ttl_s=60.0, monotonic=FakeClock(0.0),
                         clock=redis_clock)
    founder.claim()
    founder.release()
    redis_clock.t += 60.0
    return redis_clock
