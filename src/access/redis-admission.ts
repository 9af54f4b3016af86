import { type Clock, systemClock } from '../domain/clock.ts';
import { redisCall, timed } from '../metrics.ts';
import type { UsageStore } from '../store/ports/usage.ts';
import type { Admission, AdmissionRequest, AdmissionResult, QuotaStatus } from './admission.ts';
import { RedisDecisions } from './redis-decisions.ts';
import { LEASE_RENEW_MS, RedisLink, type WarnLogger } from './redis-link.ts';
import { LocalFallback } from './redis-local.ts';
import { OutageCounts } from './redis-outage.ts';
import { QuotaHashes } from './redis-quota-hashes.ts';
import { UsageLog } from './redis-usage-log.ts';
import { WINDOW_MS } from './sliding-window.ts';
import type { Tier } from './tiers.ts';

export type { WarnLogger } from './redis-link.ts';

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

/** While unreachable or with counts to reconcile, Redis is probed this often (ms). */
const PROBE_MS = 200;
/**
 * How long a switch back to Redis waits for the local admissions under way (ms): beyond the
 * store's call deadline, so a slow store delays the switch instead of calling it off.
 */
const SWITCH_WAIT_MS = 5000;

const consoleLogger: WarnLogger = { warn: (obj, msg) => console.warn(msg ?? '', obj) };

/**
 * The scaled backend of Admission: one Redis shared by every instance.
 *
 * One file per mechanism: redis-link.ts (the client, key names, leases, run id),
 * redis-decisions.ts (requests decided through Redis, and handed to the store),
 * redis-quota-hashes.ts (quota hashes rebuilt from the store), redis-usage-log.ts (counts made
 * durable in the store, reservations), redis-local.ts (the local fallback), redis-outage.ts
 * (counts made without Redis, added to it once back), redis-scripts.ts (the Lua scripts); this
 * file switches between Redis and the fallback.
 *
 * Per request ONE atomic Lua script (EVALSHA, falling back to EVAL after a Redis restart; see
 * redis-scripts.ts) applies the exact sliding window and both quota counters of docs/decisions.md "Order of checks and what counts".
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
  readonly #link: RedisLink;
  readonly #usage: UsageLog;
  readonly #hashes: QuotaHashes;
  readonly #outage: OutageCounts;
  readonly #local: LocalFallback;
  readonly #decisions: RedisDecisions;
  readonly #logger: WarnLogger;
  readonly #timers: NodeJS.Timeout[];
  /** After an outage, Redis is trusted again from this local time on. */
  #returnAt = 0;
  /** While switching back to Redis: local admissions wait for it. */
  #switching: Promise<void> | null = null;
  #mode: 'redis' | 'local' = 'local';
  #closed = false;
  /** Set when Redis was lost after having served: its return is then logged. */
  #wentDown = false;
  #reconciling = false;

  constructor(options: RedisAdmissionOptions) {
    const clock = options.clock ?? null;
    this.#logger = options.logger ?? consoleLogger;
    this.#link = new RedisLink({
      url: options.url,
      prefix: options.prefix ?? 'lrds:',
      clock,
      time: clock ?? systemClock(),
      instances: Math.max(1, Math.floor(options.instances ?? 1)),
      commandTimeoutMs: options.commandTimeoutMs ?? 300,
    });
    this.#usage = new UsageLog(options.store, this.#logger);
    this.#hashes = new QuotaHashes(this.#link, options.store, this.#usage, this.#logger);
    this.#outage = new OutageCounts(this.#link, this.#hashes);
    this.#local = new LocalFallback(this.#link, this.#usage, this.#hashes, this.#outage, this.#logger);
    this.#decisions = new RedisDecisions({
      link: this.#link,
      usage: this.#usage,
      hashes: this.#hashes,
      outage: this.#outage,
      local: this.#local,
      serving: () => this.#mode === 'redis',
      goDown: (err) => this.#goDown(err),
    });
    const redis = this.#link.redis;
    redis.on('error', (err) => this.#goDown(err));
    redis.on('close', () => this.#goDown(new Error('connection to Redis closed')));
    redis.on('ready', () => void this.#reconcile());

    this.#timers = [
      setInterval(() => void this.flush(), options.flushIntervalMs ?? 100),
      setInterval(() => {
        if (this.#mode === 'local' || this.#outage.waiting()) void this.#reconcile();
      }, PROBE_MS),
      setInterval(() => {
        if (this.#link.instances > 1 && this.#mode === 'redis' && !this.#link.renewing && !this.#closed) {
          this.#link.renew().catch((err) => this.#goDown(err));
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
          return await this.#decisions.admit(req);
        } catch (err) {
          this.#goDown(err);
        }
      }
      if (!this.#switching) return this.#local.admit(req);
      await this.#switching;
    }
  }

  /** `_nowMs` is ignored: Redis's time, or while it is unreachable this instance's clock, is the time. */
  async status(keyId: string, tier: Tier, _nowMs: number): Promise<QuotaStatus> {
    if (this.#mode === 'redis') {
      try {
        return await this.#decisions.status(keyId, tier);
      } catch (err) {
        this.#goDown(err);
      }
    }
    return this.#local.status(keyId, tier);
  }

  /** Writes the buffered usage events to the store (also runs every flushIntervalMs). */
  flush(): Promise<void> {
    return this.#usage.flush();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    const link = this.#link;
    if (link.instances > 1 && this.#mode === 'redis') {
      await timed(redisCall('zrem'), performance.now(), link.redis.zrem(link.leasesKey, link.id)).catch(
        () => {},
      );
    }
    await this.flush();
    if (this.#usage.unwritten() > 0) {
      this.#logger.warn(
        { events: this.#usage.unwritten() },
        'usage events could not be written to the store',
      );
    }
    try {
      await link.redis.quit();
    } catch {
      link.redis.disconnect();
    }
  }

  #goDown(err: unknown): void {
    if (this.#mode !== 'redis') return;
    this.#mode = 'local';
    this.#wentDown = true;
    this.#local.reset();
    this.#returnAt = this.#link.time.now() + WINDOW_MS;
    if (!this.#closed) {
      this.#logger.warn(
        { err, instances: this.#link.instances },
        'Redis unreachable: limits enforced locally (floor(rate / instances) per key), quotas in the store, until it is back',
      );
    }
  }

  /**
   * Adds the counts made locally to Redis, then lets Redis serve again. Runs when Redis is
   * ready and there is anything to do; any failure leaves it for the next probe.
   */
  async #reconcile(): Promise<void> {
    const link = this.#link;
    if (this.#reconciling || this.#closed || link.redis.status !== 'ready') return;
    this.#reconciling = true;
    let release = () => {};
    try {
      // Another run of Redis than the one last reached: not trusted within the second.
      if (await link.checkRun()) {
        this.#goDown(new Error('Redis restarted'));
        this.#returnAt = Math.max(this.#returnAt, link.time.now() + WINDOW_MS);
      }
      // An empty Redis restarted within the second would not know what the old one admitted.
      if (this.#mode === 'local' && link.time.now() < this.#returnAt) return;
      await timed(redisCall('ping'), performance.now(), link.redis.ping());
      // Once over what is there: local admissions go on meanwhile, and chasing their counts
      // could last as long as the load does.
      await this.#outage.apply(false);
      if (this.#mode === 'redis') await this.#outage.clearUnsettled();
      // (Lost again meanwhile, if this began while serving through Redis: not within the second.)
      if (this.#mode === 'local' && !this.#closed && link.time.now() >= this.#returnAt) {
        // From here no local admission starts (requests wait a few round trips for the switch);
        // those under way finish, their counts join the outage's. They are bounded by the
        // store's deadlines: waiting for them is what lets the switch happen under load.
        this.#switching = new Promise<void>((resolve) => {
          release = resolve;
        });
        await this.#local.settled(SWITCH_WAIT_MS);
        await this.#outage.apply(true);
        await this.#outage.clearUnsettled();
        await this.#local.pushOwn();
        if (link.instances > 1) await link.renew();
        // Connected anew meanwhile: that Redis's run id is checked first (next probe).
        if (link.reconnected()) throw new Error('reconnected during the switch');
        this.#mode = 'redis';
        this.#local.reset();
        // Floors only raise a count: done beside the admissions Redis now decides.
        void this.#hashes.raiseDecidedInStore();
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
}
