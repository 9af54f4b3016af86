/**
 * The connection of the Redis admission backend (see redis-admission.ts): the client and its
 * scripts, the names of the keys, the time passed to the scripts, this instance's lease, and
 * the run id of the Redis reached.
 */

import { randomBytes } from 'node:crypto';
import { Redis, ReplyError } from 'ioredis';
import type { Clock } from '../domain/clock.ts';
import { DAY_MS, dayStartMs, utcDay } from '../domain/periods.ts';
import { redisCall, timed } from '../metrics.ts';
import { ADMIT_LUA, LEASE_LUA, MERGE_LUA, PUSH_LUA, SETTLE_LUA, STATUS_LUA } from './redis-scripts.ts';
import { WINDOW_MS } from './sliding-window.ts';

/** The slice of a logger this backend uses (pino and Fastify's `app.log` fit). */
export interface WarnLogger {
  warn(obj: unknown, msg?: string): void;
}

/** The scripts of redis-scripts.ts, as commands of the client. */
export interface ScriptedRedis {
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

/** With more than one instance, each renews its lease this often while it serves through Redis (ms). */
export const LEASE_RENEW_MS = 100;
/** A lease ends this long after its renewal was sent, at the latest (ms). */
export const LEASE_MS = 500;

/** The inner map of `outer` at `key`, created if missing. */
export function inner<V>(outer: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let m = outer.get(key);
  if (!m) {
    m = new Map();
    outer.set(key, m);
  }
  return m;
}

/** A new generation of a quota hash (see MERGE_LUA). */
export const newGeneration = () => randomBytes(6).toString('base64url');
/** The UTC day number of a day ('YYYY-MM-DD'), as the scripts count days. */
export const dayNumber = (day: string) => dayStartMs(day) / DAY_MS;
export const dayOfNumber = (d: number) => utcDay(d * DAY_MS);

export interface RedisLinkOptions {
  url: string;
  prefix: string;
  /** Tests only: the time passed to the scripts instead of Redis's TIME (see RedisAdmissionOptions.clock). */
  clock: Clock | null;
  /** Local time: the test clock, else this process's monotonic sub-millisecond clock. */
  time: Clock;
  instances: number;
  commandTimeoutMs: number;
}

/** The Redis client of one RedisAdmission, with what every mechanism of it shares. */
export class RedisLink {
  readonly redis: Redis;
  readonly scripts: ScriptedRedis;
  readonly prefix: string;
  readonly clock: Clock | null;
  /** Local time: the test clock, else this process's monotonic sub-millisecond clock. */
  readonly time: Clock;
  readonly instances: number;
  /** How long an idle window key lives (ms). */
  readonly windowTtlMs: number;
  readonly commandTimeoutMs: number;
  /** This instance's lease member. */
  readonly id = randomBytes(9).toString('base64url');
  readonly leasesKey: string;
  /** Local time the newest lease renewal was sent (whether or not it arrived). */
  leaseSentAt = Number.NEGATIVE_INFINITY;
  /** A renewal is under way. */
  renewing = false;
  /** A lower bound of (Redis time - local time), ms; null until measured. */
  #offsetMs: number | null = null;
  /** Connections made to Redis ('ready' events); checkRun reads the run id once for each. */
  #connections = 0;
  /** The connection whose Redis run id has been read (see checkRun). */
  #checkedConnection = 0;
  /** The run id of the Redis last reached; null until one was read. */
  #runId: string | null = null;

  constructor(options: RedisLinkOptions) {
    this.prefix = options.prefix;
    this.clock = options.clock;
    this.time = options.time;
    this.instances = options.instances;
    this.windowTtlMs = this.clock ? 60_000 : WINDOW_MS + 1;
    this.commandTimeoutMs = options.commandTimeoutMs;
    this.leasesKey = `${this.prefix}instances`;

    this.redis = new Redis(options.url, {
      commandTimeout: this.commandTimeoutMs,
      connectTimeout: 1000,
      // Lets a closed instance's process exit at once when Redis was unreachable.
      disconnectTimeout: 200,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      // Reconnects soon after Redis is back (a refused connection costs nothing to retry).
      retryStrategy: (times) => Math.min(50 * times, 200),
    });
    this.redis.defineCommand('lrdsAdmit', { numberOfKeys: 5, lua: ADMIT_LUA });
    this.redis.defineCommand('lrdsMerge', { numberOfKeys: 1, lua: MERGE_LUA });
    this.redis.defineCommand('lrdsStatus', { numberOfKeys: 3, lua: STATUS_LUA });
    this.redis.defineCommand('lrdsLease', { numberOfKeys: 1, lua: LEASE_LUA });
    this.redis.defineCommand('lrdsPush', { numberOfKeys: 1, lua: PUSH_LUA });
    this.redis.defineCommand('lrdsSettle', { numberOfKeys: 3, lua: SETTLE_LUA });
    this.scripts = this.redis as unknown as ScriptedRedis;
    this.redis.on('ready', () => {
      this.#connections++;
    });
  }

  /** A key's window, quota hash and in-store decisions (see the key layout in redis-admission.ts). */
  keys(keyId: string): { w: string; q: string; s: string } {
    return {
      w: `${this.prefix}w:{${keyId}}`,
      q: `${this.prefix}q:{${keyId}}`,
      s: `${this.prefix}s:{${keyId}}`,
    };
  }

  /** The hash of an account bound (`id`: see accountQuotaOf; '' when the request has none). */
  accountKey(id: string): string {
    return `${this.prefix}a:{${id}}`;
  }

  /** The `now` argument of the scripts: '' = Redis TIME. */
  nowArg(): string {
    return this.clock ? String(Math.round(this.clock.now() * 1000)) : '';
  }

  /** Renews this instance's lease (see LEASE_LUA); measures the clock offset first if needed. */
  async renew(): Promise<void> {
    this.renewing = true;
    try {
      if (this.#offsetMs === null) {
        if (this.clock) this.#offsetMs = 0;
        else {
          const [sec, usec] = await timed(redisCall('time'), performance.now(), this.redis.time());
          this.#offsetMs = Number(sec) * 1000 + Number(usec) / 1000 - this.time.now();
        }
      }
      const sent = this.time.now();
      if (sent > this.leaseSentAt) this.leaseSentAt = sent;
      const deadlineUs = Math.floor((sent + this.#offsetMs + LEASE_MS) * 1000);
      const now = Number(
        await timed(
          redisCall('lease'),
          performance.now(),
          this.scripts.lrdsLease(this.leasesKey, this.nowArg(), this.id, String(deadlineUs), LEASE_MS * 1000),
        ),
      );
      // Redis ran it before the reply arrived: its time minus the arrival is a lower bound.
      if (!this.clock) this.#offsetMs = now / 1000 - this.time.now();
    } finally {
      this.renewing = false;
    }
  }

  /**
   * Once per connection, reads the run id of the Redis reached (INFO server). Resolves true
   * when it is another run than the one last reached (restarted, or replaced): the caller then
   * does not trust it before 1,000 ms after this was seen, as the other instances may have
   * admitted through the old one until it went (this instance's own admissions through it were
   * all answered before, and are in its own window with one instance). An unreadable run id
   * (INFO refused) counts as another run on every reconnection. Throws if Redis fails (the next
   * probe reads it again).
   */
  async checkRun(): Promise<boolean> {
    const connection = this.#connections;
    if (connection === this.#checkedConnection) return false;
    let runId = '';
    try {
      const info = await timed(redisCall('info'), performance.now(), this.redis.info('server'));
      runId = /^run_id:(\w+)/m.exec(info)?.[1] ?? '';
    } catch (err) {
      if (!(err instanceof ReplyError)) throw err;
    }
    const another = this.#runId !== null && (runId === '' || runId !== this.#runId);
    this.#runId = runId;
    this.#checkedConnection = connection;
    return another;
  }

  /** Connected anew since the run id was last read (it is to be read before Redis is trusted). */
  reconnected(): boolean {
    return this.#checkedConnection !== this.#connections;
  }
}
