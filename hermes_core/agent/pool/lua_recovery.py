"""The script a worker runs once Redis is back after an outage (or lost the pool state): ``MERGE``
hands back what the worker did and learned meanwhile (:func:`merge_args` builds its arguments).

Why apart from the acquire and release: it runs once per outage, not per request, and follows its
own rules (only ever stricter); the shared helpers are :data:`.redis_lua.COMMON`. The slot that
sets a worker's share while Redis is away is claimed by :mod:`.worker_slot`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.quarantine import Standing
from hermes_core.agent.pool.redis_lua import COMMON

# Replays what a worker did and learned while Redis was away, once it is back: the requests it
# sent (so the fleet's window is not reset to empty by a restart), a 429 deadline, a removal,
# the key's and the provider's breaker states (breaker.breaker_merge: the more cautious wins),
# the key's auth strikes (quarantine.merge_standing: the most win).
# KEYS: key state, key window, provider hash.
# ARGV: now, seconds still blocked (<= 0: none), removed '1'/'0', state_ttl_s, window_s, a unique
#       id, key breaker mode ('' none), failures, seconds since it opened, the same three for the
#       provider breaker, auth strikes, then triples (age in seconds, tokens, name or '') of the
#       requests sent: one sent under a Redis lease goes back under its lease's member, so its
#       release (which moves that member to its end) counts it once, not once more; one that
#       ended meanwhile moves that member to its end (a Redis that kept it), and an 'r:'-marked
#       (refused) one replaces its unmarked twin.
MERGE = COMMON + r"""
local now = clock(ARGV[1])
local remaining = tonumber(ARGV[2])
local state_ttl = tonumber(ARGV[4])
local window = tonumber(ARGV[5])
local caution = {closed = 0, half_open = 1, open = 2}

-- breaker.breaker_merge of a stored breaker and a worker's view, written back when it differs
local function merge_breaker(key, mode, failures, age)
  if mode == '' then return end
  local s = redis.call('HMGET', key, 'bm', 'bf', 'bo')
  local bm, bf, bo = read_breaker(s[1], s[2], s[3])
  local lf, lo = tonumber(failures), now - tonumber(age)
  local m2, f2, o2 = bm, bf, bo
  if caution[mode] > caution[bm] then
    m2, f2, o2 = mode, lf, lo
  elseif caution[mode] == caution[bm] then
    f2, o2 = math.max(bf, lf), math.max(bo, lo)
  end
  if m2 ~= bm or f2 ~= bf or o2 ~= bo then write_breaker(key, m2, f2, o2, ms(state_ttl)) end
end

local s = redis.call('HMGET', KEYS[1], 'rm', 'bu', 'as')
local bu = tonumber(s[2]) or 0
local bu2 = bu
if remaining > 0 then bu2 = math.max(bu, now + remaining) end
local changed = false
if bu2 ~= bu then
  redis.call('HSET', KEYS[1], 'bu', fmt(bu2))
  changed = true
end
if ARGV[3] == '1' and s[1] ~= '1' then
  redis.call('HSET', KEYS[1], 'rm', '1')
  changed = true
end
local strikes = tonumber(ARGV[13]) or 0
if strikes > (tonumber(s[3]) or 0) then
  redis.call('HSET', KEYS[1], 'as', tostring(strikes))
  changed = true
end
if changed then redis.call('PEXPIRE', KEYS[1], ms(math.max(state_ttl, bu2 - now))) end
merge_breaker(KEYS[1], ARGV[7], ARGV[8], ARGV[9])
merge_breaker(KEYS[3], ARGV[10], ARGV[11], ARGV[12])
local added = 0
for j = 14, #ARGV - 2, 3 do
  local age = tonumber(ARGV[j])
  if age < window then
    local name = ARGV[j + 2]
    if name == '' then name = ARGV[6] .. '-' .. tostring(j) end
    local member = name .. ':' .. ARGV[j + 1]
    -- a refused one takes the place of its entry as sent (RELEASE marks it so): counted once
    if string.sub(member, 1, 2) == 'r:' then redis.call('ZREM', KEYS[2], string.sub(member, 3)) end
    redis.call('ZADD', KEYS[2], fmt(now - age), member)
    added = added + 1
  end
end
if added > 0 then redis.call('PEXPIRE', KEYS[2], ms(window)) end
return fmt(bu2)
"""


# Hands back a worker's leases still open on a key to a Redis that lost them (restarted empty):
# a request in flight across the restart holds its place in flight, as ACQUIRE's lease did,
# until its release ends it (or the lease expires). A lease Redis holds already is left alone.
# KEYS: the key's leases. ARGV: now, then pairs (lease id, seconds left).
HOLD = COMMON + r"""
local now = clock(ARGV[1])
local last = now
for j = 2, #ARGV - 1, 2 do
  local till = now + tonumber(ARGV[j + 1])
  redis.call('ZADD', KEYS[1], 'NX', fmt(till), ARGV[j])
  last = math.max(last, till)
end
if last > now and redis.call('PTTL', KEYS[1]) < ms(last - now) then
  redis.call('PEXPIRE', KEYS[1], ms(last - now))
end
return 1
"""


#: A request sent, as a worker hands it back to Redis: its local send time (its end once its
#: release moved its window entry there, through Redis or while Redis was away), tokens, the
#: window it counts in (s), and its name: the Redis lease it was sent under, or for one the
#: local fallback sent its local lease under the worker's id; ``r:``-marked once refused as
#: RELEASE marks its entry ('': MERGE names it).
Sent = tuple[float, int, float, str]


def _breaker_args(b: BreakerState | None, local_now: float) -> list[Any]:
    if b is None or b.mode == "closed":
        return ["", 0, 0.0]
    return [b.mode, b.failures, local_now - b.opened_at]


def merge_args(now_arg: float, local_now: float, learned: tuple[float, bool], standing: Standing,
               provider_breaker: BreakerState | None, sent: Sequence[Sent],
               state_ttl_s: float, unique: str) -> list[Any]:
    """MERGE's ARGV for one key, from local times (``local_now`` the local clock's now): its
    deadline and removal as ``learned``, its ``standing``, the provider's breaker, the requests
    ``sent`` (:data:`Sent`; those out of their window dropped). Times go as ages, so the script
    puts them on Redis's clock."""
    until, removed = learned
    uses = [u for u in sent if u[0] > local_now - u[2]]
    window = max((u[2] for u in uses), default=0.0)
    pairs: list[Any] = []
    for t, tok, _, lease in uses:
        pairs += [local_now - t, tok, lease]
    return [now_arg, until - local_now, "1" if removed or standing.removed else "0", state_ttl_s,
            window, unique, *_breaker_args(standing.breaker, local_now),
            *_breaker_args(provider_breaker, local_now), standing.strikes, *pairs]
