"""The scripts a worker runs around a Redis outage: ``MERGE`` hands back what it did and
learned while Redis was away, ``CLAIM`` holds the slot that sets its share while Redis is away.

Why apart from the acquire and release: they run once per outage or slot renewal, not per request,
and follow their own rules (only ever stricter); the shared helpers are :data:`.redis_lua.COMMON`.
"""

from __future__ import annotations

from hermes_core.agent.pool.redis_lua import COMMON

# Replays what a worker did and learned while Redis was away, once it is back: the requests it
# sent (so the fleet's window is not reset to empty by a restart), a 429 deadline, a removal,
# the key's and the provider's breaker states (breaker.breaker_merge: the more cautious wins),
# the key's auth strikes (quarantine.merge_standing: the most win).
# KEYS: key state, key window, provider hash.
# ARGV: now, seconds still blocked (<= 0: none), removed '1'/'0', state_ttl_s, window_s, a unique
#       id, key breaker mode ('' none), failures, seconds since it opened, the same three for the
#       provider breaker, auth strikes, then pairs (age in seconds, tokens) of the requests sent
#       locally.
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
for j = 14, #ARGV - 1, 2 do
  local age = tonumber(ARGV[j])
  if age < window then
    redis.call('ZADD', KEYS[2], fmt(now - age), ARGV[6] .. '-' .. tostring(j) .. ':' .. ARGV[j + 1])
    added = added + 1
  end
end
if added > 0 then redis.call('PEXPIRE', KEYS[2], ms(window)) end
return fmt(bu2)
"""

# A worker's slot: its index among the ``workers`` processes sharing the keys, which sets its
# share of each key while Redis is away (redis.worker_share). The slot keys share one hash tag.
# KEYS: the slot keys, index 0 first.  ARGV: the worker's random id, ttl in ms, the index it
# held before (-1: none).
# Returns the index now held (its ttl renewed), or -1 when every slot is held by another worker.
# The index held before is taken back first: a Redis that restarted empty gives each worker
# its own again.
CLAIM = r"""
local id = ARGV[1]
local ttl = tonumber(ARGV[2])
local before = tonumber(ARGV[3])
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == id then
    redis.call('PEXPIRE', KEYS[i], ttl)
    return i - 1
  end
end
if before >= 0 and before < #KEYS and redis.call('SET', KEYS[before + 1], id, 'NX', 'PX', ttl) then
  return before
end
for i = 1, #KEYS do
  if redis.call('SET', KEYS[i], id, 'NX', 'PX', ttl) then return i - 1 end
end
return -1
"""
