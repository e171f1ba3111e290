"""Processes sharing one Redis pool take turns in the order they started waiting.

Why: waiters inside one process queue first come, first served (:mod:`.waiters`), but across
processes whoever asked Redis first after a slot freed took it: in a storm of 8 processes on 3
rate-limited keys one process got 17 grants and another 36 of 185. Here each process that a
refusal sent waiting takes a place (a *ticket*, its random worker id; never a key) in a sorted set
per provider, scored by arrival (a counter, so ties cannot happen):

* while others hold places, a process is let through to the pool only when its place is the
  first; the others are refused at once, told to ask again in ``poll_s``;
* a process served while it held a place leaves the queue, and goes to the back if it asks again:
  each waiting process gets a turn before any gets a second;
* a place expires ``grace_s`` after the time its holder said it would ask again (the pool's
  ``available_at``, or the next poll), so a waiter that died, or stopped waiting, holds up the others
  for a bounded time; the script drops expired places before it answers;
* a Redis that restarted empty has no queue: everyone is let through, as before; a Redis that is
  unreachable makes the pool fall back to local state (:mod:`.redis`) without asking here.

One script, three modes (``turn``, ``join``, ``leave``), each one round trip, atomic, on Redis's
clock (or the tests' injected one, as the pool's scripts).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from hermes_core.agent.pool.redis_lua import COMMON
from hermes_core.agent.pool.state import AcquireResult

# KEYS: the queue (ticket -> arrival), each ticket's expiry, the arrival counter.
# ARGV: now override, ticket, mode, back-by (Redis time; join), grace_s, poll_s.
# Answers {go, now[, back]}: go "1" when the caller may ask the pool; refused, when the first in
# line said it would ask again.
FLEET = COMMON + r"""
local now = clock(ARGV[1])
local ticket, mode, grace = ARGV[2], ARGV[3], tonumber(ARGV[5])
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, t in ipairs(gone) do
  redis.call('ZREM', KEYS[1], t)
  redis.call('ZREM', KEYS[2], t)
end
if mode == 'leave' then
  redis.call('ZREM', KEYS[1], ticket)
  redis.call('ZREM', KEYS[2], ticket)
  return {'1', tostring(now)}
end
local rank = redis.call('ZRANK', KEYS[1], ticket)
if mode == 'turn' and (rank == 0 or redis.call('ZCARD', KEYS[1]) == 0) then
  return {'1', tostring(now)}
end
if not rank then
  redis.call('ZADD', KEYS[1], redis.call('INCR', KEYS[3]), ticket)
end
local back = tonumber(ARGV[4])
if mode == 'turn' then   -- behind others: back when the first in line is, or at the next poll
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  back = math.max(tonumber(redis.call('ZSCORE', KEYS[2], first) or '0') - grace,
                  now + tonumber(ARGV[6]))
end
local expiry = math.max(back, now) + grace
local held = tonumber(redis.call('ZSCORE', KEYS[2], ticket) or '0')
redis.call('ZADD', KEYS[2], math.max(held, expiry), ticket)
local ttl = math.ceil((expiry - now + 60) * 1000)
for i = 1, 3 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return {mode == 'join' and '1' or '0', tostring(now), tostring(back)}
"""


class FleetQueue:
    """One process's place in each provider's queue (see the module docstring)."""

    def __init__(self, client: Any, key_prefix: str, ticket: str, *, grace_s: float,
                 poll_s: float) -> None:
        self._script = client.register_script(FLEET)
        self._prefix = key_prefix
        self._ticket = ticket
        self.grace_s = grace_s
        self.poll_s = poll_s
        self._lock = threading.Lock()
        self._queued: set[str] = set()   # providers where this process may hold a place

    def _run(self, provider: str, mode: str, now_arg: float, back_by: float = 0.0) -> tuple[
            bool, float, float]:
        base = f"{self._prefix}:{{{provider}}}"
        go, now, *back = self._script(keys=[f"{base}:q", f"{base}:qx", f"{base}:qn"],
                                      args=[now_arg, self._ticket, mode, back_by, self.grace_s,
                                            self.poll_s])
        return str(go) == "1", float(now), float(back[0]) if back else 0.0

    def around(self, provider: str, now_arg: float,
               acquire: Callable[[], AcquireResult]) -> AcquireResult:
        """``acquire`` when it is this process's turn; otherwise a refusal that asks again when
        the first in line said it would (no key frees for anyone before), or in ``poll_s``. A
        refusal by the pool queues this process (until the pool's ``available_at`` plus the
        grace); a grant gives its place up. Redis errors reach the caller (its fallback)."""
        go, now, back = self._run(provider, "turn", now_arg)
        with self._lock:
            if not go:
                self._queued.add(provider)
                return AcquireResult(None, back, False, now, "")
        res = acquire()
        if res.fingerprint is not None or res.available_at is None:
            with self._lock:
                held = provider in self._queued
                self._queued.discard(provider)
            if held:      # served, or no key can ever serve: nothing to wait for
                self._run(provider, "leave", now_arg)
            return res
        self._run(provider, "join", now_arg, res.available_at)
        with self._lock:
            self._queued.add(provider)
        return res

    def leave(self, provider: str, now_arg: float) -> None:
        """Give this process's place in ``provider``'s queue up: none of its requests waits any
        more (the next in line is served at once, not when the place expires)."""
        with self._lock:
            self._queued.discard(provider)
        self._run(provider, "leave", now_arg)
