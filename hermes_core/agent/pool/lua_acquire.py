"""The acquire script of the Redis pool: the port of ``state.acquire`` (which key serves next).

Why its own module: the acquire is the pool's hot path and its longest script; the helpers it
shares with the other scripts (the clock, the breaker, pacing) are :data:`.redis_lua.COMMON`, the
key layout is described there. :func:`acquire_args` builds its ARGV.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.agent.pool.fleet_queue import QUEUE
from hermes_core.agent.pool.redis_lua import COMMON
from hermes_core.agent.pool.state import KeySpec, PoolPolicy

# KEYS: provider hash, rr hash, epoch, then per key (state, window, leases), then (with the
#       fleet's queue on) the provider's queue keys (fleet_queue.FleetQueue.keys).
# ARGV: now, strategy, window_s, cooldown_s, tokens, rand, lease, lease_ttl_s, state_ttl_s, n,
#       burst, max_in_flight or 0, the caller's epoch, a new epoch, learn limits '1'/'0',
#       workers sharing the keys,
#       then per key (fingerprint, weight, max_rpm or 0, max_tpm or 0, the caller's known
#       blocked-until, the caller's known removal '1'/'0', the caller's known learned limit or 0),
#       then the process's ticket in the fleet's queue ('' or absent: the queue is off), its
#       grace_s and poll_s.
# Returns {fingerprint or '', available_at or '', probe '1'/'0', now, 'resync' or '', epoch,
#          then per key blocked_until, removed, learned limit or '', this worker's share of the
#          key's window: "<requests in it>|<limit or 0>|<time>:<tokens>,..." (the newest), its
#          auth strikes, its breaker "<mode>|<failures>|<opened at>" (after this acquire),
#          then the earliest recheck of a key quarantined after an auth rejection or ''}.
# The epoch names this incarnation of the pool state: a caller that knows another one (Redis
# restarted, empty or from an older snapshot (redis_lua.epoch_of), or the caller is new) gets
# 'resync' and nothing else, merges what it knows (MERGE) and asks again. The callers' known
# deadlines and removals are floors: a restarted Redis
# gets them back with the very next acquire, before it decides anything.
# While other processes hold places in the fleet's queue, only the first asks the pool; any other
# is refused (available_at: when to ask again, and each key as the fleet holds it, unweighed, as
# a refusal by the provider's open breaker is) and holds its place; after the pool's answer a
# refusal holds the place until its available_at (plus the grace), a grant or a refusal for good
# gives it up (fleet_queue).
ACQUIRE = COMMON + QUEUE + r"""
local now = clock(ARGV[1])
local strategy = ARGV[2]
local window = tonumber(ARGV[3])
local cooldown = tonumber(ARGV[4])
local need = tonumber(ARGV[5])
local rand = tonumber(ARGV[6])
local lease = ARGV[7]
local lease_ttl = tonumber(ARGV[8])
local state_ttl = tonumber(ARGV[9])
local n = tonumber(ARGV[10])
local burst = tonumber(ARGV[11])
local max_in_flight = tonumber(ARGV[12])
local learn = ARGV[15] == '1'
local workers = math.max(1, tonumber(ARGV[16]) or 1)

local epoch = epoch_of(KEYS[3], ARGV[14], ms(state_ttl))
if epoch ~= ARGV[13] then
  return {'', '', '0', fmt(now), 'resync', epoch}
end
-- this very acquire run again (redis-py sends it once more when the link dropped before the
-- reply): the first run's hold is dropped, or the key it took stayed in flight with nobody to
-- release it until the lease expired, and counted a request never sent
for i = 1, n do
  local b = 3 + (i - 1) * 3
  if redis.call('ZREM', KEYS[b + 3], lease) == 1 then
    redis.call('ZREM', KEYS[b + 2], lease .. ':' .. tostring(math.max(0, need)))
  end
end
local seen = {}

-- the fleet's queue: the caller's turn first, its place after the pool's answer (settle)
local qk, qa = 3 + 3 * n, 16 + 7 * n
local ticket = ARGV[qa + 1] or ''
local grace, poll = tonumber(ARGV[qa + 2]), tonumber(ARGV[qa + 3])
local function settle(avail)
  if ticket == '' then return end
  if avail ~= nil then
    queue_hold(KEYS[qk + 1], KEYS[qk + 2], KEYS[qk + 3], ticket, now, avail, grace)
  else
    queue_leave(KEYS[qk + 1], KEYS[qk + 2], ticket)
  end
end
-- the key's window for this worker's share of it (fallback.share): how many requests, the
-- key's limit (0: unknown) and the times and tokens of the newest (at most 64). The local
-- fallback starts from that share, so a worker that sent few of them does not spend a share
-- of requests or tokens on top.
local function window_text(wkey, rpm, lr)
  redis.call('ZREMRANGEBYSCORE', wkey, '-inf', fmt(now - window))
  local count = redis.call('ZCARD', wkey)
  local times = {}
  if workers > 1 and count > 0 then
    local e = redis.call('ZRANGE', wkey, -math.min(count, 64), -1, 'WITHSCORES')
    for j = 2, #e, 2 do
      times[#times + 1] = e[j] .. ':' .. (string.match(e[j - 1], ':(%d+)$') or '0')
    end
  end
  local lim = rpm
  if lim <= 0 then lim = tonumber(lr) or 0 end
  return tostring(count) .. '|' .. tostring(lim) .. '|' .. table.concat(times, ',')
end

-- a refusal before the keys are weighed (the queue's, the provider breaker's), still telling
-- each key as the fleet holds it (its window above all): a worker turned away while others
-- fill the window would otherwise spend its share, once Redis is away, from the window as its
-- last grant showed it
local function unweighed(back)
  local out = {'', fmt(back), '0', fmt(now), '', epoch}
  for i = 1, n do
    local b = 3 + (i - 1) * 3
    local s = redis.call('HMGET', KEYS[b + 1], 'rm', 'bu', 'bm', 'bf', 'bo', 'lr', 'as')
    local m, f, o = read_breaker(s[3], s[4], s[5])
    out[#out + 1] = fmt(tonumber(s[2]) or 0)
    out[#out + 1] = s[1] == '1' and '1' or '0'
    out[#out + 1] = s[6] or ''
    out[#out + 1] = window_text(KEYS[b + 2], tonumber(ARGV[16 + (i - 1) * 7 + 3]), s[6])
    out[#out + 1] = s[7] or '0'
    out[#out + 1] = m .. '|' .. tostring(f) .. '|' .. fmt(o)
  end
  out[#out + 1] = ''
  return out
end

if ticket ~= '' then
  local back = queue_turn(KEYS[qk + 1], KEYS[qk + 2], KEYS[qk + 3], ticket, now, grace, poll)
  if back ~= nil then return unweighed(back) end
end

local p = redis.call('HMGET', KEYS[1], 'bm', 'bf', 'bo')
local pm, pf, po = read_breaker(p[1], p[2], p[3])
local pok, pprobe, pm2, pf2, po2, pretry = breaker_check(pm, pf, po, now, cooldown)
if not pok then
  settle(pretry)
  return unweighed(pretry)
end

local function tokens_free_at(wkey, limit)
  local e = redis.call('ZRANGE', wkey, 0, -1, 'WITHSCORES')
  if #e == 0 then return nil end
  local used = 0
  local items = {}
  for j = 1, #e, 2 do
    local tok = tonumber(string.match(e[j], ':(%d+)$')) or 0
    used = used + tok
    items[#items + 1] = {tonumber(e[j + 1]), tok}
  end
  if used + need <= limit then return nil end
  for _, it in ipairs(items) do
    used = used - it[2]
    if used + need <= limit then return it[1] + window end
  end
  return items[#items][1] + window
end

local eligible = {}
local earliest = nil
local recheck = nil   -- state.evaluate_key: a quarantined key is not waited for
for i = 1, n do
  local a = 16 + (i - 1) * 7
  local fp = ARGV[a + 1]
  local weight = tonumber(ARGV[a + 2])
  local rpm = tonumber(ARGV[a + 3])
  local tpm = tonumber(ARGV[a + 4])
  local floor_bu = tonumber(ARGV[a + 5]) or 0
  local b = 3 + (i - 1) * 3
  local skey, wkey, lkey = KEYS[b + 1], KEYS[b + 2], KEYS[b + 3]
  local s = redis.call('HMGET', skey, 'rm', 'bu', 'bm', 'bf', 'bo', 'lr', 'pt', 'an', 'ls', 'pv',
                       'ps', 'pb', 'as')
  if ARGV[a + 6] == '1' and s[1] ~= '1' then
    redis.call('HSET', skey, 'rm', '1')
    redis.call('PEXPIRE', skey, ms(state_ttl))
    s[1] = '1'
  end
  if floor_bu > (tonumber(s[2]) or 0) then
    redis.call('HSET', skey, 'bu', fmt(floor_bu))
    redis.call('PEXPIRE', skey, ms(math.max(state_ttl, floor_bu - now)))
    s[2] = fmt(floor_bu)
  end
  local floor_lr = tonumber(ARGV[a + 7]) or 0
  if floor_lr > 0 and not tonumber(s[6]) then
    -- a limit handed back after a restart is not probed upward before a window has passed
    redis.call('HSET', skey, 'lr', tostring(floor_lr), 'ps', fmt(now))
    redis.call('PEXPIRE', skey, ms(state_ttl))
    s[6] = tostring(floor_lr)
  end
  -- probe.probe_raise: a limit learned from 429s (not stated) that the key is at rises by one
  local lr0 = tonumber(s[6])
  if learn and rpm <= 0 and lr0 ~= nil and s[9] ~= '1' and s[1] ~= '1' then
    redis.call('ZREMRANGEBYSCORE', wkey, '-inf', fmt(now - window))
    if redis.call('ZCARD', wkey) >= lr0 then
      local quiet = now - (tonumber(s[11]) or 0)
      local pb = tonumber(s[12]) or PROBE_WINDOWS
      if (lr0 < (tonumber(s[10]) or 0) and quiet >= window) or quiet >= pb * window then
        s[6] = tostring(lr0 + 1)
        redis.call('HSET', skey, 'lr', s[6], 'ps', fmt(now), 'pr', '1')
        redis.call('PEXPIRE', skey, ms(state_ttl))
      end
    end
  end
  seen[#seen + 1] = fmt(tonumber(s[2]) or 0)
  seen[#seen + 1] = s[1] == '1' and '1' or '0'
  seen[#seen + 1] = s[6] or ''
  seen[#seen + 1] = window_text(wkey, rpm, s[6])
  -- the key's standing (quarantine.Standing): the local fallback starts from it
  seen[#seen + 1] = s[13] or '0'
  local sm, sf, so = read_breaker(s[3], s[4], s[5])
  seen[#seen + 1] = sm .. '|' .. tostring(sf) .. '|' .. fmt(so)
  local seen_breaker = #seen
  local limit = nil
  if rpm > 0 then limit = rpm elseif tonumber(s[6]) then limit = tonumber(s[6]) end
  local tat = tonumber(s[7]) or 0
  local free = nil
  if s[1] == '1' then
    -- removed for good: never eligible, never "frees"
    redis.call('PEXPIRE', skey, ms(state_ttl))
  else
    local bu = tonumber(s[2]) or 0
    if bu > now then
      free = bu
    else
      local bm, bf, bo = read_breaker(s[3], s[4], s[5])
      local ok, probe, bm2, bf2, bo2, retry = breaker_check(bm, bf, bo, now, cooldown)
      local busy = false
      -- state.in_flight_cap: a key of unknown limit starts with one in flight and gains one
      -- per round trip, 1 + isqrt(2 * successes), up to the cap
      local cap = max_in_flight
      if learn and limit == nil then
        local twice = 2 * (tonumber(s[8]) or 0)
        local root = math.floor(math.sqrt(twice))
        while root * root > twice do root = root - 1 end
        while (root + 1) * (root + 1) <= twice do root = root + 1 end
        local grown = 1 + root
        if cap <= 0 or grown < cap then cap = grown end
      end
      if ok and cap > 0 then
        redis.call('ZREMRANGEBYSCORE', lkey, '-inf', fmt(now))
        if redis.call('ZCARD', lkey) >= cap then
          busy = true
          if limit ~= nil then free = now + window / limit
          else free = now + math.min(1.0, window / 60.0) end
        end
      end
      if not ok and (tonumber(s[13]) or 0) > 0 then
        if recheck == nil or retry < recheck then recheck = retry end
      elseif not ok then
        free = retry
      elseif not busy then
        redis.call('ZREMRANGEBYSCORE', wkey, '-inf', fmt(now - window))
        local used = redis.call('ZCARD', wkey)
        local wait = nil
        if limit ~= nil and used >= limit then
          local e = redis.call('ZRANGE', wkey, used - limit, used - limit, 'WITHSCORES')
          wait = tonumber(e[2]) + window
        end
        local p = pace_free_at(tat, now, limit, window, burst)
        if p ~= nil and (wait == nil or p > wait) then wait = p end
        if tpm > 0 then
          local t = tokens_free_at(wkey, tpm)
          if t ~= nil and (wait == nil or t > wait) then wait = t end
        end
        if wait ~= nil then
          free = wait
        else
          eligible[#eligible + 1] = {fp = fp, weight = weight, used = used, probe = probe,
            bm = bm2, bf = bf2, bo = bo2, changed = (bm2 ~= bm or bf2 ~= bf or bo2 ~= bo),
            skey = skey, wkey = wkey, lkey = lkey, limit = limit, tat = tat, at = seen_breaker}
        end
      end
    end
  end
  if free ~= nil and (earliest == nil or free < earliest) then earliest = free end
end

local function answer(fp, avail, probe)
  local out = {fp, avail, probe, fmt(now), '', epoch}
  for _, v in ipairs(seen) do out[#out + 1] = v end
  if recheck ~= nil then out[#out + 1] = fmt(recheck) else out[#out + 1] = '' end
  return out
end

if #eligible == 0 then
  settle(earliest)
  if earliest == nil then return answer('', '', '0') end
  return answer('', fmt(earliest), '0')
end

-- state.choose_key
local best = 1
if strategy == 'round_robin' then
  local fps = {}
  for i, k in ipairs(eligible) do fps[i] = k.fp end
  local cur = redis.call('HMGET', KEYS[2], unpack(fps))
  local total = 0
  local state = {}
  for i, k in ipairs(eligible) do
    state[i] = (tonumber(cur[i]) or 0) + k.weight
    total = total + k.weight
    if state[i] > state[best] then best = i end
  end
  state[best] = state[best] - total
  local flat = {}
  for i, k in ipairs(eligible) do
    flat[#flat + 1] = k.fp
    flat[#flat + 1] = fmt(state[i])
  end
  redis.call('HSET', KEYS[2], unpack(flat))
  redis.call('PEXPIRE', KEYS[2], ms(state_ttl))
elseif strategy == 'least_loaded' then
  local best_load, best_use = nil, nil
  for i, k in ipairs(eligible) do
    redis.call('ZREMRANGEBYSCORE', k.lkey, '-inf', fmt(now))
    local load = redis.call('ZCARD', k.lkey)
    local use = k.used / k.weight
    if best_load == nil or load < best_load or (load == best_load and use < best_use) then
      best, best_load, best_use = i, load, use
    end
  end
elseif strategy == 'fill_first' then
  best = 1
elseif strategy == 'random' then
  local total = 0
  for _, k in ipairs(eligible) do total = total + k.weight end
  local point = math.min(math.max(rand, 0), 0.999999999) * total
  local acc = 0
  best = #eligible
  for i, k in ipairs(eligible) do
    acc = acc + k.weight
    if point < acc then best = i; break end
  end
else
  return redis.error_reply('unknown rotation strategy ' .. strategy)
end

local k = eligible[best]
recheck = nil   -- a key serves: nothing to say about quarantined ones (as state.acquire)
if k.changed then
  write_breaker(k.skey, k.bm, k.bf, k.bo, ms(state_ttl))
  seen[k.at] = k.bm .. '|' .. tostring(k.bf) .. '|' .. fmt(k.bo)
end
if k.limit ~= nil then
  redis.call('HSET', k.skey, 'pt', fmt(math.max(k.tat, now) + window / k.limit))
  redis.call('PEXPIRE', k.skey, ms(state_ttl))
end
if pm2 ~= pm or pf2 ~= pf or po2 ~= po then write_breaker(KEYS[1], pm2, pf2, po2, ms(state_ttl)) end
redis.call('ZADD', k.wkey, fmt(now), lease .. ':' .. tostring(math.max(0, need)))
redis.call('PEXPIRE', k.wkey, ms(window))
redis.call('ZREMRANGEBYSCORE', k.lkey, '-inf', fmt(now))
redis.call('ZADD', k.lkey, fmt(now + lease_ttl), lease)
-- the set lives as long as its latest lease: a lease shorter than the others (a request late in
-- its deadline) must not expire the set, and with it the leases of requests still running
local last = redis.call('ZRANGE', k.lkey, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', k.lkey, ms(math.max(lease_ttl, tonumber(last[2]) - now)))
local probe = '0'
if k.probe or pprobe then probe = '1' end
settle(nil)
return answer(k.fp, '', probe)
"""


def acquire_args(now_arg: float, policy: PoolPolicy, keys: Sequence[KeySpec], *, tokens: int,
                 rand: float, lease: str, ttl: float, state_ttl_s: float, epoch: str,
                 new_epoch: str, workers: int, known: Mapping[str, tuple[float, bool]],
                 learned: Mapping[str, int]) -> list[Any]:
    """ACQUIRE's ARGV up to the fleet's queue: the request, then each of ``keys`` with what the
    caller knows of it (``known``: blocked-until and removal, ``learned``: its learned limit or 0,
    by fingerprint)."""
    args: list[Any] = [now_arg, policy.strategy, policy.window_s, policy.breaker_cooldown_s,
                       max(0, int(tokens)), rand, lease, ttl, state_ttl_s, len(keys),
                       policy.burst, policy.max_in_flight or 0, epoch, new_epoch,
                       "1" if policy.learn_limits else "0", workers]
    for spec in keys:
        until, removed = known[spec.fingerprint]
        args += [spec.fingerprint, spec.weight, spec.max_rpm or 0, spec.max_tpm or 0, until,
                 "1" if removed else "0", learned[spec.fingerprint]]
    return args
