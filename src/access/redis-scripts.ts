/**
 * Lua scripts of the Redis admission backend (see redis-admission.ts for the key layout and
 * the guarantees). Each runs atomically in Redis: one script call = one round trip.
 *
 * Units inside the scripts: time in integer MICROseconds since the epoch (exact in a double
 * until the year 2255), so window arithmetic is exact integer arithmetic; days as UTC day
 * numbers (floor(us / 86,400,000,000)); months as `year * 12 + month - 1`. Numbers passed to
 * redis.call are formatted with '%.0f' because older Redis versions format Lua numbers with
 * '%.14g', which would round a microsecond timestamp.
 */

/** Status codes returned in the first element of the admit and status replies. */
export const STATUS = {
  OK: 0,
  RATE_LIMITED: 1,
  DAILY_QUOTA: 2,
  MONTHLY_QUOTA: 3,
  /** The quota hash is missing (first use, Redis restarted, flushed or evicted): seed it from the store. */
  NEEDS_SEED: 4,
} as const;

/** Extra time a quota hash lives after the end of its month, in ms. */
export const QUOTA_TTL_MARGIN_MS = 3_600_000;

const PRELUDE = `
local W = 1000000
local DAY = 86400000000
local MARGIN_MS = ${QUOTA_TTL_MARGIN_MS}
local function fmt(n) return string.format('%.0f', n) end
local function nowUs(arg)
  if arg ~= '' then return tonumber(arg) end
  -- Redis < 5 needs effects replication before a write that follows TIME; 5+ does it by default
  -- and 7 keeps the function only as a no-op.
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
-- Month index (year * 12 + month - 1) of a UTC day number (days since 1970-01-01):
-- H. Hinnant's civil_from_days, proleptic Gregorian, leap years included.
local function monthIndex(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local y = yoe + era * 400
  local m
  if mp < 10 then m = mp + 3 else m = mp - 9; y = y + 1 end
  return y * 12 + m - 1
end
-- Day number of the 1st of a month index (days_from_civil).
local function firstDayOfMonth(mi)
  local y = math.floor(mi / 12)
  local m = mi - y * 12 + 1
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp
  if m > 2 then mp = m - 3 else mp = m + 9 end
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + math.floor((153 * mp + 2) / 5)
  return era * 146097 + doe - 719468
end
-- A quota hash counting day d lives until the end of d's month plus a margin (ms, relative).
local function quotaTtlMs(d, now)
  return math.ceil((firstDayOfMonth(monthIndex(d) + 1) * DAY - now) / 1000) + MARGIN_MS
end
`;

/**
 * Admit: sliding window, then (counted requests) daily and monthly counters, in one step.
 *
 * KEYS[1] window ZSET (score = admitted timestamp in us, member = '<us>:<9-digit seq>')
 * KEYS[2] quota HASH { g = generation, d = day number, du = day count, mu = month count }
 * ARGV: now us ('' = Redis TIME), rate, counted '1'|'0', daily quota (-1 = unlimited),
 *       monthly quota (-1 = unlimited), window key TTL in ms
 * Reply: { status, remaining, resetAt us, retryAfter us, now us, d, du, mu, g }
 *   NEEDS_SEED comes before anything is changed; its d is the day of `now`.
 */
export const ADMIT_LUA = `${PRELUDE}
local now = nowUs(ARGV[1])
local rate = tonumber(ARGV[2])
local counted = ARGV[3] == '1'
local g, d, du, mu
if counted then
  local h = redis.call('HMGET', KEYS[2], 'g', 'd', 'du', 'mu')
  if not h[1] then return {4, 0, 0, 0, now, math.floor(now / DAY), 0, 0, ''} end
  g = h[1]; d = tonumber(h[2]); du = tonumber(h[3]); mu = tonumber(h[4])
end

-- Per key, time never runs backwards: an instant before the newest admitted one counts as it.
local t = now
local seq = 0
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if newest[2] then
  local s = tonumber(newest[2])
  if s >= t then
    t = s
    seq = tonumber(string.sub(newest[1], -9)) + 1
  end
end
-- Keep the admitted timestamps s with t < s + W, and (after a rate change) only the newest rate.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(t - W))
local n = redis.call('ZCARD', KEYS[1])
if n > rate then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - rate - 1)
  n = rate
end
local resetAt = t + W
if n > 0 then resetAt = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]) + W end
if n >= rate then return {1, 0, resetAt, resetAt - now, now, 0, 0, 0, ''} end
local member = fmt(t) .. ':' .. string.format('%09d', seq)
redis.call('ZADD', KEYS[1], fmt(t), member)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
local remaining = rate - n - 1
if not counted then return {0, remaining, resetAt, 0, now, 0, 0, 0, ''} end

-- Quotas (DECISIONS D7): daily first; a daily refusal leaves the monthly counter alone.
-- An instant before the stored day is counted in the stored day.
local day = math.floor(now / DAY)
if day > d then
  if monthIndex(day) > monthIndex(d) then mu = 0 end
  d = day
  du = 0
end
du = du + 1
local status = 0
local daily = tonumber(ARGV[4])
local monthly = tonumber(ARGV[5])
if daily >= 0 and du > daily then
  status = 2
else
  mu = mu + 1
  if monthly >= 0 and mu > monthly then status = 3 end
end
redis.call('HSET', KEYS[2], 'd', fmt(d), 'du', fmt(du), 'mu', fmt(mu))
redis.call('PEXPIRE', KEYS[2], fmt(quotaTtlMs(d, now)))
-- A request refused with 429 takes no slot of the window (D7): give it back.
if status ~= 0 then
  redis.call('ZREM', KEYS[1], member)
  remaining = rate - n
end
return {status, remaining, resetAt, 0, now, d, du, mu, g}
`;

/**
 * Merge counts into a key's quota hash: the seed after NEEDS_SEED, and the reconciliation
 * after an outage.
 *
 * KEYS[1] quota HASH
 * ARGV: now us ('' = Redis TIME), floor day number, floor day count, floor month count,
 *       generation for a new hash, increment generation ('' = none), increment day number,
 *       increment day count, increment month count
 * 1. If the hash exists and its generation equals the increment generation (the hash has
 *    lived on since the increments were counted elsewhere), the increments are added.
 * 2. The floors are merged like QuotaCounters.load(): per period the later one wins; in the
 *    same period the larger count. A missing hash is created from the floors.
 * Reply: { d, du, mu, g }
 */
export const MERGE_LUA = `${PRELUDE}
local now = nowUs(ARGV[1])
local fd = tonumber(ARGV[2])
local fdu = tonumber(ARGV[3])
local fmu = tonumber(ARGV[4])
local h = redis.call('HMGET', KEYS[1], 'g', 'd', 'du', 'mu')
local g, d, du, mu
if h[1] then
  g = h[1]; d = tonumber(h[2]); du = tonumber(h[3]); mu = tonumber(h[4])
  if ARGV[6] ~= '' and ARGV[6] == g then
    local id = tonumber(ARGV[7])
    local idu = tonumber(ARGV[8])
    local imu = tonumber(ARGV[9])
    if id > d then
      if monthIndex(id) > monthIndex(d) then mu = 0 end
      d = id
      du = idu
      mu = mu + imu
    elseif id == d then
      du = du + idu
      mu = mu + imu
    elseif monthIndex(id) == monthIndex(d) then
      mu = mu + imu
    end
  end
  if fd > d then
    if monthIndex(fd) > monthIndex(d) then mu = fmu else mu = math.max(mu, fmu) end
    d = fd
    du = fdu
  elseif fd == d then
    du = math.max(du, fdu)
    mu = math.max(mu, fmu)
  elseif monthIndex(fd) == monthIndex(d) then
    mu = math.max(mu, fmu)
  end
else
  g = ARGV[5]; d = fd; du = fdu; mu = fmu
end
local ttl = quotaTtlMs(d, now)
if ttl <= 0 then
  -- only counts of a month already over: nothing worth keeping
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'g', g, 'd', fmt(d), 'du', fmt(du), 'mu', fmt(mu))
  redis.call('PEXPIRE', KEYS[1], fmt(ttl))
end
return {d, du, mu, g}
`;

/**
 * Status: the window and the counters, without changing anything.
 *
 * KEYS[1] window ZSET, KEYS[2] quota HASH; ARGV: now us ('' = Redis TIME), rate
 * Reply: { status (OK or NEEDS_SEED), remaining, resetAt us, now us, d, du, mu }
 */
export const STATUS_LUA = `${PRELUDE}
local now = nowUs(ARGV[1])
local rate = tonumber(ARGV[2])
local h = redis.call('HMGET', KEYS[2], 'd', 'du', 'mu')
if not h[1] then return {4, 0, 0, now, math.floor(now / DAY), 0, 0} end
local t = now
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) > t then t = tonumber(newest[2]) end
local inWindow = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. fmt(t - W), '+inf', 'WITHSCORES')
local n = #inWindow / 2
local remaining = rate
local resetAt = now + W
if n > 0 then
  -- after a rate change only the newest rate count, as the next admit would keep
  local k = 1
  if n > rate then k = n - rate + 1 end
  remaining = rate - math.min(n, rate)
  resetAt = tonumber(inWindow[2 * k]) + W
end
return {0, remaining, resetAt, now, tonumber(h[1]), tonumber(h[2]), tonumber(h[3])}
`;
