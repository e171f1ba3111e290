"""Lua sources for the Redis pool-state backend (see :mod:`hermes_core.agent.pool.redis`).

Each script is a line-for-line port of the pure functions in :mod:`hermes_core.agent.pool.state` and
:mod:`breaker` (``breaker_check``, ``evaluate_key``, ``choose_key``, ``apply_outcome``,
``provider_breaker_after``) so both backends decide identically; the shared contract suite in
``tests/agent/pool/test_state.py`` holds them to it.

Why Lua: one acquire must be ONE round trip and atomic across every process and machine, and it
must read the clock of the one server they all share (``TIME``), not the callers' skewed clocks.
Redis >= 5 replicates script effects, so calling ``TIME`` before writes is allowed.

Layout of the keys (all names carry the provider as a hash tag, so a cluster keeps one provider's
keys in one slot; keys are named by credential *fingerprint*, never by the secret):

* ``<prefix>:{<provider>}:p``        hash  provider breaker: ``bm`` mode, ``bf`` failures, ``bo`` opened at
* ``<prefix>:{<provider>}:rr``       hash  smooth round-robin current weight per fingerprint
* ``<prefix>:{<provider>}:k:<fp>``   hash  ``rm`` removed, ``bu`` blocked until, ``bm``/``bf``/``bo`` breaker
* ``<prefix>:{<provider>}:w:<fp>``   zset  request window: member ``<lease>:<tokens>``, score = time
* ``<prefix>:{<provider>}:l:<fp>``   zset  in-flight leases: member ``<lease>``, score = lease expiry

Every key gets a TTL on each write (window: ``window_s``; leases: ``lease_ttl_s``; state:
``state_ttl_s`` or longer than its deadline), so a crashed worker leaks nothing: its leases expire
and stop counting as in flight, and idle pools vanish.

``ARGV[1]`` is the time override: negative means "use Redis ``TIME``" (production); tests pass an
injected clock's value to step time deterministically.
"""

from __future__ import annotations

from hermes_core.agent.pool.probe import PROBE_MAX_WINDOWS, PROBE_WINDOWS

COMMON = r"""
local function clock(arg)
  local t = tonumber(arg)
  if t ~= nil and t >= 0 then return t end
  local r = redis.call('TIME')
  return tonumber(r[1]) + tonumber(r[2]) / 1000000
end

local function fmt(x)
  return string.format('%.17g', x)
end

local function ms(seconds)
  return math.max(1000, math.ceil(seconds * 1000) + 1000)
end

-- breaker.breaker_check: allowed, probe, mode, failures, opened_at, retry_at
local function breaker_check(mode, failures, opened, now, cooldown)
  if mode == 'closed' then return true, false, mode, failures, opened, nil end
  if mode == 'open' then
    local reopen = opened + cooldown
    if now >= reopen then return true, true, 'half_open', failures, now, nil end
    return false, false, mode, failures, opened, reopen
  end
  local stale = opened + cooldown
  if now >= stale then return true, true, mode, failures, now, nil end
  return false, false, mode, failures, opened, stale
end

-- breaker.breaker_failure
local function breaker_failure(mode, failures, opened, now, threshold)
  if mode == 'half_open' then return 'open', failures + 1, now end
  if mode == 'open' then return mode, failures, opened end
  failures = failures + 1
  if failures >= threshold then return 'open', failures, now end
  return 'closed', failures, opened
end

-- state._neutral: a probe that ended without a health signal frees the probe slot
local function breaker_neutral(mode, failures, opened, now, cooldown, probe)
  if mode == 'half_open' and probe then return 'open', failures, now - cooldown end
  return mode, failures, opened
end

-- state.pace_free_at
local function pace_free_at(tat, now, limit, window, burst)
  if limit == nil or limit <= 0 or burst >= 1.0 then return nil end
  local interval = window / limit
  local tolerance = (math.max(1, math.ceil(limit * burst)) - 1) * interval
  local at = tat - tolerance
  if now >= at then return nil end
  return at
end

local function read_breaker(mode, failures, opened)
  return mode or 'closed', tonumber(failures) or 0, tonumber(opened) or 0
end

local PROBE_WINDOWS = """ + str(PROBE_WINDOWS) + r"""
local PROBE_MAX_WINDOWS = """ + str(PROBE_MAX_WINDOWS) + r"""

local function write_breaker(key, mode, failures, opened, ttl_ms)
  redis.call('HSET', key, 'bm', mode, 'bf', tostring(failures), 'bo', fmt(opened))
  redis.call('PEXPIRE', key, ttl_ms)
end
"""

# KEYS: provider hash, rr hash, epoch, then per key (state, window, leases).
# ARGV: now, strategy, window_s, cooldown_s, tokens, rand, lease, lease_ttl_s, state_ttl_s, n,
#       burst, max_in_flight or 0, the caller's epoch, a new epoch, learn limits '1'/'0',
#       workers sharing the keys,
#       then per key (fingerprint, weight, max_rpm or 0, max_tpm or 0, the caller's known
#       blocked-until, the caller's known removal '1'/'0', the caller's known learned limit or 0).
# Returns {fingerprint or '', available_at or '', probe '1'/'0', now, 'resync' or '', epoch,
#          then per key blocked_until, removed, learned limit or '', this worker's share of the
#          key's window: "<requests in it>|<limit or 0>|<time>:<tokens>,..." (the newest), its
#          auth strikes, its breaker "<mode>|<failures>|<opened at>" (after this acquire),
#          then the earliest recheck of a key quarantined after an auth rejection or ''}.
# The epoch names this incarnation of the pool state: a caller that knows another one (Redis
# restarted empty, or the caller is new) gets 'resync' and nothing else, merges what it knows
# (MERGE) and asks again. The callers' known deadlines and removals are floors: a restarted Redis
# gets them back with the very next acquire, before it decides anything.
ACQUIRE = COMMON + r"""
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

local epoch = redis.call('GET', KEYS[3])
if not epoch then
  epoch = ARGV[14]
  redis.call('SET', KEYS[3], epoch)
end
redis.call('PEXPIRE', KEYS[3], ms(state_ttl))
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

local p = redis.call('HMGET', KEYS[1], 'bm', 'bf', 'bo')
local pm, pf, po = read_breaker(p[1], p[2], p[3])
local pok, pprobe, pm2, pf2, po2, pretry = breaker_check(pm, pf, po, now, cooldown)
if not pok then
  return {'', fmt(pretry), '0', fmt(now), '', epoch}
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
  -- the key's window for this worker's share of it (fallback.share): how many requests, the
  -- key's limit (0: unknown) and the times and tokens of the newest (at most 64). The local
  -- fallback starts from that share, so a worker that sent few of them does not spend a share
  -- of requests or tokens on top.
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
  if lim <= 0 then lim = tonumber(s[6]) or 0 end
  seen[#seen + 1] = tostring(count) .. '|' .. tostring(lim) .. '|' .. table.concat(times, ',')
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
redis.call('PEXPIRE', k.lkey, ms(lease_ttl))
local probe = '0'
if k.probe or pprobe then probe = '1' end
return answer(k.fp, '', probe)
"""

# KEYS: provider hash, key state, key leases, key window.
# ARGV: now, kind, retry_after or '', lease or '', cooldown_s, default_cooldown_s, threshold,
#       state_ttl_s, probe '1'/'0', the lease's tokens, window_s, stated limit or '',
#       learn limits '1'/'0', remaining of the limit or '', seconds until it resets or '',
#       auth_recheck_s, auth_recheck_max_s, auth_max_strikes.
# Returns {changed '1'/'0', blocked_until, removed '1'/'0', restored '1'/'0', the recheck time
#          of a key this release quarantined or '', auth strikes, the key's breaker
#          "<mode>|<failures>|<opened at>"}.
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
            bm .. '|' .. tostring(bf) .. '|' .. fmt(bo)}
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
        bm2 .. '|' .. tostring(bf2) .. '|' .. fmt(bo2)}
"""

# KEYS: provider hash, then per key (state, window, leases).  ARGV: now, window_s, n.
# Returns {now, provider mode, failures, opened_at, then per key 8 fields:
#          removed, blocked_until, in_flight, requests, tokens, mode, failures, opened_at,
#          learned limit or '', auth strikes}.
SNAPSHOT = COMMON + r"""
local now = clock(ARGV[1])
local window = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local p = redis.call('HMGET', KEYS[1], 'bm', 'bf', 'bo')
local pm, pf, po = read_breaker(p[1], p[2], p[3])
local out = {fmt(now), pm, tostring(pf), fmt(po)}
for i = 1, n do
  local b = 1 + (i - 1) * 3
  local skey, wkey, lkey = KEYS[b + 1], KEYS[b + 2], KEYS[b + 3]
  redis.call('ZREMRANGEBYSCORE', wkey, '-inf', fmt(now - window))
  redis.call('ZREMRANGEBYSCORE', lkey, '-inf', fmt(now))
  local e = redis.call('ZRANGE', wkey, 0, -1)
  local tokens = 0
  for _, m in ipairs(e) do tokens = tokens + (tonumber(string.match(m, ':(%d+)$')) or 0) end
  local s = redis.call('HMGET', skey, 'rm', 'bu', 'bm', 'bf', 'bo', 'lr', 'as')
  local bm, bf, bo = read_breaker(s[3], s[4], s[5])
  local rm = '0'
  if s[1] == '1' then rm = '1' end
  out[#out + 1] = rm
  out[#out + 1] = fmt(tonumber(s[2]) or 0)
  out[#out + 1] = tostring(redis.call('ZCARD', lkey))
  out[#out + 1] = tostring(#e)
  out[#out + 1] = tostring(tokens)
  out[#out + 1] = bm
  out[#out + 1] = tostring(bf)
  out[#out + 1] = fmt(bo)
  out[#out + 1] = s[6] or ''
  out[#out + 1] = s[7] or '0'
end
return out
"""

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
