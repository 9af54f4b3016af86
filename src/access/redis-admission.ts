import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.ts';
import { DAY_MS, dayStartMs, monthOfDay, utcDay } from '../domain/periods.ts';
import type { Store, UsageEvent } from '../store/types.ts';
import {
  type Admission,
  type AdmissionRequest,
  type AdmissionResult,
  type QuotaStatus,
  quotaStatus,
} from './admission.ts';
import { QuotaCounters } from './quota.ts';
import { ADMIT_LUA, MERGE_LUA, STATUS, STATUS_LUA } from './redis-scripts.ts';
import { type RateState, SlidingWindowLimiter, WINDOW_MS } from './sliding-window.ts';
import type { Tier } from './tiers.ts';

/** The slice of a logger this backend uses (pino and Fastify's `app.log` fit). */
export interface WarnLogger {
  warn(obj: unknown, msg?: string): void;
}

export interface RedisAdmissionOptions {
  /** `redis://` or `rediss://` URL. */
  url: string;
  /** Where every counted request is made durable (batched), and where counts are rebuilt from. */
  store: Store;
  /** Prefix of every Redis key. Default `lrds:`. */
  prefix?: string;
  /**
   * Tests only. Without it (production) the time of the window and of the UTC day is Redis's
   * own `TIME`, read inside the script, so hosts with skewed clocks share one window; the
   * request's `nowMs` is used only while Redis is unreachable. With it, `clock.now()` is
   * passed to the scripts instead, so a test can move time; idle window keys then expire
   * after 60 s of real time instead of 1 s, as the injected time has no relation to Redis's.
   */
  clock?: Clock;
  /**
   * How many instances share the traffic (set by the operator; default 1). While Redis is
   * unreachable each instance enforces ceil(rate / instances) per key on its own.
   */
  instances?: number;
  /** Usage events are written to the store in batches this often (ms). Default 100. */
  flushIntervalMs?: number;
  /** A Redis command not answered within this many ms fails and the request is served locally. Default 100. */
  commandTimeoutMs?: number;
  /** Default: console. */
  logger?: WarnLogger;
}

/** Counts made while Redis was unreachable, per key and day, to add to Redis when it is back. */
interface OutageDelta {
  /** Requests counted (the daily counter). */
  n: number;
  /** Of those, counted toward the month. */
  m: number;
  /** Generation of the key's quota hash these counts are relative to ('' = unknown). */
  gen: string;
  /** The increment may already be in Redis (a call failed after sending it): merge floors only. */
  uncertain: boolean;
}

/** Last counts Redis reported for a key: a lower bound of the truth, and its hash generation. */
interface Known {
  g: string;
  /** UTC day number. */
  d: number;
  du: number;
  mu: number;
}

/** The fallback limiter of one outage. */
interface LocalState {
  limiter: SlidingWindowLimiter;
  quotas: QuotaCounters;
  /** Real time (ms) each key's counts were last loaded. */
  loadedAt: Map<string, number>;
  loading: Map<string, Promise<void>>;
}

interface ScriptedRedis {
  lrdsAdmit(
    window: string,
    quota: string,
    nowUs: string,
    rate: number,
    counted: string,
    daily: number,
    monthly: number,
    windowTtlMs: number,
  ): Promise<unknown[]>;
  lrdsMerge(
    quota: string,
    nowUs: string,
    floorDay: number,
    floorDayUsed: number,
    floorMonthUsed: number,
    newGen: string,
    incGen: string,
    incDay: number,
    incDayUsed: number,
    incMonthUsed: number,
  ): Promise<unknown[]>;
  lrdsStatus(window: string, quota: string, nowUs: string, rate: number): Promise<unknown[]>;
}

/** Known counts kept for at most this many keys (then forgotten: only the exactness of a reconciliation suffers). */
const KNOWN_MAX = 100_000;
/** During an outage, a key's local counts are refreshed from the store this often (ms). */
const OUTAGE_RELOAD_MS = 1000;
/** While unreachable or with counts to reconcile, Redis is probed this often (ms). */
const PROBE_MS = 200;
const SEED_ATTEMPTS = 3;

const consoleLogger: WarnLogger = { warn: (obj, msg) => console.warn(msg ?? '', obj) };

/** The inner map of `outer` at `key`, created if missing. */
function inner<V>(outer: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let m = outer.get(key);
  if (!m) {
    m = new Map();
    outer.set(key, m);
  }
  return m;
}

const newGeneration = () => randomBytes(6).toString('base64url');
const dayNumber = (day: string) => dayStartMs(day) / DAY_MS;
const dayOfNumber = (d: number) => utcDay(d * DAY_MS);

/**
 * The scaled backend of Admission: one Redis shared by every instance.
 *
 * Per request ONE atomic Lua script (EVALSHA, falling back to EVAL after a Redis restart; see
 * redis-scripts.ts) applies the exact sliding window and both quota counters of DECISIONS D7.
 * Key layout, per API key (the `{keyId}` hash tag keeps a key's two entries on one cluster slot):
 *   `<prefix>w:{<keyId>}` ZSET of admitted timestamps (us) in the window; trimmed to the window and
 *       to `rate` entries on every admit; PEXPIREs 1 s after the last admit.
 *   `<prefix>q:{<keyId>}` HASH { g: generation, d: UTC day number, du: day count, mu: month count };
 *       rolled over inside the script at 00:00 UTC and on the 1st; PEXPIREs 1 h after the end of its month.
 *
 * Durability: Redis is a cache of the counts, the store their home. Every counted request is
 * also buffered as a usage event and written to the store every `flushIntervalMs` and on close().
 * When the script finds a key's quota hash missing (first use this month, Redis restarted,
 * flushed or evicted) it changes nothing and answers NEEDS_SEED; the hash is then rebuilt from
 * the store's totals plus this instance's unflushed events (and the last counts Redis reported
 * here, a lower bound too), merged by maximum so concurrent seeds never add up, and the request
 * is retried.
 *
 * Loss bound (tested in test/access/redis-faults.test.ts):
 * - Redis loses its data: the counts are rebuilt from the store; what can be regained is only
 *   what OTHER instances still held in their buffers at that moment, i.e. the key's requests
 *   they counted in the last flushIntervalMs (+ one store write). The window being shared, that
 *   is at most `rate` requests per key (20 for a Pro key) while flushIntervalMs + the store's
 *   write time stay under 1 s; with one instance, nothing. While the store refuses writes the
 *   buffers keep growing, and so does the bound.
 * - An instance dies with kill -9: its buffered events (same bound) never reach the store. Redis
 *   still counts them, so they are regained only if Redis also loses its data before the day or
 *   month ends.
 * - Never the other way: a request is never counted less than once in Redis after a
 *   reconciliation; it is counted twice only when its reply timed out after Redis applied it
 *   (the instance then counts it locally too), and the store holds it once.
 *
 * Redis unreachable (connection lost, or a command unanswered within `commandTimeoutMs`):
 * requests are served at once by a local limiter (SlidingWindowLimiter and QuotaCounters), each
 * instance enforcing ceil(rate / instances) per key and the full quotas, its counts seeded
 * from the last counts Redis reported, the store and this instance's unflushed events, and
 * refreshed from the store every second (so instances see each other's counts with that delay).
 * Usage still goes to the store. When Redis answers again, the counts made meanwhile are added
 * to Redis before it serves requests again: HINCRBY when the key's hash has lived on (same
 * generation), else the hash is rebuilt from the store (which holds them), so no quota is
 * regained beyond the bound above.
 */
export class RedisAdmission implements Admission {
  readonly backend = 'redis' as const;
  readonly #redis: Redis;
  readonly #scripts: ScriptedRedis;
  readonly #store: Store;
  readonly #prefix: string;
  readonly #clock: Clock | null;
  readonly #instances: number;
  readonly #windowTtlMs: number;
  readonly #logger: WarnLogger;
  readonly #timers: NodeJS.Timeout[];

  #mode: 'redis' | 'local' = 'local';
  #closed = false;
  #local: LocalState | null = null;
  /** Set when Redis was lost after having served: its return is then logged. */
  #wentDown = false;
  #reconciling = false;
  readonly #known = new Map<string, Known>();
  readonly #seeding = new Map<string, Promise<void>>();
  #outage = new Map<string, Map<string, OutageDelta>>();

  #buffer: UsageEvent[] = [];
  /** Unflushed events per key and day (buffered or being written): n counted, m counted monthly. */
  readonly #pending = new Map<string, Map<string, { n: number; m: number }>>();
  /** Serializes flushes and the reads of store totals that must not overlap one. */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(options: RedisAdmissionOptions) {
    this.#store = options.store;
    this.#prefix = options.prefix ?? 'lrds:';
    this.#clock = options.clock ?? null;
    this.#instances = Math.max(1, Math.floor(options.instances ?? 1));
    this.#windowTtlMs = this.#clock ? 60_000 : WINDOW_MS + 1;
    this.#logger = options.logger ?? consoleLogger;

    this.#redis = new Redis(options.url, {
      commandTimeout: options.commandTimeoutMs ?? 300,
      connectTimeout: 1000,
      // Lets a closed instance's process exit at once when Redis was unreachable.
      disconnectTimeout: 200,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: (times) => Math.min(50 * times, 500),
    });
    this.#redis.defineCommand('lrdsAdmit', { numberOfKeys: 2, lua: ADMIT_LUA });
    this.#redis.defineCommand('lrdsMerge', { numberOfKeys: 1, lua: MERGE_LUA });
    this.#redis.defineCommand('lrdsStatus', { numberOfKeys: 2, lua: STATUS_LUA });
    this.#scripts = this.#redis as unknown as ScriptedRedis;
    this.#redis.on('error', (err) => this.#goDown(err));
    this.#redis.on('close', () => this.#goDown(new Error('connection to Redis closed')));
    this.#redis.on('ready', () => void this.#reconcile());

    this.#timers = [
      setInterval(() => void this.flush(), options.flushIntervalMs ?? 100),
      setInterval(() => {
        if (this.#mode === 'local' || this.#outage.size > 0) void this.#reconcile();
      }, PROBE_MS),
    ];
    for (const t of this.#timers) t.unref();
  }

  /** 'up' while Redis serves the requests; 'down' while the local fallback does (for /health). */
  state(): 'up' | 'down' {
    return this.#mode === 'redis' ? 'up' : 'down';
  }

  /** Resolves true once Redis serves requests, false if it does not within `timeoutMs`. */
  async ready(timeoutMs = 2000): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (this.#mode !== 'redis') {
      if (this.#closed || Date.now() >= end) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return true;
  }

  async admit(req: AdmissionRequest): Promise<AdmissionResult> {
    if (this.#mode === 'redis') {
      try {
        return await this.#admitRedis(req);
      } catch (err) {
        this.#goDown(err);
      }
    }
    return this.#admitLocal(req);
  }

  async status(keyId: string, tier: Tier, nowMs: number): Promise<QuotaStatus> {
    if (this.#mode === 'redis') {
      try {
        return await this.#statusRedis(keyId, tier);
      } catch (err) {
        this.#goDown(err);
      }
    }
    return this.#statusLocal(keyId, tier, nowMs);
  }

  /** Writes the buffered usage events to the store (also runs every flushIntervalMs). */
  flush(): Promise<void> {
    return this.#exclusive(() => this.#flushOnce());
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    await this.flush();
    if (this.#buffer.length > 0) {
      this.#logger.warn({ events: this.#buffer.length }, 'usage events could not be written to the store');
    }
    try {
      await this.#redis.quit();
    } catch {
      this.#redis.disconnect();
    }
  }

  // ---- Redis path ----

  #keys(keyId: string): { w: string; q: string } {
    return { w: `${this.#prefix}w:{${keyId}}`, q: `${this.#prefix}q:{${keyId}}` };
  }

  /** The `now` argument of the scripts: '' = Redis TIME. */
  #nowArg(): string {
    return this.#clock ? String(Math.round(this.#clock.now() * 1000)) : '';
  }

  async #admitRedis(req: AdmissionRequest): Promise<AdmissionResult> {
    const { keyId, tier } = req;
    const { w, q } = this.#keys(keyId);
    for (let attempt = 1; ; attempt++) {
      const r = await this.#scripts.lrdsAdmit(
        w,
        q,
        this.#nowArg(),
        tier.ratePerSecond,
        req.counted ? '1' : '0',
        tier.dailyQuota ?? -1,
        tier.monthlyQuota ?? -1,
        this.#windowTtlMs,
      );
      const status = Number(r[0]);
      if (status === STATUS.NEEDS_SEED) {
        if (attempt >= SEED_ATTEMPTS) throw new Error(`quota counters of ${keyId} could not be seeded`);
        await this.#seed(keyId, Number(r[5]));
        continue;
      }
      const rate: RateState = {
        limit: tier.ratePerSecond,
        remaining: Number(r[1]),
        resetAt: Number(r[2]) / 1000,
      };
      if (status === STATUS.RATE_LIMITED) {
        return { ok: false, reason: 'RATE_LIMITED', rate, retryAfterMs: Number(r[3]) / 1000 };
      }
      if (!req.counted) return { ok: true, rate };
      const d = Number(r[5]);
      const du = Number(r[6]);
      const mu = Number(r[7]);
      this.#remember(keyId, { g: String(r[8]), d, du, mu });
      this.#record(keyId, dayOfNumber(d), req.endpoint, status !== STATUS.DAILY_QUOTA);
      if (status === STATUS.DAILY_QUOTA) {
        return { ok: false, reason: 'DAILY_QUOTA', rate, limit: tier.dailyQuota!, used: du };
      }
      if (status === STATUS.MONTHLY_QUOTA) {
        return { ok: false, reason: 'MONTHLY_QUOTA', rate, limit: tier.monthlyQuota!, used: mu };
      }
      return { ok: true, rate };
    }
  }

  async #statusRedis(keyId: string, tier: Tier): Promise<QuotaStatus> {
    const { w, q } = this.#keys(keyId);
    for (let attempt = 1; ; attempt++) {
      const r = await this.#scripts.lrdsStatus(w, q, this.#nowArg(), tier.ratePerSecond);
      if (Number(r[0]) === STATUS.NEEDS_SEED) {
        if (attempt >= SEED_ATTEMPTS) throw new Error(`quota counters of ${keyId} could not be seeded`);
        await this.#seed(keyId, Number(r[4]));
        continue;
      }
      const nowMs = Number(r[3]) / 1000;
      const d = Number(r[4]);
      const today = Math.floor(nowMs / DAY_MS);
      const dayLive = d >= today;
      const storedMonth = monthOfDay(dayOfNumber(d));
      const currentMonth = monthOfDay(dayOfNumber(today));
      const monthLive = storedMonth >= currentMonth;
      const usage = {
        day: dayOfNumber(dayLive ? d : today),
        dayUsed: dayLive ? Number(r[5]) : 0,
        month: monthLive ? storedMonth : currentMonth,
        monthUsed: monthLive ? Number(r[6]) : 0,
      };
      const rate = { limit: tier.ratePerSecond, remaining: Number(r[1]), resetAt: Number(r[2]) / 1000 };
      return quotaStatus(usage, rate, nowMs);
    }
  }

  /** Rebuilds a key's missing quota hash from the store (one seed at a time per key). */
  #seed(keyId: string, dayNum: number): Promise<void> {
    let pending = this.#seeding.get(keyId);
    if (!pending) {
      pending = (async () => {
        await this.#merge(keyId, dayNum, '', { day: 0, n: 0, m: 0 });
      })();
      this.#seeding.set(keyId, pending);
      pending.finally(() => this.#seeding.delete(keyId)).catch(() => {});
    }
    return pending;
  }

  /**
   * Lower bounds of a key's counts for a day and its month: the store's totals plus this
   * instance's unflushed events (read with no flush in between), and the last counts Redis
   * reported here. Never throws: a failing store leaves the last reported counts.
   */
  async #floors(keyId: string, dayNum: number): Promise<{ du: number; mu: number }> {
    const day = dayOfNumber(dayNum);
    const month = monthOfDay(day);
    let du = 0;
    let mu = 0;
    try {
      const totals = await this.#exclusive(async () => {
        const stored = await this.#store.usageTotals(keyId, day);
        const own = this.#pendingFor(keyId, day);
        return { du: stored.dayUsed + own.n, mu: stored.monthUsed + own.m };
      });
      du = totals.du;
      mu = totals.mu;
    } catch (err) {
      this.#logger.warn(
        { err, keyId },
        'usage totals unreadable: quota counts rebuilt from the last known ones',
      );
    }
    const k = this.#known.get(keyId);
    if (k) {
      if (k.d === dayNum) du = Math.max(du, k.du);
      if (monthOfDay(dayOfNumber(k.d)) === month) mu = Math.max(mu, k.mu);
    }
    return { du, mu };
  }

  #remember(keyId: string, k: Known): void {
    if (this.#known.size >= KNOWN_MAX && !this.#known.has(keyId)) this.#known.clear();
    this.#known.set(keyId, k);
  }

  #rememberMerge(keyId: string, r: unknown[]): void {
    this.#remember(keyId, { d: Number(r[0]), du: Number(r[1]), mu: Number(r[2]), g: String(r[3]) });
  }

  #goDown(err: unknown): void {
    if (this.#mode !== 'redis') return;
    this.#mode = 'local';
    this.#wentDown = true;
    this.#local = null;
    if (!this.#closed) {
      this.#logger.warn(
        { err, instances: this.#instances },
        'Redis unreachable: limits and quotas enforced locally (rate / instances per key) until it is back',
      );
    }
  }

  /**
   * Adds the counts made locally to Redis, then lets Redis serve again. Runs when Redis is
   * ready and there is anything to do; any failure leaves it for the next probe.
   */
  async #reconcile(): Promise<void> {
    if (this.#reconciling || this.#closed || this.#redis.status !== 'ready') return;
    this.#reconciling = true;
    try {
      await this.#redis.ping();
      while (this.#outage.size > 0) {
        const batch = this.#outage;
        this.#outage = new Map();
        try {
          for (const [keyId, days] of batch) {
            for (const day of [...days.keys()].sort()) {
              await this.#applyOutage(keyId, day, days.get(day)!);
              days.delete(day);
            }
            batch.delete(keyId);
          }
        } catch (err) {
          this.#restoreOutage(batch);
          throw err;
        }
      }
      // Nothing left to add and no await since the check: Redis takes over from here.
      if (this.#mode === 'local' && !this.#closed) {
        this.#mode = 'redis';
        this.#local = null;
        // The first connection at start-up is not a recovery: only an outage is worth a warning.
        if (this.#wentDown) {
          this.#wentDown = false;
          this.#logger.warn(
            {},
            'Redis reachable again: local counts reconciled, limits and quotas back on Redis',
          );
        }
      }
    } catch {
      // Still unreachable: the probe tries again.
    } finally {
      this.#reconciling = false;
    }
  }

  async #applyOutage(keyId: string, day: string, delta: OutageDelta): Promise<void> {
    const dayNum = dayNumber(day);
    const gen = delta.uncertain ? '' : delta.gen;
    // If the call fails, it may have been applied: a retry merges floors only.
    delta.uncertain = true;
    await this.#merge(keyId, dayNum, gen, { day: dayNum, n: delta.n, m: delta.m });
  }

  /**
   * Merges the store's floors for `dayNum` into the key's quota hash and, when the hash is of
   * generation `gen`, adds `add` (counts made locally on `add.day`); remembers the result.
   */
  async #merge(
    keyId: string,
    dayNum: number,
    gen: string,
    add: { day: number; n: number; m: number },
  ): Promise<void> {
    const floors = await this.#floors(keyId, dayNum);
    const r = await this.#scripts.lrdsMerge(
      this.#keys(keyId).q,
      this.#nowArg(),
      dayNum,
      floors.du,
      floors.mu,
      newGeneration(),
      gen,
      add.day,
      add.n,
      add.m,
    );
    this.#rememberMerge(keyId, r);
  }

  #restoreOutage(batch: Map<string, Map<string, OutageDelta>>): void {
    for (const [keyId, days] of batch) {
      for (const [day, delta] of days) {
        const byDay = inner(this.#outage, keyId);
        const cur = byDay.get(day);
        if (!cur) byDay.set(day, delta);
        else {
          cur.n += delta.n;
          cur.m += delta.m;
          cur.uncertain ||= delta.uncertain || cur.gen !== delta.gen;
        }
      }
    }
  }

  // ---- local fallback ----

  async #admitLocal(req: AdmissionRequest): Promise<AdmissionResult> {
    const { keyId, tier } = req;
    const local = this.#localState();
    const nowMs = this.#clock ? this.#clock.now() : req.nowMs;
    if (req.counted) await this.#ensureLocalLoaded(local, keyId, nowMs);
    const rate = local.limiter.hit(keyId, this.#share(tier), nowMs);
    const state: RateState = { limit: rate.limit, remaining: rate.remaining, resetAt: rate.resetAt };
    if (!rate.ok) return { ok: false, reason: 'RATE_LIMITED', rate: state, retryAfterMs: rate.retryAfterMs };
    if (!req.counted) return { ok: true, rate: state };
    const q = local.quotas.consume(keyId, { daily: tier.dailyQuota, monthly: tier.monthlyQuota }, nowMs);
    this.#record(keyId, q.day, req.endpoint, q.countedMonthly);
    this.#addOutage(keyId, q.day, q.countedMonthly);
    if (q.ok) return { ok: true, rate: state };
    // Refused with 429: the request takes no slot of the window (D7).
    local.limiter.release(keyId);
    const after = local.limiter.peek(keyId, this.#share(tier), nowMs);
    return { ok: false, reason: q.reason, rate: after, limit: q.limit, used: q.used };
  }

  async #statusLocal(keyId: string, tier: Tier, nowMs: number): Promise<QuotaStatus> {
    const local = this.#localState();
    const now = this.#clock ? this.#clock.now() : nowMs;
    await this.#ensureLocalLoaded(local, keyId, now);
    return quotaStatus(
      local.quotas.usage(keyId, now),
      local.limiter.peek(keyId, this.#share(tier), now),
      now,
    );
  }

  #share(tier: Tier): number {
    return Math.ceil(tier.ratePerSecond / this.#instances);
  }

  #localState(): LocalState {
    this.#local ??= {
      limiter: new SlidingWindowLimiter(),
      quotas: new QuotaCounters(),
      loadedAt: new Map(),
      loading: new Map(),
    };
    return this.#local;
  }

  /** Seeds a key's local counters on first use in an outage, and refreshes them every second after. */
  async #ensureLocalLoaded(local: LocalState, keyId: string, nowMs: number): Promise<void> {
    const real = Date.now();
    if (local.quotas.has(keyId)) {
      const at = local.loadedAt.get(keyId) ?? 0;
      if (real - at >= OUTAGE_RELOAD_MS && !local.loading.has(keyId)) {
        local.loadedAt.set(keyId, real);
        this.#loadLocal(local, keyId, nowMs).catch((err) =>
          this.#logger.warn({ err, keyId }, 'reload failed'),
        );
      }
      return;
    }
    let pending = local.loading.get(keyId);
    if (!pending) {
      local.loadedAt.set(keyId, real);
      pending = this.#loadLocal(local, keyId, nowMs);
      local.loading.set(keyId, pending);
      pending.finally(() => local.loading.delete(keyId)).catch(() => {});
    }
    await pending;
  }

  async #loadLocal(local: LocalState, keyId: string, nowMs: number): Promise<void> {
    const dayNum = Math.floor(nowMs / DAY_MS);
    const floors = await this.#floors(keyId, dayNum);
    const day = dayOfNumber(dayNum);
    // load() keeps the larger count of a period, so a late or repeated load never lowers one.
    local.quotas.load(keyId, { day, dayUsed: floors.du, month: monthOfDay(day), monthUsed: floors.mu });
  }

  #addOutage(keyId: string, day: string, countedMonthly: boolean): void {
    const gen = this.#known.get(keyId)?.g ?? '';
    const byDay = inner(this.#outage, keyId);
    const delta = byDay.get(day);
    if (!delta) byDay.set(day, { n: 1, m: countedMonthly ? 1 : 0, gen, uncertain: false });
    else {
      delta.n++;
      if (countedMonthly) delta.m++;
      if (delta.gen !== gen) delta.uncertain = true;
    }
  }

  // ---- usage buffer ----

  #record(keyId: string, day: string, endpoint: string, countedMonthly: boolean): void {
    this.#buffer.push({ keyId, day, endpoint, countedMonthly });
    const byDay = inner(this.#pending, keyId);
    const p = byDay.get(day);
    if (p) {
      p.n++;
      if (countedMonthly) p.m++;
    } else byDay.set(day, { n: 1, m: countedMonthly ? 1 : 0 });
  }

  /** Unflushed events of a key: counted on `day`, and counted monthly in `day`'s month. */
  #pendingFor(keyId: string, day: string): { n: number; m: number } {
    const byDay = this.#pending.get(keyId);
    if (!byDay) return { n: 0, m: 0 };
    const month = monthOfDay(day);
    let m = 0;
    for (const [d, p] of byDay) if (monthOfDay(d) === month) m += p.m;
    return { n: byDay.get(day)?.n ?? 0, m };
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn);
    this.#chain = run.catch(() => {});
    return run;
  }

  async #flushOnce(): Promise<void> {
    if (this.#buffer.length === 0) return;
    const batch = this.#buffer;
    this.#buffer = [];
    try {
      await this.#store.recordUsage(batch);
    } catch (err) {
      this.#buffer = batch.concat(this.#buffer);
      this.#logger.warn({ err, events: this.#buffer.length }, 'usage events not written to the store yet');
      return;
    }
    for (const e of batch) {
      const byDay = this.#pending.get(e.keyId)!;
      const p = byDay.get(e.day)!;
      p.n--;
      if (e.countedMonthly) p.m--;
      if (p.n === 0) byDay.delete(e.day);
      if (byDay.size === 0) this.#pending.delete(e.keyId);
    }
  }
}
