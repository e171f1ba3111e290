"""The release script of the Redis pool: the port of ``state.apply_outcome`` and the learned
limits (what one request's outcome does to its key and provider).

Why its own module: it is the second hot-path script, with its own retry and probe rules; the
shared helpers and the key layout are in :mod:`.redis_lua`. :func:`release_args` builds its ARGV.
"""

from __future__ import annotations

from typing import Any

from hermes_core.agent.pool.redis_lua import COMMON
from hermes_core.agent.pool.state import (
    Outcome,
    PoolPolicy,
    exhausted_wait,
    sane_limit,
    sane_retry_after,
)

# KEYS: provider hash, key state, key leases, key window, the provider's epoch.
# ARGV: now, kind, retry_after or '', lease or '', cooldown_s, default_cooldown_s, threshold,
#       state_ttl_s, probe '1'/'0', the lease's tokens, window_s, stated limit or '',
#       learn limits '1'/'0', remaining of the limit or '', seconds until it resets or '',
#       auth_recheck_s, auth_recheck_max_s, auth_max_strikes, a new epoch.
# Returns {changed '1'/'0', blocked_until, removed '1'/'0', restored '1'/'0', the recheck time
#          of a key this release quarantined or '', auth strikes, the key's breaker
#          "<mode>|<failures>|<opened at>", the pool state's epoch}.
# The epoch (lua_acquire.ACQUIRE's) tells a worker whose first contact after Redis restarted
# empty is a release that it did: its slot among the fleet is claimed again at once.
# The request's window entry moves from its send time to now (the server counted it in between,
# so the pool's slot never frees before the server's), a refused one (429) too, marked 'r:'.
RELEASE = COMMON + r"""
local now = clock(ARGV[1])
local kind = ARGV[2]
local retry_after = ARGV[3]
local lease = ARGV[4]
local cooldown = tonumber(ARGV[5])
local default_cooldown = tonumber(ARGV[6])
local threshold = tonumber(ARGV[7])
local state_ttl = tonumber(ARGV[8])
local probe = ARGV[9] == '1'
local window = tonumber(ARGV[11])
local epoch = epoch_of(KEYS[5], ARGV[19], ms(state_ttl))

-- this very release run again (redis-py sends it once more when the link dropped before the
-- reply): its outcome is in already; a failure counted twice opened a breaker early
if lease ~= '' then
  local ended = redis.call('HGET', KEYS[2], 'el') or ''
  if string.find(' ' .. ended .. ' ', ' ' .. lease .. ' ', 1, true) then
    local s = redis.call('HMGET', KEYS[2], 'rm', 'bu', 'bm', 'bf', 'bo', 'as')
    local bm, bf, bo = read_breaker(s[3], s[4], s[5])
    local rmo = '0'
    if s[1] == '1' then rmo = '1' end
    return {'0', fmt(tonumber(s[2]) or 0), rmo, '0', '', tostring(tonumber(s[6]) or 0),
            bm .. '|' .. tostring(bf) .. '|' .. fmt(bo), epoch}
  end
  -- the last few leases ended on this key, newest first (a retry follows at once)
  local ENDED_KEPT = 8
  local recent = {lease}
  for id in string.gmatch(ended, '%S+') do
    if #recent < ENDED_KEPT then recent[#recent + 1] = id end
  end
  redis.call('HSET', KEYS[2], 'el', table.concat(recent, ' '))
end

redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', fmt(now - window))
local sent = nil     -- when the request ended here went out (probe.probe_after_success)
if lease ~= '' then
  redis.call('ZREM', KEYS[3], lease)
  local member = lease .. ':' .. ARGV[10]
  sent = tonumber(redis.call('ZSCORE', KEYS[4], member))
  redis.call('ZREM', KEYS[4], member)
  -- a refused one stays too (the server saw it), marked: a 429 counts the others
  if kind == 'rate_limited' then member = 'r:' .. member end
  redis.call('ZADD', KEYS[4], fmt(now), member)
  redis.call('PEXPIRE', KEYS[4], ms(window))
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', fmt(now))
-- the key's successes (state.in_flight_cap)
if kind == 'ok' then redis.call('HINCRBY', KEYS[2], 'an', 1) end
redis.call('PEXPIRE', KEYS[2], ms(state_ttl))
-- state.learned_after
if ARGV[13] == '1' and (kind == 'rate_limited' or kind == 'ok') then
  local learned = tonumber(ARGV[12])
  local stated = learned ~= nil and learned > 0
  local prev = tonumber(redis.call('HGET', KEYS[2], 'lr'))
  if (learned == nil or learned <= 0) and kind == 'rate_limited' then
    -- the requests in the window not refused (in flight ones included: unlike the in-memory
    -- backend's state.sent_before, also those sent after the refused one)
    local admitted = 0
    for _, m in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
      if string.sub(m, 1, 2) ~= 'r:' then admitted = admitted + 1 end
    end
    -- state.learn_limit: nothing else admitted in the window teaches nothing
    learned = nil
    if admitted > 0 then learned = admitted end
    local before = tonumber(redis.call('HGET', KEYS[2], 'lr'))
    if before ~= nil and learned ~= nil and before < learned then learned = before end
  end
  if learned ~= nil and learned > 0 then
    redis.call('HSET', KEYS[2], 'lr', tostring(learned))
    redis.call('PEXPIRE', KEYS[2], ms(state_ttl))
  end
  local p = redis.call('HMGET', KEYS[2], 'ls', 'pv', 'pb', 'pr', 'cf', 'cn')
  local pv, pb = tonumber(p[2]) or 0, tonumber(p[3]) or PROBE_WINDOWS
  if stated then
    redis.call('HSET', KEYS[2], 'ls', '1')
  elseif kind == 'rate_limited' and learned ~= nil and learned > 0 then
    -- probe.probe_after_429
    redis.call('HSET', KEYS[2], 'ls', '0', 'ps', fmt(now), 'pr', '0')
    if p[4] == '1' then
      if prev ~= nil and prev <= pv then
        redis.call('HSET', KEYS[2], 'pv', tostring(math.min(pv, learned)))
      else
        redis.call('HSET', KEYS[2], 'pb',
                   tostring(math.min(PROBE_MAX_WINDOWS, math.max(PROBE_WINDOWS, pb * 2))))
      end
    end
  elseif kind == 'ok' and sent ~= nil and p[1] ~= '1' then
    -- probe.probe_after_success
    local cf, cn = tonumber(p[5]), tonumber(p[6]) or 0
    local start, counted = nil, 0
    if cf ~= nil and cf <= sent and now < cf + window then
      start, counted = cf, cn + 1
    elseif now - sent < window then
      start, counted = sent, 1
    end
    if start ~= nil then
      if prev ~= nil and p[4] == '1' and counted >= prev and prev > pv then pb = 1 end
      pv = math.max(pv, counted)
      redis.call('HSET', KEYS[2], 'cf', fmt(start), 'cn', tostring(counted), 'pv', tostring(pv),
                 'pb', tostring(pb))
    end
  end
end

local s = redis.call('HMGET', KEYS[2], 'rm', 'bu', 'bm', 'bf', 'bo', 'as')
local removed = s[1] == '1'
local bu = tonumber(s[2]) or 0
local bm, bf, bo = read_breaker(s[3], s[4], s[5])
local rm2, bu2, bm2, bf2, bo2 = removed, bu, bm, bf, bo
local strikes = tonumber(s[6]) or 0
local st2 = strikes
local restored, recheck = '0', ''
local changed = false

-- state.apply_outcome
if kind == 'ok' then
  -- state.MemoryPoolState.release: only the recheck's success lifts a quarantine
  if strikes > 0 and not removed then
    if probe then bm2, bf2, bo2, st2, restored = 'closed', 0, 0, 0, '1' end
  else
    bm2, bf2, bo2 = 'closed', 0, 0
  end
  -- state.exhausted_until
  if ARGV[14] == '0' and ARGV[15] ~= '' then bu2 = math.max(bu, now + tonumber(ARGV[15])) end
elseif kind == 'rate_limited' then
  local wait = default_cooldown
  if retry_after ~= '' then wait = math.max(0, tonumber(retry_after)) end
  bu2 = math.max(bu, now + wait)
  bm2, bf2, bo2 = breaker_neutral(bm, bf, bo, now, cooldown, probe)
  changed = bu2 ~= bu
elseif kind == 'removed' then
  -- state.after_auth_failure: quarantined, its breaker open until the one recheck
  if not removed and (strikes == 0 or probe) then
    st2 = strikes + 1
    changed = true
    if st2 >= tonumber(ARGV[18]) then
      rm2 = true
    else
      -- state.auth_recheck_after
      local wait = tonumber(ARGV[16])
      if st2 > 1 then wait = wait * 2 ^ math.min(st2 - 1, 64) end
      wait = math.min(wait, tonumber(ARGV[17]))
      bm2, bo2 = 'open', now + wait - cooldown
      recheck = fmt(bo2 + cooldown)
    end
  end
elseif kind == 'failure' then
  bm2, bf2, bo2 = breaker_failure(bm, bf, bo, now, threshold)
else
  bm2, bf2, bo2 = breaker_neutral(bm, bf, bo, now, cooldown, probe)
end

if rm2 ~= removed or bu2 ~= bu or bm2 ~= bm or bf2 ~= bf or bo2 ~= bo or st2 ~= strikes then
  local rmv = '0'
  if rm2 then rmv = '1' end
  redis.call('HSET', KEYS[2], 'rm', rmv, 'bu', fmt(bu2), 'bm', bm2, 'bf', tostring(bf2), 'bo', fmt(bo2),
             'as', tostring(st2))
  redis.call('PEXPIRE', KEYS[2], ms(math.max(state_ttl, bu2 - now)))
end

-- state.provider_breaker_after
local p = redis.call('HMGET', KEYS[1], 'bm', 'bf', 'bo')
local pm, pf, po = read_breaker(p[1], p[2], p[3])
local pm2, pf2, po2 = pm, pf, po
if kind == 'ok' then
  pm2, pf2, po2 = 'closed', 0, 0
elseif kind == 'failure' then
  pm2, pf2, po2 = breaker_failure(pm, pf, po, now, threshold)
else
  pm2, pf2, po2 = breaker_neutral(pm, pf, po, now, cooldown, probe)
end
if pm2 ~= pm or pf2 ~= pf or po2 ~= po then write_breaker(KEYS[1], pm2, pf2, po2, ms(state_ttl)) end

local ch = '0'
if changed then ch = '1' end
local rmo = '0'
if rm2 then rmo = '1' end
return {ch, fmt(bu2), rmo, restored, recheck, tostring(st2),
        bm2 .. '|' .. tostring(bf2) .. '|' .. fmt(bo2), epoch}
"""


def release_args(now_arg: float, outcome: Outcome, policy: PoolPolicy, *, lease: str, tokens: int,
                 state_ttl_s: float, new_epoch: str) -> list[Any]:
    """RELEASE's ARGV for ``outcome`` of the request holding ``lease`` (``tokens`` counted for
    it; ``new_epoch``: the epoch to start where Redis holds none). The stated limit goes whole
    (the fleet's); numbers Lua cannot read ("inf", "nan") are dropped or capped first."""
    retry_after = sane_retry_after(outcome.retry_after)
    reset = exhausted_wait(outcome.reset_s, policy.window_s)
    return [now_arg, outcome.kind, "" if retry_after is None else retry_after, lease,
            policy.breaker_cooldown_s, policy.default_cooldown_s, policy.breaker_failures,
            state_ttl_s, "1" if outcome.probe else "0", tokens, policy.window_s,
            sane_limit(outcome.limit) or "", "1" if policy.learn_limits else "0",
            "" if outcome.remaining is None else max(0, outcome.remaining),
            "" if reset is None else reset, policy.auth_recheck_s, policy.auth_recheck_max_s,
            policy.auth_max_strikes, new_epoch]
