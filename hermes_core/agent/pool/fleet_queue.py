"""Processes sharing one Redis pool take turns in the order they started waiting.

Why: waiters inside one process queue first come, first served (:mod:`.waiters`), but across
processes whoever asked Redis first after a slot freed took it: in a storm of 8 processes on 3
rate-limited keys one process got 17 grants and another 36 of 185. Here each process that a
refusal sent waiting takes a place (a *ticket*, its random worker id; never a key) in a sorted set
per provider, scored by arrival (a counter, so ties cannot happen):

* while others hold places, a process is let through to the pool only when its place is the
  first; the others are refused at once, told to ask again when the first said it would, or in
  ``poll_s``;
* a process served leaves the queue, and goes to the back if it asks again: each waiting process
  gets a turn before any gets a second;
* a process none of whose requests waits any more (they failed over, timed out, were cancelled)
  leaves explicitly (:meth:`FleetQueue.leave`), so the next is served at once;
* a place expires ``grace_s`` after the time its holder said it would ask again (the pool's
  ``available_at``, or the next poll), so a waiter that was killed holds up the others for a
  bounded time; expired places are dropped before the queue answers;
* a Redis that restarted empty has no queue: everyone is let through, as before; a Redis that is
  unreachable makes the pool fall back to local state (:mod:`.redis`) without asking here.

The turn, the joining and the leaving after the pool's answer run inside the acquire script
(:data:`QUEUE` is its part, :mod:`.lua_acquire`), so an acquire stays one round trip, as the
pool's hot path must; only the explicit leave is a script of its own (:data:`LEAVE`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# KEYS of a provider's queue: the queue (ticket -> arrival), each ticket's expiry, the arrival
# counter. Functions the acquire script calls with them, its clock's ``now`` and the ticket.
QUEUE = r"""
local function queue_leave(q, x, ticket)
  redis.call('ZREM', q, ticket)
  redis.call('ZREM', x, ticket)
end

-- hold the ticket's place (joining at the back when it holds none) until ``back`` + grace
local function queue_hold(q, x, n, ticket, now, back, grace)
  if not redis.call('ZRANK', q, ticket) then redis.call('ZADD', q, redis.call('INCR', n), ticket) end
  local expiry = math.max(back, now) + grace
  local held = tonumber(redis.call('ZSCORE', x, ticket) or '0')
  redis.call('ZADD', x, math.max(held, expiry), ticket)
  local ttl = math.ceil((expiry - now + 60) * 1000)
  for _, k in ipairs({q, x, n}) do
    if redis.call('PTTL', k) < ttl then redis.call('PEXPIRE', k, ttl) end
  end
end

-- nil when the ticket may ask the pool (first in line, or nobody waits); else, holding its
-- place, when to ask again: when the first in line said it would, or at the next poll
local function queue_turn(q, x, n, ticket, now, grace, poll)
  for _, t in ipairs(redis.call('ZRANGEBYSCORE', x, '-inf', now)) do queue_leave(q, x, t) end
  local rank = redis.call('ZRANK', q, ticket)
  if rank == 0 or redis.call('ZCARD', q) == 0 then return nil end
  if not rank then redis.call('ZADD', q, redis.call('INCR', n), ticket) end
  local first = redis.call('ZRANGE', q, 0, 0)[1]
  local back = math.max(tonumber(redis.call('ZSCORE', x, first) or '0') - grace, now + poll)
  queue_hold(q, x, n, ticket, now, back, grace)
  return back
end
"""

# KEYS: the queue, the expiries.  ARGV: the ticket.
LEAVE = QUEUE + r"""
queue_leave(KEYS[1], KEYS[2], ARGV[1])
return 1
"""


class FleetQueue:
    """One process's ticket in each provider's queue (see the module docstring). ``ticket`` is
    read at each use: a forked child draws an id of its own (:mod:`.worker_slot`), and a place
    shared with its parent or siblings let them all in as one."""

    def __init__(self, client: Any, key_prefix: str, ticket: Callable[[], str], *,
                 grace_s: float, poll_s: float) -> None:
        self._leave = client.register_script(LEAVE)
        self._prefix = key_prefix
        self._ticket = ticket
        self.grace_s = grace_s
        self.poll_s = poll_s

    def keys(self, provider: str) -> list[str]:
        """The provider's queue keys, as the acquire script takes them (its hash tag)."""
        base = f"{self._prefix}:{{{provider}}}"
        return [f"{base}:q", f"{base}:qx", f"{base}:qn"]

    def args(self) -> list[Any]:
        """What the acquire script needs to take a turn: the ticket, the grace, the poll."""
        return [self._ticket(), self.grace_s, self.poll_s]

    def leave(self, provider: str) -> None:
        """Give this process's place in ``provider``'s queue up: none of its requests waits any
        more (the next in line is served at once, not when the place expires). Redis errors
        reach the caller (its fallback)."""
        self._leave(keys=self.keys(provider)[:2], args=[self._ticket()])
