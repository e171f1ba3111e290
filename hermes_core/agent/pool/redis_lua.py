"""Lua shared by the Redis pool-state backend's scripts (see :mod:`hermes_core.agent.pool.redis`).

The scripts live by job: the acquire in :mod:`.lua_acquire`, the release in :mod:`.lua_release`,
the outage merge in :mod:`.lua_recovery`, the workers' slots in :mod:`.worker_slot`, the fleet's
queue in :mod:`.fleet_queue`; here are the helpers they share (:data:`COMMON`), the read-only
:data:`SNAPSHOT` and the layout of the keys.

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
* ``<prefix>:{homes}:h:<fp>``         zset  the state names the key's state was kept under (no
  script: :mod:`.rename` reads it once per process), score = when

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

-- the incarnation of the provider's pool state, kept for ``ttl_ms`` more: a new one, ``new``
-- under this server's run id, where Redis holds none (it restarted empty, or the state
-- expired) or one another server run wrote (it restarted from a snapshot, or a replica took
-- over: what was written since the snapshot or not yet copied is lost, the epoch not). INFO
-- refused (a host that disables it): no run id, only an empty restart is noticed.
local function epoch_of(key, new, ttl_ms)
  local info = redis.pcall('INFO', 'server')
  local run = ''
  if type(info) == 'string' then run = string.match(info, 'run_id:(%x+)') or '' end
  local epoch = redis.call('GET', key)
  if not epoch or string.match(epoch, '@(%x*)$') ~= run then
    epoch = new .. '@' .. run
    redis.call('SET', key, epoch)
  end
  redis.call('PEXPIRE', key, ttl_ms)
  return epoch
end
"""

# KEYS: provider hash, then per key (state, window, leases), then the epoch.
# ARGV: now, window_s, n, state_ttl_s, a new epoch.
# Returns {now, provider mode, failures, opened_at, then per key 10 fields:
#          removed, blocked_until, in_flight, requests, tokens, mode, failures, opened_at,
#          learned limit or '', auth strikes; then the pool state's epoch}.
# The epoch (lua_acquire.ACQUIRE's) tells a worker that reads status before it acquires again
# that Redis restarted empty: its slot among the fleet is claimed again at once.
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
out[#out + 1] = epoch_of(KEYS[2 + 3 * n], ARGV[5], ms(tonumber(ARGV[4])))
return out
"""
