import { randomBytes } from 'node:crypto';
import { Redis, ReplyError } from 'ioredis';
import { type Clock, systemClock } from '../domain/clock.ts';
import { DAY_MS, dayStartMs, monthOfDay, utcDay } from '../domain/periods.ts';
import type { ReservedUsage, UsageEvent, UsageReservation } from '../domain/records/usage.ts';
import { redisCall, timed } from '../metrics.ts';
import type { UsageStore } from '../store/ports/usage.ts';
import { newUsageBatchId } from '../store/usage.ts';
import {
  type Admission,
  type AdmissionRequest,
  type AdmissionResult,
  accountQuotaOf,
  type QuotaStatus,
  quotaStatus,
} from './admission.ts';
import { QuotaCounters } from './quota.ts';
import {
  ADMIT_LUA,
  LEASE_LUA,
  MERGE_LUA,
  PUSH_LUA,
  SETTLE_LUA,
  STATUS,
  STATUS_LUA,
} from './redis-scripts.ts';
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
  store: UsageStore;
  /** Prefix of every Redis key. Default `lrds:`. */
  prefix?: string;
  /**
   * Tests only. Without it (production) the time of the window and of the UTC day is Redis's
   * own `TIME`, read inside the script, so hosts with skewed clocks share one window, and this
   * process's system clock is used only while Redis is unreachable. With it, `clock.now()` is
   * passed to the scripts instead and used locally, so a test can move time; idle window keys
   * then expire after 60 s of real time instead of 1 s, as the injected time has no relation
   * to Redis's.
   */
  clock?: Clock;
  /**
   * How many instances share the traffic, on every host (set by the operator; default 1).
   * While Redis is unreachable each instance admits floor(rate / instances) per key on its
   * own; with more than one, Redis keeps that share free for every instance not heard from.
   */
  instances?: number;
  /** Usage events are written to the store in batches this often (ms). Default 100. */
  flushIntervalMs?: number;
  /** A Redis command not answered within this many ms fails and the request is served locally. Default 300. */
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

/** The fallback counters of one outage (for the dashboard, and for quotas if the store fails too). */
interface LocalState {
  quotas: QuotaCounters;
  /** The store refused a reservation (warned once per outage). */
  warned: boolean;
  /** Real time (ms) each key's counts were last loaded. */
  loadedAt: Map<string, number>;
  loading: Map<string, Promise<void>>;
}

interface ScriptedRedis {
  lrdsAdmit(
    window: string,
    quota: string,
    leases: string,
    inStore: string,
    account: string,
    nowUs: string,
    rate: number,
    counted: string,
    daily: number,
    monthly: number,
    windowTtlMs: number,
    instances: number,
    token: string,
    tokenMs: number,
    inStoreTtlMs: number,
    mayWait: string,
    storeAfterRedisMs: number,
    accountDaily: string,
    accountMonthly: number,
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
  lrdsStatus(
    window: string,
    quota: string,
    leases: string,
    nowUs: string,
    rate: number,
    instances: number,
  ): Promise<unknown[]>;
  lrdsLease(leases: string, nowUs: string, id: string, deadlineUs: string, leaseUs: number): Promise<unknown>;
  lrdsPush(window: string, nowUs: string, windowTtlMs: number, ...memberAges: string[]): Promise<unknown>;
  lrdsSettle(
    quota: string,
    window: string,
    inStore: string,
    nowUs: string,
    token: string,
    member: string,
    gen: string,
    day: number,
    dayUsed: number,
    monthUsed: number,
    newGen: string,
    floorDayUsed: number,
    floorMonthUsed: number,
  ): Promise<unknown[]>;
}

/** A counted request waiting for its reservation in the store (local fallback). */
interface PendingReservation {
  r: UsageReservation;
  resolve: (u: ReservedUsage) => void;
  reject: (err: unknown) => void;
}

/** Usage events and the id they are written under, on every attempt (Store.recordUsage). */
interface UsageBatch {
  id: string;
  events: UsageEvent[];
}

/** The quota decision of a request admitted locally. */
type LocalQuota = (
  | { ok: true; day: string; countedMonthly: true }
  | {
      ok: false;
      reason: 'DAILY_QUOTA' | 'MONTHLY_QUOTA';
      /** The account bound refused it (limit and used are the account's). */
      byAccount?: true;
      limit: number;
      used: number;
      day: string;
      countedMonthly: boolean;
    }
) & {
  /** The key's counts of `day` and its month after the request, as the deciding side knows them. */
  after: { du: number; mu: number };
};

/** Known counts kept for at most this many keys (then forgotten: only the exactness of a reconciliation suffers). */
const KNOWN_MAX = 100_000;
/** During an outage, a key's local counts are refreshed from the store this often (ms). */
const OUTAGE_RELOAD_MS = 1000;
/** While unreachable or with counts to reconcile, Redis is probed this often (ms). */
const PROBE_MS = 200;
const SEED_ATTEMPTS = 3;
/**
 * A quota decision the store makes for a request Redis admitted (STATUS.IN_STORE) holds the
 * key's quotas in the store until it is settled in Redis, or at most this long (ms; the store's
 * calls are bounded well below it).
 */
const IN_STORE_MS = 5000;
/**
 * The store decides a key's quota only this long (ms) after Redis last decided one of its
 * counted requests: the counts Redis decided are in the instances' usage buffers until their
 * next flush (flushIntervalMs + one store write), and a store decision must see them all.
 */
const IN_STORE_AFTER_REDIS_MS = 1000;
/**
 * Once every instance is back on Redis, a request to a key whose decisions made in the store
 * are still being added to Redis waits for them (polling this often, ms), at most this long
 * (ms) before it is decided in the store too.
 */
const SETTLING_POLL_MS = 5;
const SETTLING_WAIT_MS = 200;
/** Keys whose outage counts are added to Redis together (one store turn, one burst of merges). */
const MERGE_CHUNK = 64;
/**
 * How long a switch back to Redis waits for the local admissions under way (ms): beyond the
 * store's call deadline, so a slow store delays the switch instead of calling it off.
 */
const SWITCH_WAIT_MS = 5000;
/** With more than one instance, each renews its lease this often while it serves through Redis (ms). */
const LEASE_RENEW_MS = 100;
/** A lease ends this long after its renewal was sent, at the latest (ms). */
const LEASE_MS = 500;

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
 * per account bound (an account's keys of one tier; see QuotaCounters.consume):
 *   `<prefix>a:{account:<accountId>:<tier>}` HASH { g, d, du, mu }, rolled over and expiring like a
 *       key's; decided in the same admit script as the key's quotas, seeded from the store's
 *       account totals (Store.accountUsageTotals) when missing (NEEDS_ACCOUNT_SEED). Requests
 *       whose quotas the store decides (Redis unreachable, or an instance handing over, below)
 *       are held to the bound there (Store.reserveUsage, with the account's totals); their counts
 *       join the account hash only when it is next rebuilt from the store.
 * and one for the deployment: `<prefix>instances` ZSET of instance leases (with N > 1; read by
 * every admit, so the scripts need one Redis, not a cluster).
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
 * requests are served by a local sliding window, each of the N instances (`instances`)
 * admitting at most s = floor(rate / N) per key in any 1,000 ms, and quotas are decided by the
 * store (Store.reserveUsage: counted and decided in one transaction per batch, per-key locked,
 * so all instances together never pass a quota). Guarantee, across all instances and both
 * transitions: never more than `rate` admissions of a key in any 1,000 ms. Why:
 * - Leases (N > 1). Serving through Redis, an instance renews a lease in Redis every
 *   LEASE_RENEW_MS; the lease ends at most LEASE_MS after the renewal was sent, by the
 *   instance's clock (LEASE_LUA). For every instance without a live lease the admit script
 *   keeps s of the window free. An instance admits locally only from LEASE_MS + 1,000 ms after
 *   its last renewal was sent: every Redis admission of the 1,000 ms before kept room for it.
 *   So a window holds at most: the Redis entries (<= rate - s * instances without lease) plus
 *   s per instance without a lease (its local admissions) = rate. With Redis gone for all, the
 *   same wait covers what the others admitted through Redis just before (this instance cannot
 *   see it): a failover costs every key up to 1.5 s of 429s.
 * - One instance (N = 1): it knows every admission. Those made through Redis are also recorded
 *   in the local window (at the reply's arrival, never earlier than the admission), so at a
 *   failover the local window already holds the last second. Except the calls still open: an
 *   admit queued in a stalled Redis may still be run there and answered after the failover
 *   (within `commandTimeoutMs` of its sending). So local admissions start only once every admit
 *   call sent to Redis has settled (answered, and recorded, or failed); requests meanwhile get
 *   429s (retry after the last open call's timeout).
 * - Back on Redis: no earlier than 1,000 ms after the outage began (an empty Redis restarted
 *   within the second knows nothing of what the old one admitted), nor, when the Redis reached
 *   is another run than the one last reached (its `run_id`, read once per connection: restarted
 *   or replaced), earlier than 1,000 ms after that was first seen: the other instances may have
 *   admitted through the old one until it went, and an instance already local then would
 *   otherwise switch at once, blind to those admissions. Then local admissions stop, the
 *   outage's quota counts are added (below), this instance's local admissions of the last
 *   second are pushed into the keys' windows (PUSH_LUA, by age, so never earlier than they
 *   happened), and only then is the lease renewed and Redis trusted again. Requests arriving
 *   meanwhile wait those few round trips. An instance still serving locally has no lease, so
 *   Redis keeps its share free until it has pushed its own admissions in turn.
 * - A tier whose rate is below N gets s = 0: it is refused while Redis is unreachable, because
 *   an instance cannot know what the others admit.
 * - At start-up, with Redis unreachable, local admissions wait 1,000 ms (+ LEASE_MS with N > 1):
 *   a process restarted in place of another must not add to what that one admitted.
 * The price of leases: while an instance is gone (restarting, stopped, cut off), every key's
 * rate through Redis is lower by s; N must be the number of instances actually running.
 * Assumptions: at most N instances; clocks that tick at the same rate (their offsets do not
 * matter); and a store reachable within the first second of an outage (so the others' last
 * batches of counts are written before local admissions start). If the store is unreachable
 * too, quotas fall back to this instance's counters (the store's last totals, the last counts
 * Redis reported, its own), and may be passed by what the other instances admit meanwhile.
 *
 * Quotas have one decider at a time per key, so that no quota is passed across the hand-overs:
 * - The store decides while any instance may be deciding there: with N > 1, whenever an
 *   instance has no live lease (it serves locally, is cut off, restarting or gone), the admit
 *   script sends every counted request it admits to the store (STATUS.IN_STORE) with a token
 *   in the key's `<prefix>s:{<keyId>}` ZSET; the instance reserves it there (the same batched
 *   reserveUsage as the local fallback), then settles it in Redis (SETTLE_LUA: count added,
 *   token removed, slot given back if refused). An instance back first thus never decides in
 *   Redis while another still decides in the store (each blind to the other's last counts).
 * - Redis decides again only once every lease is live and no token is left: every decision
 *   made in the store is in Redis by then. A request finding only tokens waits for them (up to
 *   SETTLING_WAIT_MS; then it goes to the store too), so a busy key gets back to Redis. A token
 *   whose instance died ends at its deadline (IN_STORE_MS); one whose settle failed is removed
 *   by its instance when it is back, after its count.
 * - The store decides only once it holds every count Redis decided: those wait in the
 *   instances' usage buffers until the next flush, so a key's first decision in the store waits
 *   until IN_STORE_AFTER_REDIS_MS after Redis last decided one of its requests (only when a
 *   lease lapsed moments ago: an instance lost Redis, or a renewal timed out under load).
 * - Counts decided without Redis are added to it exactly once: an increment applies only to a
 *   hash of the generation read before the request was counted (a hash built later, from the
 *   store, may already hold it), and any merge that raises a count to a floor read from the
 *   store gives the hash a new generation (the floor may hold counts whose increments are on
 *   their way: those then merge as floors too). Floors are the store's totals plus this
 *   instance's unflushed events; while the store decides, every count is in the store, so a
 *   floor misses nothing (the assumption above: counts decided by Redis just before are
 *   written within the second).
 * - Back on Redis after an outage: the outage's counts are added before the switch (one pass,
 *   as local admissions go on), then, local admissions stopped, those counted meanwhile; the
 *   local admissions under way are waited for (up to SWITCH_WAIT_MS: a slow store delays the
 *   switch, never calls it off), so the switch ends under steady load too.
 * The price: while an instance is gone, every counted request is a store transaction (one per
 * batch, one batch at a time per instance), as during an outage.
 */
export class RedisAdmission implements Admission {
  readonly backend = 'redis' as const;
  readonly #redis: Redis;
  readonly #scripts: ScriptedRedis;
  readonly #store: UsageStore;
  readonly #prefix: string;
  readonly #clock: Clock | null;
  readonly #instances: number;
  readonly #windowTtlMs: number;
  readonly #logger: WarnLogger;
  readonly #timers: NodeJS.Timeout[];
  /** Local time: the test clock, else this process's monotonic sub-millisecond clock. */
  readonly #time: Clock;
  /** This instance's lease member. */
  readonly #id = randomBytes(9).toString('base64url');
  /** Numbers this instance's requests (tokens of quota decisions made in the store). */
  #tokens = 0;
  readonly #leasesKey: string;
  /**
   * This instance's own admissions of the last second, per key: every local one, and (one
   * instance only) every one made through Redis. The local limiter of the fallback.
   */
  readonly #own = new SlidingWindowLimiter();
  /** Local time the newest lease renewal was sent (whether or not it arrived). */
  #leaseSentAt = Number.NEGATIVE_INFINITY;
  #renewing = false;
  /** A lower bound of (Redis time - local time), ms; null until measured. */
  #offsetMs: number | null = null;
  /** No local admission before this local time (start-up). */
  readonly #localFrom: number;
  /** After an outage, Redis is trusted again from this local time on. */
  #returnAt = 0;
  /** Connections made to Redis ('ready' events); #checkRun reads the run id once for each. */
  #connections = 0;
  /** The connection whose Redis run id has been read (see #checkRun). */
  #checkedConnection = 0;
  /** The run id of the Redis last reached; null until one was read. */
  #runId: string | null = null;
  /**
   * Admit calls sent to Redis and not settled yet, each with the local time by which it times
   * out: with one instance, local admissions wait for them (see the class comment).
   */
  readonly #admitsOpen = new Map<number, number>();
  #admitCalls = 0;
  readonly #commandTimeoutMs: number;
  /** While switching back to Redis: local admissions wait for it. */
  #switching: Promise<void> | null = null;
  /** Local admissions under way (the switch waits for them). */
  #inFlight = 0;
  #settled: (() => void)[] = [];
  #reservations: PendingReservation[] = [];
  #reserveState: 'idle' | 'scheduled' | 'running' = 'idle';

  #mode: 'redis' | 'local' = 'local';
  #closed = false;
  #local: LocalState | null = null;
  /** Set when Redis was lost after having served: its return is then logged. */
  #wentDown = false;
  #reconciling = false;
  readonly #known = new Map<string, Known>();
  readonly #seeding = new Map<string, Promise<void>>();
  /** The keys this instance counted for each account bound (their unflushed events join its seed). */
  readonly #accountKeys = new Map<string, Set<string>>();
  /**
   * The account counters each key last counted toward: a key moved to another account, or to
   * another tier, makes both counters be rebuilt from the store (which states the move), so its
   * use leaves the old account and joins the new one.
   */
  readonly #keyAccount = new Map<string, string>();
  /** Account counters whose requests the store decided (an outage): raised to the store's once back. */
  readonly #decidedInStore = new Map<string, { accountId: string; tier: Tier; hash: string }>();
  #outage = new Map<string, Map<string, OutageDelta>>();
  /**
   * Tokens of quota decisions in the store (see #admitInStore) that this instance may have left
   * in Redis, a call having failed, per key: removed once their counts are in Redis, so that
   * they do not keep the key's quotas in the store until their deadline.
   */
  readonly #unsettled = new Map<string, Map<string, true>>();

  #buffer: UsageEvent[] = [];
  /**
   * Batches written before the buffer, each as itself (its id), since a failed write may have
   * been applied: ones whose write failed, and the local counts of a failed reservation.
   */
  #batches: UsageBatch[] = [];
  /** Requests of a failed reservation: the batch (the reservation's id) their local counts go to. */
  readonly #unsure = new WeakMap<UsageReservation, { batch: UsageBatch; waiting: number }>();
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
    this.#time = this.#clock ?? systemClock();
    this.#leasesKey = `${this.#prefix}instances`;
    this.#localFrom = this.#time.now() + WINDOW_MS + (this.#instances > 1 ? LEASE_MS : 0);
    this.#commandTimeoutMs = options.commandTimeoutMs ?? 300;

    this.#redis = new Redis(options.url, {
      commandTimeout: this.#commandTimeoutMs,
      connectTimeout: 1000,
      // Lets a closed instance's process exit at once when Redis was unreachable.
      disconnectTimeout: 200,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      // Reconnects soon after Redis is back (a refused connection costs nothing to retry).
      retryStrategy: (times) => Math.min(50 * times, 200),
    });
    this.#redis.defineCommand('lrdsAdmit', { numberOfKeys: 5, lua: ADMIT_LUA });
    this.#redis.defineCommand('lrdsMerge', { numberOfKeys: 1, lua: MERGE_LUA });
    this.#redis.defineCommand('lrdsStatus', { numberOfKeys: 3, lua: STATUS_LUA });
    this.#redis.defineCommand('lrdsLease', { numberOfKeys: 1, lua: LEASE_LUA });
    this.#redis.defineCommand('lrdsPush', { numberOfKeys: 1, lua: PUSH_LUA });
    this.#redis.defineCommand('lrdsSettle', { numberOfKeys: 3, lua: SETTLE_LUA });
    this.#scripts = this.#redis as unknown as ScriptedRedis;
    this.#redis.on('error', (err) => this.#goDown(err));
    this.#redis.on('close', () => this.#goDown(new Error('connection to Redis closed')));
    this.#redis.on('ready', () => {
      this.#connections++;
      void this.#reconcile();
    });

    this.#timers = [
      setInterval(() => void this.flush(), options.flushIntervalMs ?? 100),
      setInterval(() => {
        if (this.#mode === 'local' || this.#outage.size > 0 || this.#unsettled.size > 0)
          void this.#reconcile();
      }, PROBE_MS),
      setInterval(() => {
        if (this.#instances > 1 && this.#mode === 'redis' && !this.#renewing && !this.#closed) {
          this.#renew().catch((err) => this.#goDown(err));
        }
      }, LEASE_RENEW_MS),
    ];
    for (const t of this.#timers) t.unref();
  }

  /** 'up' while Redis serves the requests; 'down' while the local fallback does (for /health). */
  state(): 'up' | 'down' {
    return this.#mode === 'redis' ? 'up' : 'down';
  }

  /** Resolves true once Redis serves requests, false if it does not within `timeoutMs`. */
  async ready(timeoutMs = 2000): Promise<boolean> {
    const end = performance.now() + timeoutMs;
    while (this.#mode !== 'redis') {
      if (this.#closed || performance.now() >= end) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return true;
  }

  async admit(req: AdmissionRequest): Promise<AdmissionResult> {
    for (;;) {
      if (this.#mode === 'redis') {
        try {
          return await this.#admitRedis(req);
        } catch (err) {
          this.#goDown(err);
        }
      }
      if (!this.#switching) return this.#admitLocal(req);
      await this.#switching;
    }
  }

  /** `_nowMs` is ignored: Redis's time, or while it is unreachable this instance's clock, is the time. */
  async status(keyId: string, tier: Tier, _nowMs: number): Promise<QuotaStatus> {
    if (this.#mode === 'redis') {
      try {
        return await this.#statusRedis(keyId, tier);
      } catch (err) {
        this.#goDown(err);
      }
    }
    return this.#statusLocal(keyId, tier);
  }

  /** Writes the buffered usage events to the store (also runs every flushIntervalMs). */
  flush(): Promise<void> {
    return this.#exclusive(async () => {
      await this.#flushOnce();
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    if (this.#instances > 1 && this.#mode === 'redis') {
      await timed(redisCall('zrem'), performance.now(), this.#redis.zrem(this.#leasesKey, this.#id)).catch(
        () => {},
      );
    }
    await this.flush();
    if (this.#unwritten() > 0) {
      this.#logger.warn({ events: this.#unwritten() }, 'usage events could not be written to the store');
    }
    try {
      await this.#redis.quit();
    } catch {
      this.#redis.disconnect();
    }
  }

  // ---- Redis path ----

  #keys(keyId: string): { w: string; q: string; s: string } {
    return {
      w: `${this.#prefix}w:{${keyId}}`,
      q: `${this.#prefix}q:{${keyId}}`,
      s: `${this.#prefix}s:{${keyId}}`,
    };
  }

  /** The `now` argument of the scripts: '' = Redis TIME. */
  #nowArg(): string {
    return this.#clock ? String(Math.round(this.#clock.now() * 1000)) : '';
  }

  async #admitRedis(req: AdmissionRequest): Promise<AdmissionResult> {
    const { keyId, tier } = req;
    const { w, q, s } = this.#keys(keyId);
    // The account bound: decided in the same script, on the account's own hash.
    const account = req.counted ? accountQuotaOf(req) : undefined;
    const a = account ? `${this.#prefix}a:{${account.id}}` : `${this.#prefix}a:{}`;
    if (account) {
      let keys = this.#accountKeys.get(account.id);
      if (!keys) {
        if (this.#accountKeys.size >= KNOWN_MAX) this.#accountKeys.clear();
        keys = new Set();
        this.#accountKeys.set(account.id, keys);
      }
      keys.add(keyId);
      const before = this.#keyAccount.get(keyId);
      if (before !== account.id) {
        if (this.#keyAccount.size >= KNOWN_MAX) this.#keyAccount.clear();
        this.#keyAccount.set(keyId, account.id);
        if (before !== undefined) {
          this.#accountKeys.get(before)?.delete(keyId);
          await this.#redis.del(`${this.#prefix}a:{${before}}`, a);
        }
      }
    }
    const token = `${this.#id}.${++this.#tokens}`;
    const waitUntil = performance.now() + SETTLING_WAIT_MS;
    for (let seeds = 0; ; ) {
      // Lost meanwhile (a retry after a seed or a wait): nothing more is sent to Redis.
      if (this.#mode !== 'redis') throw new Error('Redis lost during the request');
      const call = ++this.#admitCalls;
      this.#admitsOpen.set(call, this.#time.now() + this.#commandTimeoutMs);
      let r: unknown[];
      try {
        r = await timed(
          redisCall('admit'),
          performance.now(),
          this.#scripts.lrdsAdmit(
            w,
            q,
            this.#leasesKey,
            s,
            a,
            this.#nowArg(),
            tier.ratePerSecond,
            req.counted ? '1' : '0',
            tier.dailyQuota ?? -1,
            tier.monthlyQuota ?? -1,
            this.#windowTtlMs,
            this.#instances,
            token,
            IN_STORE_MS,
            this.#clock ? 60_000 : IN_STORE_MS + IN_STORE_AFTER_REDIS_MS + 1000,
            performance.now() < waitUntil ? '1' : '0',
            IN_STORE_AFTER_REDIS_MS,
            account ? String(account.limits.daily ?? -1) : '',
            account?.limits.monthly ?? -1,
          ),
        ).catch((err: unknown) => {
          // Its token may have joined the key's decisions under way: removed once back.
          if (req.counted && this.#instances > 1) inner(this.#unsettled, keyId).set(token, true);
          throw err;
        });
      } finally {
        // Settled: an admission it made is recorded in #own below, before any other task runs.
        this.#admitsOpen.delete(call);
      }
      const status = Number(r[0]);
      if (status === STATUS.NEEDS_SEED) {
        if (++seeds >= SEED_ATTEMPTS) throw new Error(`quota counters of ${keyId} could not be seeded`);
        await this.#seed(keyId, Number(r[5]));
        continue;
      }
      if (status === STATUS.NEEDS_ACCOUNT_SEED && account) {
        if (++seeds >= SEED_ATTEMPTS) throw new Error(`quota counters of ${account.id} could not be seeded`);
        await this.#seedAccount(req.accountId!, tier, account.id, a, Number(r[5]));
        continue;
      }
      if (status === STATUS.SETTLING) {
        await new Promise((resolve) => setTimeout(resolve, SETTLING_POLL_MS));
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
      if (status === STATUS.IN_STORE) return this.#admitInStore(req, r, token, rate);
      // One instance: its own admissions of the last second seed the fallback at a failover.
      if (this.#instances === 1 && (status === STATUS.OK || !req.counted)) {
        this.#own.record(keyId, tier.ratePerSecond, this.#time.now());
      }
      if (!req.counted) return { ok: true, rate };
      const d = Number(r[5]);
      const du = Number(r[6]);
      const mu = Number(r[7]);
      this.#remember(keyId, { g: String(r[8]), d, du, mu });
      this.#record(keyId, dayOfNumber(d), req.endpoint, status !== STATUS.DAILY_QUOTA);
      const byAccount = String(r[9]) === 'a' && account !== undefined;
      if (status === STATUS.DAILY_QUOTA) {
        return {
          ok: false,
          reason: 'DAILY_QUOTA',
          ...(byAccount ? { scope: 'account' as const } : {}),
          rate,
          limit: byAccount ? account.limits.daily! : tier.dailyQuota!,
          used: byAccount ? Number(r[10]) : du,
          counts: { dayUsed: du, monthUsed: mu },
        };
      }
      if (status === STATUS.MONTHLY_QUOTA) {
        return {
          ok: false,
          reason: 'MONTHLY_QUOTA',
          ...(byAccount ? { scope: 'account' as const } : {}),
          rate,
          limit: byAccount ? account.limits.monthly! : tier.monthlyQuota!,
          used: byAccount ? Number(r[11]) : mu,
          counts: { dayUsed: du, monthUsed: mu },
        };
      }
      return { ok: true, rate, counts: { dayUsed: du, monthUsed: mu } };
    }
  }

  /**
   * A counted request the window admitted while the quotas are the store's to decide (see
   * ADMIT_LUA): decided by the store like a local one, then settled in Redis (its count added,
   * its token removed, its slot given back if refused). If the settle fails, Redis is treated
   * as lost, and the count goes to the next reconciliation as floors (the settle may have been
   * applied; the store or this instance's buffer holds the request).
   */
  async #admitInStore(
    req: AdmissionRequest,
    r: unknown[],
    token: string,
    rate: RateState,
  ): Promise<AdmissionResult> {
    const { keyId } = req;
    const { w, q: quotaKey, s } = this.#keys(keyId);
    const gen = String(r[8]);
    const member = String(r[9]);
    // Decided by Redis moments ago (a lease just lapsed): wait for those counts to be written.
    // At most the full wait, whatever Redis's clock did (its token's deadline includes the wait).
    const waitMs = Math.min(
      IN_STORE_AFTER_REDIS_MS,
      (Number(r[10]) - Number(r[4])) / 1000 + IN_STORE_AFTER_REDIS_MS,
    );
    if (waitMs > 0) await this.#waitFor(waitMs);
    const q = await this.#quotaLocal(req, Number(r[4]) / 1000);
    const account = req.counted ? accountQuotaOf(req) : undefined;
    if (account && req.accountId !== undefined)
      this.#decidedInStore.set(account.id, {
        accountId: req.accountId,
        tier: req.tier,
        hash: `${this.#prefix}a:{${account.id}}`,
      });
    try {
      const settled = await timed(
        redisCall('settle'),
        performance.now(),
        this.#scripts.lrdsSettle(
          quotaKey,
          w,
          s,
          this.#nowArg(),
          token,
          q.ok ? '' : member,
          gen,
          dayNumber(q.day),
          1,
          q.countedMonthly ? 1 : 0,
          newGeneration(),
          q.after.du,
          q.after.mu,
        ),
      );
      if (String(settled[3]) !== '') this.#rememberMerge(keyId, settled);
    } catch (err) {
      this.#addOutage(keyId, q.day, q.countedMonthly, '');
      inner(this.#unsettled, keyId).set(token, true);
      this.#goDown(err);
    }
    const counts = { dayUsed: q.after.du, monthUsed: q.after.mu };
    if (q.ok) return { ok: true, rate, counts };
    const after = { ...rate, remaining: rate.remaining + 1 };
    const scope = q.byAccount ? { scope: 'account' as const } : {};
    return { ok: false, reason: q.reason, ...scope, rate: after, limit: q.limit, used: q.used, counts };
  }

  /** Waits `ms` of real time; with an injected clock, until it has advanced by `ms` (tests move it). */
  async #waitFor(ms: number): Promise<void> {
    if (!this.#clock) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return;
    }
    const end = this.#time.now() + ms;
    for (let left = ms; left > 0; left = end - this.#time.now()) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, 20)));
    }
  }

  async #statusRedis(keyId: string, tier: Tier): Promise<QuotaStatus> {
    const { w, q } = this.#keys(keyId);
    for (let attempt = 1; ; attempt++) {
      const r = await timed(
        redisCall('status'),
        performance.now(),
        this.#scripts.lrdsStatus(w, q, this.#leasesKey, this.#nowArg(), tier.ratePerSecond, this.#instances),
      );
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
   * Builds an account bound's missing hash (one seed at a time per account): the store's totals
   * of the account's keys of the tier, plus this instance's unflushed events of the keys it saw
   * in the account (read with no flush in between), merged as floors (by maximum, so concurrent
   * seeds never add up). The unflushed events of a key past its own quota do not belong to the
   * account's count; adding them errs toward refusing, and only until they are flushed.
   */
  #seedAccount(accountId: string, tier: Tier, id: string, hashKey: string, dayNum: number): Promise<void> {
    let pending = this.#seeding.get(id);
    if (!pending) {
      pending = (async () => {
        const day = dayOfNumber(dayNum);
        const floors = await this.#exclusive(async () => {
          const stored = await this.#store.accountUsageTotals({ accountId, tier: tier.id }, day, {
            daily: tier.dailyQuota,
            monthly: tier.monthlyQuota,
          });
          let { dayUsed: du, monthUsed: mu } = stored;
          for (const keyId of this.#accountKeys.get(id) ?? []) {
            const own = this.#pendingFor(keyId, day);
            du += own.n;
            mu += own.m;
          }
          return { du, mu };
        });
        await this.#scripts.lrdsMerge(
          hashKey,
          this.#nowArg(),
          dayNum,
          floors.du,
          floors.mu,
          newGeneration(),
          '',
          0,
          0,
          0,
        );
      })();
      this.#seeding.set(id, pending);
      pending.finally(() => this.#seeding.delete(id)).catch(() => {});
    }
    return pending;
  }

  /**
   * The account counters whose requests the store decided while Redis could not: raised to the
   * store's counts (and this instance's unflushed ones) as floors, so what was admitted meanwhile
   * counts toward the account in Redis too. A failure leaves them for the next return.
   */
  async #raiseDecidedInStore(): Promise<void> {
    const day = dayNumber(utcDay(this.#time.now()));
    for (const [id, { accountId, tier, hash }] of [...this.#decidedInStore]) {
      try {
        await this.#seedAccount(accountId, tier, id, hash, day);
        this.#decidedInStore.delete(id);
      } catch {
        return; // kept for the next return to Redis
      }
    }
  }

  /**
   * Lower bounds of a key's counts for a day and its month: the store's totals plus this
   * instance's unflushed events (read with no flush in between), and the last counts Redis
   * reported here. Never throws: a failing store leaves the last reported counts.
   */
  async #floors(keyId: string, dayNum: number): Promise<{ du: number; mu: number }> {
    return (await this.#floorsOf([{ keyId, dayNum }]))[0]!;
  }

  /** #floors of several keys, read in one turn of the store queue (in parallel). */
  async #floorsOf(items: { keyId: string; dayNum: number }[]): Promise<{ du: number; mu: number }[]> {
    const read = await this.#exclusive(async () => {
      const stored = await Promise.allSettled(
        items.map(({ keyId, dayNum }) => this.#store.usageTotals(keyId, dayOfNumber(dayNum))),
      );
      // After every read and with no flush in between: each unflushed event is counted once.
      return stored.map((x, i) => {
        if (x.status === 'rejected') return x;
        const { keyId, dayNum } = items[i]!;
        const own = this.#pendingFor(keyId, dayOfNumber(dayNum));
        return { du: x.value.dayUsed + own.n, mu: x.value.monthUsed + own.m };
      });
    });
    return read.map((x, i) => {
      const { keyId, dayNum } = items[i]!;
      let du = 0;
      let mu = 0;
      if ('status' in x) {
        this.#logger.warn(
          { err: x.reason, keyId },
          'usage totals unreadable: quota counts rebuilt from the last known ones',
        );
      } else ({ du, mu } = x);
      const k = this.#known.get(keyId);
      if (k) {
        if (k.d === dayNum) du = Math.max(du, k.du);
        if (monthOfDay(dayOfNumber(k.d)) === monthOfDay(dayOfNumber(dayNum))) mu = Math.max(mu, k.mu);
      }
      return { du, mu };
    });
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
    this.#returnAt = this.#time.now() + WINDOW_MS;
    if (!this.#closed) {
      this.#logger.warn(
        { err, instances: this.#instances },
        'Redis unreachable: limits enforced locally (floor(rate / instances) per key), quotas in the store, until it is back',
      );
    }
  }

  /** Renews this instance's lease (see LEASE_LUA); measures the clock offset first if needed. */
  async #renew(): Promise<void> {
    this.#renewing = true;
    try {
      if (this.#offsetMs === null) {
        if (this.#clock) this.#offsetMs = 0;
        else {
          const [sec, usec] = await timed(redisCall('time'), performance.now(), this.#redis.time());
          this.#offsetMs = Number(sec) * 1000 + Number(usec) / 1000 - this.#time.now();
        }
      }
      const sent = this.#time.now();
      if (sent > this.#leaseSentAt) this.#leaseSentAt = sent;
      const deadlineUs = Math.floor((sent + this.#offsetMs + LEASE_MS) * 1000);
      const now = Number(
        await timed(
          redisCall('lease'),
          performance.now(),
          this.#scripts.lrdsLease(
            this.#leasesKey,
            this.#nowArg(),
            this.#id,
            String(deadlineUs),
            LEASE_MS * 1000,
          ),
        ),
      );
      // Redis ran it before the reply arrived: its time minus the arrival is a lower bound.
      if (!this.#clock) this.#offsetMs = now / 1000 - this.#time.now();
    } finally {
      this.#renewing = false;
    }
  }

  /**
   * Once per connection, reads the run id of the Redis reached (INFO server). Another run than
   * the one last reached (restarted, or replaced) is not trusted before 1,000 ms after this was
   * seen: the other instances may have admitted through the old one until it went (this
   * instance's own admissions through it were all answered before, and are in #own with one
   * instance). An unreadable run id (INFO refused) counts as another run on every reconnection.
   * Throws if Redis fails (the next probe reads it again).
   */
  async #checkRun(): Promise<void> {
    const connection = this.#connections;
    if (connection === this.#checkedConnection) return;
    let runId = '';
    try {
      const info = await timed(redisCall('info'), performance.now(), this.#redis.info('server'));
      runId = /^run_id:(\w+)/m.exec(info)?.[1] ?? '';
    } catch (err) {
      if (!(err instanceof ReplyError)) throw err;
    }
    if (this.#runId !== null && (runId === '' || runId !== this.#runId)) {
      this.#goDown(new Error('Redis restarted'));
      this.#returnAt = Math.max(this.#returnAt, this.#time.now() + WINDOW_MS);
    }
    this.#runId = runId;
    this.#checkedConnection = connection;
  }

  /**
   * Adds the counts made locally to Redis, then lets Redis serve again. Runs when Redis is
   * ready and there is anything to do; any failure leaves it for the next probe.
   */
  async #reconcile(): Promise<void> {
    if (this.#reconciling || this.#closed || this.#redis.status !== 'ready') return;
    this.#reconciling = true;
    let release = () => {};
    try {
      await this.#checkRun();
      // An empty Redis restarted within the second would not know what the old one admitted.
      if (this.#mode === 'local' && this.#time.now() < this.#returnAt) return;
      await timed(redisCall('ping'), performance.now(), this.#redis.ping());
      // Once over what is there: local admissions go on meanwhile, and chasing their counts
      // could last as long as the load does.
      await this.#applyOutages(false);
      if (this.#mode === 'redis') await this.#clearUnsettled();
      // (Lost again meanwhile, if this began while serving through Redis: not within the second.)
      if (this.#mode === 'local' && !this.#closed && this.#time.now() >= this.#returnAt) {
        // From here no local admission starts (requests wait a few round trips for the switch);
        // those under way finish, their counts join the outage's. They are bounded by the
        // store's deadlines: waiting for them is what lets the switch happen under load.
        this.#switching = new Promise<void>((resolve) => {
          release = resolve;
        });
        await this.#localSettled(SWITCH_WAIT_MS);
        await this.#applyOutages(true);
        await this.#clearUnsettled();
        await this.#pushOwn();
        if (this.#instances > 1) await this.#renew();
        // Connected anew meanwhile: that Redis's run id is checked first (next probe).
        if (this.#checkedConnection !== this.#connections) throw new Error('reconnected during the switch');
        this.#mode = 'redis';
        this.#local = null;
        // Floors only raise a count: done beside the admissions Redis now decides.
        void this.#raiseDecidedInStore();
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
      this.#switching = null;
      release();
      this.#reconciling = false;
    }
  }

  /**
   * Adds the counts made locally to Redis: per chunk of keys, their floors read in one turn of
   * the store queue, then their merges sent together (see #merge); throws if Redis fails, the
   * counts not added staying for the next attempt. `untilNone`: also the counts made meanwhile.
   */
  async #applyOutages(untilNone: boolean): Promise<void> {
    for (let once = true; this.#outage.size > 0 && (once || untilNone); once = false) {
      const items: { keyId: string; day: string; delta: OutageDelta }[] = [];
      for (const [keyId, days] of this.#outage) {
        for (const day of [...days.keys()].sort()) items.push({ keyId, day, delta: days.get(day)! });
      }
      this.#outage = new Map();
      for (let i = 0; i < items.length; i += MERGE_CHUNK) {
        const chunk = items.slice(i, i + MERGE_CHUNK);
        let failure: unknown = null;
        try {
          const floors = await this.#floorsOf(
            chunk.map((c) => ({ keyId: c.keyId, dayNum: dayNumber(c.day) })),
          );
          // Sent in order on one connection, so a key's days are merged in order.
          const merged = await Promise.allSettled(
            chunk.map(({ keyId, day, delta }, j) => {
              const dayNum = dayNumber(day);
              const gen = delta.uncertain ? '' : delta.gen;
              // If the call fails, it may have been applied: a retry merges floors only.
              delta.uncertain = true;
              return timed(
                redisCall('merge'),
                performance.now(),
                this.#scripts.lrdsMerge(
                  this.#keys(keyId).q,
                  this.#nowArg(),
                  dayNum,
                  floors[j]!.du,
                  floors[j]!.mu,
                  newGeneration(),
                  gen,
                  dayNum,
                  delta.n,
                  delta.m,
                ),
              );
            }),
          );
          merged.forEach((m, j) => {
            const { keyId, day, delta } = chunk[j]!;
            if (m.status === 'fulfilled') this.#rememberMerge(keyId, m.value);
            else {
              failure ??= m.reason;
              this.#restoreOutage(keyId, day, delta);
            }
          });
        } catch (err) {
          failure = err;
          for (const c of chunk) this.#restoreOutage(c.keyId, c.day, c.delta);
        }
        if (failure !== null) {
          for (const c of items.slice(i + MERGE_CHUNK)) this.#restoreOutage(c.keyId, c.day, c.delta);
          throw failure;
        }
      }
    }
  }

  /** Removes the tokens of #unsettled, once the counts made without Redis are in it; throws if Redis fails. */
  async #clearUnsettled(): Promise<void> {
    if (this.#outage.size > 0) return;
    const keys = [...this.#unsettled.keys()];
    await Promise.all(
      keys.map(async (keyId) => {
        const tokens = this.#unsettled.get(keyId)!;
        const sent = [...tokens.keys()];
        await timed(redisCall('zrem'), performance.now(), this.#redis.zrem(this.#keys(keyId).s, ...sent));
        for (const t of sent) tokens.delete(t);
        if (tokens.size === 0) this.#unsettled.delete(keyId);
      }),
    );
  }

  /** Resolves once no local admission is under way; rejects after `timeoutMs` (a store that hangs). */
  #localSettled(timeoutMs: number): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('local admissions still under way')), timeoutMs);
      this.#settled.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Pushes this instance's admissions of the last second into the keys' Redis windows (PUSH_LUA). */
  async #pushOwn(): Promise<void> {
    const now = this.#time.now();
    const calls: Promise<unknown>[] = [];
    for (const [keyId, stamps] of this.#own.inWindow(now)) {
      const args: string[] = [];
      let rank = 0;
      for (let i = 0; i < stamps.length; i++) {
        // One member per admission, the same in a retried push (which then moves it, never adds
        // it twice): instance, microsecond, and rank among equal stamps (a clock that stood
        // still); ending in 9 digits like the script's own members.
        const t = stamps[i]!;
        rank = i > 0 && t === stamps[i - 1] ? rank + 1 : 0;
        args.push(
          `l${this.#id}.${Math.round(t * 1000)}.${rank}:000000000`,
          String(Math.max(0, Math.floor((now - t) * 1000))),
        );
      }
      calls.push(
        timed(
          redisCall('push'),
          performance.now(),
          this.#scripts.lrdsPush(this.#keys(keyId).w, this.#nowArg(), this.#windowTtlMs, ...args),
        ),
      );
    }
    await Promise.all(calls);
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
    const r = await timed(
      redisCall('merge'),
      performance.now(),
      this.#scripts.lrdsMerge(
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
      ),
    );
    this.#rememberMerge(keyId, r);
  }

  /** Puts back counts that could not be added to Redis (joining any counted since). */
  #restoreOutage(keyId: string, day: string, delta: OutageDelta): void {
    const byDay = inner(this.#outage, keyId);
    const cur = byDay.get(day);
    if (!cur) byDay.set(day, delta);
    else {
      cur.n += delta.n;
      cur.m += delta.m;
      cur.uncertain ||= delta.uncertain || cur.gen !== delta.gen;
    }
  }

  // ---- local fallback ----

  /**
   * The first local time a local admission may happen (see the class comment), as known at
   * `now`: with one instance, not before every admit call sent to Redis has settled (at the
   * latest when the last one times out; after `now` in any case while one is open).
   */
  #localFromAt(now: number): number {
    let from = Math.max(
      this.#localFrom,
      this.#instances > 1 ? this.#leaseSentAt + LEASE_MS + WINDOW_MS : Number.NEGATIVE_INFINITY,
    );
    if (this.#instances === 1 && this.#admitsOpen.size > 0) {
      from = Math.max(from, now + 1);
      for (const timesOutAt of this.#admitsOpen.values()) from = Math.max(from, timesOutAt);
    }
    return from;
  }

  async #admitLocal(req: AdmissionRequest): Promise<AdmissionResult> {
    const { keyId, tier } = req;
    const share = this.#share(tier);
    const now = this.#time.now();
    const from = this.#localFromAt(now);
    if (share === 0 || now < from) {
      const resetAt = share === 0 ? now + WINDOW_MS : from;
      return {
        ok: false,
        reason: 'RATE_LIMITED',
        rate: { limit: share, remaining: 0, resetAt },
        retryAfterMs: resetAt - now,
      };
    }
    this.#inFlight++;
    try {
      const rate = this.#own.hit(keyId, share, now);
      const state: RateState = { limit: rate.limit, remaining: rate.remaining, resetAt: rate.resetAt };
      if (!rate.ok)
        return { ok: false, reason: 'RATE_LIMITED', rate: state, retryAfterMs: rate.retryAfterMs };
      if (!req.counted) return { ok: true, rate: state };
      const at = this.#own.newest(keyId)!;
      // The generation before the decision: a hash of it was built before this count existed.
      const gen = this.#known.get(keyId)?.g ?? '';
      const q = await this.#quotaLocal(req, now);
      this.#addOutage(keyId, q.day, q.countedMonthly, gen);
      const counts = { dayUsed: q.after.du, monthUsed: q.after.mu };
      if (q.ok) return { ok: true, rate: state, counts };
      // Refused with 429: the request takes no slot of the window (D7).
      this.#own.remove(keyId, at);
      const after = this.#own.peek(keyId, share, now);
      const scope = q.byAccount ? { scope: 'account' as const } : {};
      return { ok: false, reason: q.reason, ...scope, rate: after, limit: q.limit, used: q.used, counts };
    } finally {
      if (--this.#inFlight === 0) for (const wake of this.#settled.splice(0)) wake();
    }
  }

  /**
   * The quota decision of a locally admitted request: made by the store (reserveUsage), the
   * authority shared by every instance; if the store fails, by this instance's counters.
   */
  async #quotaLocal(req: AdmissionRequest, nowMs: number): Promise<LocalQuota> {
    const { keyId, tier } = req;
    const day = dayOfNumber(Math.floor(nowMs / DAY_MS));
    const local = this.#localState();
    let u: ReservedUsage;
    const account = accountQuotaOf(req);
    const r: UsageReservation = {
      keyId,
      day,
      endpoint: req.endpoint,
      daily: tier.dailyQuota,
      monthly: tier.monthlyQuota,
      ...(account
        ? {
            account: {
              accountId: req.accountId!,
              tier: tier.id,
              daily: account.limits.daily,
              monthly: account.limits.monthly,
            },
          }
        : {}),
    };
    try {
      u = await this.#reserve(r);
    } catch (err) {
      if (!local.warned) {
        local.warned = true;
        this.#logger.warn({ err, keyId }, 'quotas not reserved in the store: decided on local counts');
      }
      await this.#ensureLocalLoaded(local, keyId, nowMs);
      const q = local.quotas.consume(keyId, { daily: tier.dailyQuota, monthly: tier.monthlyQuota }, nowMs);
      this.#record(keyId, q.day, req.endpoint, q.countedMonthly, r);
      const counts = local.quotas.usage(keyId, nowMs);
      const after = { du: counts.dayUsed, mu: counts.monthUsed };
      return q.ok
        ? { ok: true, day: q.day, countedMonthly: true, after }
        : {
            ok: false,
            reason: q.reason,
            limit: q.limit,
            used: q.used,
            day: q.day,
            countedMonthly: q.countedMonthly,
            after,
          };
    }
    const after = { du: u.dayUsed, mu: u.monthUsed };
    // load() keeps the larger counts: what the dashboard shows meanwhile.
    local.quotas.load(keyId, { day, dayUsed: u.dayUsed, month: monthOfDay(day), monthUsed: u.monthUsed });
    if (u.byAccount) {
      return {
        ok: false,
        reason: u.byAccount.reason,
        byAccount: true,
        limit: u.byAccount.limit,
        used: u.byAccount.used,
        day,
        countedMonthly: u.countedMonthly,
        after,
      };
    }
    if (!u.countedMonthly) {
      return {
        ok: false,
        reason: 'DAILY_QUOTA',
        limit: tier.dailyQuota!,
        used: u.dayUsed,
        day,
        countedMonthly: false,
        after,
      };
    }
    if (tier.monthlyQuota !== null && u.monthUsed > tier.monthlyQuota) {
      return {
        ok: false,
        reason: 'MONTHLY_QUOTA',
        limit: tier.monthlyQuota,
        used: u.monthUsed,
        day,
        countedMonthly: true,
        after,
      };
    }
    return { ok: true, day, countedMonthly: true, after };
  }

  /**
   * Reserves one counted request in the store. One reservation transaction at a time: the
   * requests that arrive meanwhile share the next one, so under load the batches grow instead
   * of queueing up behind each other (a request waits at most for the one under way and its own).
   */
  #reserve(r: UsageReservation): Promise<ReservedUsage> {
    return new Promise((resolve, reject) => {
      this.#reservations.push({ r, resolve, reject });
      this.#scheduleReservations();
    });
  }

  #scheduleReservations(): void {
    if (this.#reserveState !== 'idle' || this.#reservations.length === 0) return;
    this.#reserveState = 'scheduled';
    // The rest of this event-loop turn joins the batch.
    setImmediate(() => this.#runReservations());
  }

  #runReservations(): void {
    this.#reserveState = 'running';
    const batch = this.#reservations;
    this.#reservations = [];
    const id = newUsageBatchId();
    // After this instance's buffered events, so the store's totals include them.
    this.#exclusive(async () => {
      // The store decides on its totals: they must hold this instance's counts (else the
      // reservation fails, and the requests are decided on this instance's own counters).
      if (!(await this.#flushOnce())) throw new Error("this instance's usage counts could not be written");
      return this.#store.reserveUsage(
        batch.map((b) => b.r),
        id,
      );
    })
      .then(
        (results) => {
          for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!);
        },
        (err: unknown) => {
          // It may have been applied (its COMMIT sent, the answer lost): the counts its requests
          // get locally are written under its id, so the store applies them only if it was not.
          const group = { batch: { id, events: [] as UsageEvent[] }, waiting: batch.length };
          for (const b of batch) {
            this.#unsure.set(b.r, group);
            b.reject(err);
          }
        },
      )
      .finally(() => {
        this.#reserveState = 'idle';
        this.#scheduleReservations();
      });
  }

  async #statusLocal(keyId: string, tier: Tier): Promise<QuotaStatus> {
    const local = this.#localState();
    const now = this.#time.now();
    await this.#ensureLocalLoaded(local, keyId, now);
    const share = this.#share(tier);
    const rate =
      share === 0 ? { limit: 0, remaining: 0, resetAt: now + WINDOW_MS } : this.#own.peek(keyId, share, now);
    return quotaStatus(local.quotas.usage(keyId, now), rate, now);
  }

  /** What one instance may admit per key on its own: floor, so that N instances never pass the rate. */
  #share(tier: Tier): number {
    return Math.floor(tier.ratePerSecond / this.#instances);
  }

  #localState(): LocalState {
    this.#local ??= {
      quotas: new QuotaCounters(),
      warned: false,
      loadedAt: new Map(),
      loading: new Map(),
    };
    return this.#local;
  }

  /** Seeds a key's local counters on first use in an outage, and refreshes them every second after. */
  async #ensureLocalLoaded(local: LocalState, keyId: string, nowMs: number): Promise<void> {
    const real = performance.now();
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

  /**
   * Counts a request decided without Redis, to add to Redis later: as an increment if the key's
   * hash is still of generation `gen` (read before the request was counted; '' = unknown), else
   * as floors (see MERGE_LUA).
   */
  #addOutage(keyId: string, day: string, countedMonthly: boolean, gen: string): void {
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

  /** Buffers a counted request; `failed`: the reservation it had, which failed (see #unsure). */
  #record(
    keyId: string,
    day: string,
    endpoint: string,
    countedMonthly: boolean,
    failed?: UsageReservation,
  ): void {
    const event = { keyId, day, endpoint, countedMonthly };
    const group = failed && this.#unsure.get(failed);
    if (group) {
      group.batch.events.push(event);
      if (--group.waiting === 0) this.#batches.push(group.batch);
    } else this.#buffer.push(event);
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

  /** Formed batches first, in order, then the buffer as a new batch; stops at the first failure. */
  /** Writes what is unwritten, in order; false when a write failed (the rest stays for later). */
  async #flushOnce(): Promise<boolean> {
    while (this.#batches.length > 0) {
      if (!(await this.#write(this.#batches[0]!))) return false;
      this.#batches.shift();
    }
    if (this.#buffer.length === 0) return true;
    const batch = { id: newUsageBatchId(), events: this.#buffer };
    this.#buffer = [];
    this.#batches.push(batch);
    if (!(await this.#write(batch))) return false;
    this.#batches.splice(this.#batches.indexOf(batch), 1);
    return true;
  }

  #unwritten(): number {
    return this.#batches.reduce((n, b) => n + b.events.length, this.#buffer.length);
  }

  /** One attempt at `batch`; false when it failed (it stays in #batches). */
  async #write(batch: UsageBatch): Promise<boolean> {
    try {
      await this.#store.recordUsage(batch.events, batch.id);
    } catch (err) {
      this.#logger.warn({ err, events: this.#unwritten() }, 'usage events not written to the store yet');
      return false;
    }
    for (const e of batch.events) {
      const byDay = this.#pending.get(e.keyId)!;
      const p = byDay.get(e.day)!;
      p.n--;
      if (e.countedMonthly) p.m--;
      if (p.n === 0) byDay.delete(e.day);
      if (byDay.size === 0) this.#pending.delete(e.keyId);
    }
    return true;
  }
}
