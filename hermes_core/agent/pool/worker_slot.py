"""This worker's slot among the fleet: the index, held in Redis, that sets its share of each key
while Redis is away (:func:`.fallback.worker_share`).

Why apart from the backend (:mod:`.redis`, which uses it): the slot has rules of its own. It is
claimed under a random id and renewed by acquires (and by releases and status reads: the
backend's heartbeat) a third of its TTL apart; it lapses locally when the TTL has passed since
the last renewal, whatever Redis still holds, or when a due renewal gets no answer, so a worker
that went idle (or lost Redis) never keeps a larger share than the floor on a claim another may
have taken since. A Redis that restarted empty lost every slot: the acquire, release or status
read that finds the pool state lost (a new epoch) claims again at once, the index held before
first, so each worker gets its own back, and holds none meanwhile. A worker that asks nothing
between such a restart and Redis going away cannot hear of it, so a slot taken within a TTL of
the slots' birth gives the floor share until then (:meth:`WorkerSlot.serving`). A closed
backend gives its slot back (:meth:`WorkerSlot.release`). A process forked from one that built
the slot (a server that loads its app, pool included, before forking its workers) is a worker of
its own: it draws a new id and holds no slot until it claims one (:mod:`hermes_core.forked`);
with the parent's id every child found "its" slot held and took the same index, each with the
larger share. The decisions (:meth:`WorkerSlot.due`, :meth:`WorkerSlot.held`,
:meth:`WorkerSlot.share`) run on an injectable monotonic clock; the claim is one script
(:data:`CLAIM`), the thin Redis part.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from hermes_core.agent.pool.fallback import worker_share
from hermes_core.agent.pool.state import KeySpec, PoolPolicy
from hermes_core.forked import renew_in_child

# A worker's slot: its index among the ``workers`` processes sharing the keys, which sets its
# share of each key while Redis is away (fallback.worker_share). The slot keys share one hash tag.
# KEYS: the slot keys, index 0 first, then the slots' birth (slot_born_key).  ARGV: the worker's
# random id, ttl in ms, the index it held before (-1: none), now in seconds (negative: TIME).
# Returns {the index now held (its ttl renewed), or -1 when every slot is held by another worker;
# how long ago in ms the slots were born: first claimed since Redis started, or since every claim
# lapsed}. The index held before is taken back first: a Redis that restarted empty gives each
# worker its own again. The birth names the server run (INFO's run_id), so a Redis restarted
# from an older snapshot is a new birth too.
CLAIM = r"""
local id = ARGV[1]
local ttl = tonumber(ARGV[2])
local before = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if now == nil or now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = math.floor(now * 1000)
end
local info = redis.pcall('INFO', 'server')
local run = ''
if type(info) == 'string' then run = string.match(info, 'run_id:(%x+)') or '' end
local born_key = KEYS[#KEYS]
local born = nil
local stored = redis.call('GET', born_key)
if stored then
  local t, r = string.match(stored, '^(%d+)@(%x*)$')
  if t and r == run and tonumber(t) <= now then born = tonumber(t) end
end
if born == nil then
  born = now
  redis.call('SET', born_key, string.format('%.0f', now) .. '@' .. run)
end
redis.call('PEXPIRE', born_key, ttl)
local age = now - born
local n = #KEYS - 1
for i = 1, n do
  if redis.call('GET', KEYS[i]) == id then
    redis.call('PEXPIRE', KEYS[i], ttl)
    return {i - 1, age}
  end
end
if before >= 0 and before < n and redis.call('SET', KEYS[before + 1], id, 'NX', 'PX', ttl) then
  return {before, age}
end
for i = 1, n do
  if redis.call('SET', KEYS[i], id, 'NX', 'PX', ttl) then return {i - 1, age} end
end
return {-1, age}
"""

# Gives a worker's slot back. KEYS: the slot keys. ARGV: the worker's random id.
# Returns how many were its own (a slot another worker claimed since is left alone).
RELEASE = r"""
local n = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then n = n + redis.call('DEL', KEYS[i]) end
end
return n
"""


def slot_keys(key_prefix: str, workers: int) -> list[str]:
    """The slot keys :data:`CLAIM` takes, index 0 first (one hash tag: one cluster slot)."""
    base = f"{key_prefix}:{{workers}}:slot"
    return [f"{base}:{i}" for i in range(workers)]


def slot_born_key(key_prefix: str) -> str:
    """Where :data:`CLAIM` keeps when the slots were born (the slot keys' hash tag)."""
    return f"{key_prefix}:{{workers}}:born"


class WorkerSlot:
    """One process's slot (see the module docstring). ``worker_id`` is the random id the claim
    is held under; it also names the process elsewhere (its place in the fleet's queue)."""

    def __init__(self, client: Any, key_prefix: str, workers: int, *, ttl_s: float,
                 monotonic: Callable[[], float], clock: Callable[[], float] | None = None) -> None:
        self._claim = client.register_script(CLAIM)
        self._release = client.register_script(RELEASE)
        self._keys = slot_keys(key_prefix, workers)
        self._born = slot_born_key(key_prefix)
        self._clock = clock   # tests only: replaces Redis TIME in the claim, as in every script
        self.workers = workers
        self.ttl_s = ttl_s
        self._monotonic = monotonic
        self.renew_after_fork()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """No claim yet, under an id of this process's own (again in a forked child: the
        parent's id, claim and lock are the parent's)."""
        self._lock = threading.Lock()
        self.worker_id = os.urandom(8).hex()
        self.index: int | None = None  # as Redis last answered: None until claimed, or none free
        self._renew_at = 0.0           # monotonic: when the next acquire renews the claim
        self._valid_until = 0.0        # monotonic: the claim's expiry as of its last renewal
        self._era = 0                  # bumped when the slot is lost or given back (claim)
        self._floor_until = 0.0        # monotonic: until when the slot held gives the floor share

    def due(self) -> bool:
        """Whether the next acquire claims (or renews) first: only a fleet has slots."""
        return self.workers > 1 and self._monotonic() >= self._renew_at

    def held(self) -> int | None:
        """The index this worker holds, unless its claim has lapsed since the last renewal."""
        return self.index if self._monotonic() < self._valid_until else None

    def serving(self) -> int | None:
        """The slot whose share this worker takes while Redis is away: the one :meth:`held`,
        unless it was claimed (or renewed) within a TTL of the slots' birth. A Redis that
        restarted empty lost every claim, and a worker that asked nothing since cannot know: it
        still believes its index until its claim lapses here, a TTL after its last renewal at
        most, which was before the restart. Whoever took that index meanwhile gives the floor
        share until then; two serving one slot's larger share sent one over the key's limit.
        Any claim, as none can tell a restart from a fleet's start; an index taken back too, as
        after two restarts within a TTL (or a claim that had lapsed) another may have held it in
        between, and may still believe it; a renewal too, as a Redis restored from an older
        snapshot gives back claims from before another took their index. (A claim made since
        the birth has the floor share until then already: renewing it changes nothing.)"""
        if self._monotonic() < self._floor_until:
            return None
        return self.held()

    def share(self, limit: int) -> int:
        """:func:`.fallback.worker_share` of ``limit`` by the slot this worker is
        :meth:`serving`."""
        return worker_share(limit, self.workers, self.serving())

    def local_keys(self, keys: Sequence[KeySpec]) -> list[KeySpec]:
        """Each key with this worker's share of its budget: what it may send while it cannot
        coordinate through Redis."""
        if self.workers == 1:
            return list(keys)
        share = self.share
        return [replace(k, max_rpm=None if k.max_rpm is None else share(k.max_rpm),
                        max_tpm=None if k.max_tpm is None else share(k.max_tpm))
                for k in keys]

    def local_policy(self, policy: PoolPolicy) -> PoolPolicy:
        """``policy`` with this worker's share of ``max_in_flight``, split like the rate limit
        (:func:`.fallback.worker_share`): each fallback applied the whole cap on its own, and a
        fleet of N workers had N times it in flight on one key while Redis was away. At least 1
        here too: a slot lapses locally during a long outage (every worker then takes the
        floor), and a share of 0 would shut the key for the whole fleet until Redis returns; a
        cap below the workers is passed by at most one request per worker, by design."""
        if self.workers == 1 or policy.max_in_flight is None:
            return policy
        return replace(policy, max_in_flight=self.share(policy.max_in_flight))

    def lost(self) -> None:
        """Redis lost the slots (it restarted empty): claim again (the backend does at once).
        Until then no slot is held here either: the index believed may be another worker's
        by now (one started since took the first free), and two workers serving one slot's
        larger share while Redis is away send one request over the key's limit."""
        with self._lock:
            self._renew_at = self._valid_until = 0.0
            self._era += 1

    def release(self, *, remote: bool = True) -> None:
        """Give the slot back (the backend is closed): free at once for the worker that replaces
        this one, which otherwise takes the floor share until the claim's TTL. Held no more here
        either; a later acquire claims anew. ``remote=False`` (Redis is away): only here, the
        claim lapses there. Redis errors reach the caller."""
        with self._lock:
            self._renew_at = self._valid_until = 0.0
            self.index = None
            self._era += 1
        if remote and self.workers > 1:
            self._release(keys=self._keys, args=[self.worker_id])

    def claim(self) -> None:
        """Claim (or renew) the slot in Redis: the index held before first. No slot free: the
        floor share. Redis errors reach the caller (its fallback). A reply that comes back after
        the slot was given back or lost meanwhile (:meth:`release` by ``close()`` in another
        thread) is not believed: Redis may have deleted the claim after it ran, and the worker
        replacing this one taken the index; the next acquire claims again. A claim that does
        not answer leaves none held here: the slot was last confirmed a third of its TTL ago or
        more, Redis may have restarted empty since and another worker taken the index, and two
        workers serving one slot's larger share while Redis is away send one over the limit."""
        with self._lock:
            now, era, before = self._monotonic(), self._era, self.index
        try:
            reply = self._claim(keys=[*self._keys, self._born],
                                args=[self.worker_id, max(1, int(self.ttl_s * 1000)),
                                      -1 if before is None else before,
                                      -1.0 if self._clock is None else self._clock()])
            got, age_s = int(reply[0]), int(reply[1]) / 1000
        except BaseException:
            with self._lock:
                if era == self._era:
                    self._valid_until = 0.0
            raise
        with self._lock:
            if era != self._era:
                return
            if got >= 0 and age_s < self.ttl_s:   # see serving()
                self._floor_until = max(self._floor_until,
                                        self._monotonic() + self.ttl_s - age_s)
            self.index = got if got >= 0 else None
            self._valid_until = now + self.ttl_s
            self._renew_at = now + self.ttl_s / 3
