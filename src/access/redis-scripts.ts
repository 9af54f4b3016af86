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
  /**
   * Admitted by the window, but the quotas are the store's to decide (an instance may be deciding
   * them there): reserve in the store, then SETTLE_LUA.
   */
  IN_STORE: 5,
  /**
   * Every instance is back on Redis, but decisions made in the store are still being added
   * here: nothing changed; ask again in a moment (or without waiting: IN_STORE).
   */
  SETTLING: 6,
  /** The account bound's hash is missing: seed it from the store (as NEEDS_SEED does the key's). */
  NEEDS_ACCOUNT_SEED: 7,
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
-- Instances with a live lease (score = expiry, us) at now; n when there is one instance.
local function liveLeases(leases, now, n)
  if n <= 1 then return n end
  return math.min(n, redis.call('ZCOUNT', leases, '(' .. fmt(now), '+inf'))
end
-- What the window may hold: the rate, less floor(rate / n) for every one of the n instances
-- without a live lease, which may be admitting on its own.
local function capacity(rate, live, n)
  if live >= n then return rate end
  return rate - math.floor(rate / n) * (n - live)
end
-- Merges counts into a key's quota hash (see MERGE_LUA); returns { d, du, mu, g }.
local function mergeCounts(key, now, fd, fdu, fmu, newGen, incGen, id, idu, imu)
  local h = redis.call('HMGET', key, 'g', 'd', 'du', 'mu')
  local g, d, du, mu
  if h[1] then
    g = h[1]; d = tonumber(h[2]); du = tonumber(h[3]); mu = tonumber(h[4])
    if incGen ~= '' and incGen == g then
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
    local d0, du0, mu0 = d, du, mu
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
    -- Counts raised to floors may include increments still on their way here (counted under
    -- this generation): a new generation makes those merge as floors, never add twice.
    if d ~= d0 or du ~= du0 or mu ~= mu0 then g = newGen end
  else
    g = newGen; d = fd; du = fdu; mu = fmu
  end
  local ttl = quotaTtlMs(d, now)
  if ttl <= 0 then
    -- only counts of a month already over: nothing worth keeping
    redis.call('DEL', key)
  else
    redis.call('HSET', key, 'g', g, 'd', fmt(d), 'du', fmt(du), 'mu', fmt(mu))
    redis.call('PEXPIRE', key, fmt(ttl))
  end
  return {d, du, mu, g}
end
`;

/**
 * Admit: sliding window, then (counted requests) daily and monthly counters, in one step.
 *
 * KEYS[1] window ZSET (score = admitted timestamp in us, member = '<us>:<9-digit seq>'; entries
 *         pushed by an instance back from an outage end in ':000000000' too, see PUSH_LUA)
 * KEYS[2] quota HASH { g = generation, d = day number, du = day count, mu = month count,
 *         rt = when Redis last decided a counted request of the key, us }
 * KEYS[3] instance leases ZSET (see LEASE_LUA)
 * KEYS[4] quota decisions under way in the store ZSET (member = token, score = deadline in us)
 * KEYS[5] the account bound's quota HASH { g, d, du, mu } (the key's account and tier; see
 *         QuotaCounters.consume for what it counts), used only when ARGV[13] is not ''
 * ARGV: now us ('' = Redis TIME), rate, counted '1'|'0', daily quota (-1 = unlimited),
 *       monthly quota (-1 = unlimited), window key TTL in ms, instances N, token of this
 *       request, how long a token counts (ms), KEYS[4] TTL in ms, '1' = may wait (SETTLING),
 *       how long after Redis's last decision (rt) the store may decide (ms), the account's
 *       daily bound ('' = no account bound, -1 = unlimited), its monthly bound (-1 = unlimited)
 * With N > 1, every instance without a live lease may be admitting on its own, up to
 * floor(rate / N) per window: that much of the window is kept free for each of them
 * (capacity = rate - floor(rate / N) * (N - live leases)). Such an instance decides quotas in
 * the store, so while one lease is missing, or a decision made in the store has not been added
 * here yet (KEYS[4]), a counted request admitted by the window gets IN_STORE: its token joins
 * KEYS[4] and the caller reserves it in the store, then settles it (SETTLE_LUA). Redis decides a
 * key's quotas only when no other place can be deciding them. With every lease live and only
 * tokens left, a caller that may wait gets SETTLING instead, so that a busy key's decisions in
 * the store run out rather than follow each other forever.
 * Reply: { status, remaining, resetAt us, retryAfter us, now us, d, du, mu, g, member, rt }, and
 *   when Redis decided the quotas: { status, remaining, resetAt us, 0, now us, d, du, mu, g,
 *   scope ('k' = the key's quota, 'a' = the account's bound refused it), account du, account mu }
 *   NEEDS_SEED and NEEDS_ACCOUNT_SEED come before anything is changed; their d is the day of
 *   `now`; so does SETTLING
 *   (after a rate refusal, which comes first). IN_STORE: the
 *   hash's counts and generation, untouched, the window member (removed by SETTLE_LUA if
 *   the store refuses the request), and rt: the counts Redis decided until then reach the store
 *   within IN_STORE_AFTER_REDIS_MS of it (the instances' usage buffers), and the store decides
 *   only after that (see redis-admission.ts).
 */
export const ADMIT_LUA = `${PRELUDE}
local now = nowUs(ARGV[1])
local rate = tonumber(ARGV[2])
local counted = ARGV[3] == '1'
local instances = tonumber(ARGV[7])
local live = liveLeases(KEYS[3], now, instances)
local cap = capacity(rate, live, instances)
local g, d, du, mu, rt
if counted then
  local h = redis.call('HMGET', KEYS[2], 'g', 'd', 'du', 'mu', 'rt')
  if not h[1] then return {4, 0, 0, 0, now, math.floor(now / DAY), 0, 0, ''} end
  g = h[1]; d = tonumber(h[2]); du = tonumber(h[3]); mu = tonumber(h[4]); rt = h[5] or '0'
end
local acct = counted and ARGV[13] ~= ''
local ad, adu, amu
if acct then
  local ah = redis.call('HMGET', KEYS[5], 'g', 'd', 'du', 'mu')
  if not ah[1] then return {7, 0, 0, 0, now, math.floor(now / DAY), 0, 0, ''} end
  ad = tonumber(ah[2]); adu = tonumber(ah[3]); amu = tonumber(ah[4])
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
if n >= cap then
  -- a slot frees when the (n - cap + 1)-th oldest leaves; with no capacity at all, retry in a window
  local freeAt = now + W
  if cap > 0 then freeAt = tonumber(redis.call('ZRANGE', KEYS[1], n - cap, n - cap, 'WITHSCORES')[2]) + W end
  return {1, 0, freeAt, freeAt - now, now, 0, 0, 0, ''}
end
local inStore = false
if counted and instances > 1 then
  inStore = live < instances
  if redis.call('EXISTS', KEYS[4]) == 1 then
    -- a token past its deadline: its instance died or lost Redis (its counts come back with it)
    redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', fmt(now))
    if redis.call('ZCARD', KEYS[4]) > 0 then
      if not inStore and ARGV[11] == '1' then return {6, 0, 0, 0, now, 0, 0, 0, ''} end
      inStore = true
    end
  end
end
local member = fmt(t) .. ':' .. string.format('%09d', seq)
redis.call('ZADD', KEYS[1], fmt(t), member)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
local remaining = cap - n - 1
if not counted then return {0, remaining, resetAt, 0, now, 0, 0, 0, ''} end
if inStore then
  -- The caller first waits until Redis's last decision is ARGV[12] ms old (at most that long):
  -- its token lasts that much longer.
  local deadline = now + tonumber(ARGV[9]) * 1000
  local waitUs = tonumber(ARGV[12]) * 1000
  deadline = deadline + math.max(0, math.min(waitUs, tonumber(rt) + waitUs - now))
  redis.call('ZADD', KEYS[4], fmt(deadline), ARGV[8])
  redis.call('PEXPIRE', KEYS[4], ARGV[10])
  return {5, remaining, resetAt, 0, now, d, du, mu, g, member, rt}
end

-- Quotas (docs/decisions.md "Order of checks and what counts"): daily first; a daily refusal leaves the monthly counter alone.
-- An instant before the stored day is counted in the stored day.
local day = math.floor(now / DAY)
if day > d then
  if monthIndex(day) > monthIndex(d) then mu = 0 end
  d = day
  du = 0
end
if acct and day > ad then
  if monthIndex(day) > monthIndex(ad) then amu = 0 end
  ad = day
  adu = 0
end
-- The key's day, the account's day (a request within its key's daily quota), the key's month
-- (within both daily bounds), the account's month (within its key's monthly quota).
du = du + 1
local status = 0
local scope = 'k'
local daily = tonumber(ARGV[4])
local monthly = tonumber(ARGV[5])
if daily >= 0 and du > daily then
  status = 2
else
  if acct then adu = adu + 1 end
  if acct and tonumber(ARGV[13]) >= 0 and adu > tonumber(ARGV[13]) then
    status = 2
    scope = 'a'
  else
    mu = mu + 1
    if monthly >= 0 and mu > monthly then
      status = 3
    else
      if acct then amu = amu + 1 end
      if acct and tonumber(ARGV[14]) >= 0 and amu > tonumber(ARGV[14]) then
        status = 3
        scope = 'a'
      end
    end
  end
end
redis.call('HSET', KEYS[2], 'd', fmt(d), 'du', fmt(du), 'mu', fmt(mu), 'rt', fmt(now))
redis.call('PEXPIRE', KEYS[2], fmt(quotaTtlMs(d, now)))
if acct then
  redis.call('HSET', KEYS[5], 'd', fmt(ad), 'du', fmt(adu), 'mu', fmt(amu))
  redis.call('PEXPIRE', KEYS[5], fmt(quotaTtlMs(ad, now)))
end
-- A request refused with 429 takes no slot of the window (docs/decisions.md "Order of checks and what counts"): give it back.
if status ~= 0 then
  redis.call('ZREM', KEYS[1], member)
  remaining = cap - n
end
return {status, remaining, resetAt, 0, now, d, du, mu, g, scope, adu or 0, amu or 0}
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
 *    changed only by increments since the increments' generation was read before they were
 *    counted elsewhere, so they are not in it), the increments are added.
 * 2. The floors are merged like QuotaCounters.load(): per period the later one wins; in the
 *    same period the larger count. A missing hash is created from the floors. When the floors
 *    raise a count, the hash takes the new generation: a floor read from the store may hold
 *    counts whose increments are still on their way, which must then merge as floors too.
 * Reply: { d, du, mu, g }
 */
export const MERGE_LUA = `${PRELUDE}
return mergeCounts(KEYS[1], nowUs(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]),
  ARGV[5], ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]))
`;

/**
 * Settle: a request that ADMIT_LUA sent to the store (IN_STORE) was decided there; its count
 * joins the hash and its token leaves the decisions under way, in one step.
 *
 * KEYS[1] quota HASH, KEYS[2] window ZSET, KEYS[3] decisions under way ZSET
 * ARGV: now us ('' = Redis TIME), token, window member to remove ('' = none: the request was
 *       admitted; else refused by a quota, so it gives its slot back), generation the admit
 *       reply carried, day number, day count, month count (the request: 1, and 1 or 0), new
 *       generation, floor day count, floor month count (the store's counts after it)
 * While the hash is of that generation the count is added (exactly: see MERGE_LUA); else the hash
 * was rebuilt or raised from floors meanwhile, and the store's counts after the request are
 * merged as floors instead. A missing hash is left missing (the next admit seeds it).
 * Reply: { d, du, mu, g } (g = '' when the hash is missing)
 */
export const SETTLE_LUA = `${PRELUDE}
local now = nowUs(ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
if ARGV[3] ~= '' then redis.call('ZREM', KEYS[2], ARGV[3]) end
local g = redis.call('HGET', KEYS[1], 'g')
if not g then return {0, 0, 0, ''} end
local day = tonumber(ARGV[5])
if g == ARGV[4] then
  return mergeCounts(KEYS[1], now, day, 0, 0, ARGV[8], g, day, tonumber(ARGV[6]), tonumber(ARGV[7]))
end
return mergeCounts(KEYS[1], now, day, tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[8], '', day, 0, 0)
`;

/**
 * Status: the window and the counters, without changing anything.
 *
 * KEYS[1] window ZSET, KEYS[2] quota HASH, KEYS[3] instance leases;
 * ARGV: now us ('' = Redis TIME), rate, instances N
 * Reply: { status (OK or NEEDS_SEED), remaining, resetAt us, now us, d, du, mu }
 */
export const STATUS_LUA = `${PRELUDE}
local now = nowUs(ARGV[1])
local rate = tonumber(ARGV[2])
local instances = tonumber(ARGV[3])
local cap = capacity(rate, liveLeases(KEYS[3], now, instances), instances)
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
remaining = math.max(0, remaining - (rate - cap))
return {0, remaining, resetAt, now, tonumber(h[1]), tonumber(h[2]), tonumber(h[3])}
`;

/**
 * Lease: an instance says it is serving through Redis (so its share needs no room kept free,
 * see ADMIT_LUA). Renewed every LEASE_RENEW_MS while it does.
 *
 * KEYS[1] instance leases ZSET (member = instance id, score = expiry in us)
 * ARGV: now us ('' = Redis TIME), instance id, deadline us ('' = none), lease length us
 * The lease ends at now + length, but never after the deadline: the instance computes the
 * deadline from its own clock when it sends the renewal, so a renewal that Redis runs late
 * (a paused or overloaded Redis) cannot keep the lease alive after the instance stopped
 * counting on it. Leases expired for an hour are removed.
 * Reply: now us
 */
export const LEASE_LUA = `${PRELUDE}
local now = nowUs(ARGV[1])
local expiry = now + tonumber(ARGV[4])
if ARGV[3] ~= '' then expiry = math.min(expiry, tonumber(ARGV[3])) end
redis.call('ZADD', KEYS[1], fmt(expiry), ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now - 3600 * W))
redis.call('PEXPIRE', KEYS[1], 3600000)
return now
`;

/**
 * Push: the admissions an instance made on its own during an outage join the key's window
 * before that instance serves through Redis again.
 *
 * KEYS[1] window ZSET
 * ARGV: now us ('' = Redis TIME), window key TTL in ms, then pairs (member, age in us): each
 * admission is placed at now - age. The age is measured when the instance sends the call and
 * Redis runs it later, so an admission lands at or after its true time (it stays in the window
 * at least as long as it should), and clocks of different hosts never meet. Members are unique
 * per admission, so pushing again after a failed call adds nothing twice.
 * Reply: entries added or moved
 */
export const PUSH_LUA = `${PRELUDE}
local now = nowUs(ARGV[1])
local n = 0
for i = 3, #ARGV, 2 do
  local s = now - tonumber(ARGV[i + 1])
  if s > now - W then
    redis.call('ZADD', KEYS[1], fmt(s), ARGV[i])
    n = n + 1
  end
end
if n > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n
`;
