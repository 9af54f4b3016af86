/**
 * The quota hashes of the Redis admission backend (see redis-admission.ts) as this instance
 * knows them: the last counts Redis reported, the floors read from the store, and the rebuild
 * of a missing hash (a key's or an account bound's) from them.
 */

import { must } from '../domain/must.ts';
import { monthOfDay, utcDay } from '../domain/periods.ts';
import { redisCall, timed } from '../metrics.ts';
import type { UsageStore } from '../store/ports/usage.ts';
import { dayNumber, dayOfNumber, newGeneration, type RedisLink, type WarnLogger } from './redis-link.ts';
import type { UsageLog } from './redis-usage-log.ts';
import type { Tier } from './tiers.ts';

/** Last counts Redis reported for a key: a lower bound of the truth, and its hash generation. */
interface Known {
  g: string;
  /** UTC day number. */
  d: number;
  du: number;
  mu: number;
}

/** Known counts kept for at most this many keys (then forgotten: only the exactness of a reconciliation suffers). */
const KNOWN_MAX = 100_000;

export class QuotaHashes {
  readonly #link: RedisLink;
  readonly #store: UsageStore;
  readonly #usage: UsageLog;
  readonly #logger: WarnLogger;
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

  constructor(link: RedisLink, store: UsageStore, usage: UsageLog, logger: WarnLogger) {
    this.#link = link;
    this.#store = store;
    this.#usage = usage;
    this.#logger = logger;
  }

  /** The generation of the key's hash Redis last reported ('' = unknown). */
  generation(keyId: string): string {
    return this.#known.get(keyId)?.g ?? '';
  }

  /** Remembers the counts Redis reported for a key. */
  remember(keyId: string, k: Known): void {
    if (this.#known.size >= KNOWN_MAX && !this.#known.has(keyId)) this.#known.clear();
    this.#known.set(keyId, k);
  }

  /** Remembers the counts of a merge's or a settle's reply (day, day count, month count, generation). */
  rememberMerge(keyId: string, r: unknown[]): void {
    this.remember(keyId, { d: Number(r[0]), du: Number(r[1]), mu: Number(r[2]), g: String(r[3]) });
  }

  /**
   * Notes that `keyId` counts toward the account bound `id` (hash `hash`). A key that counted
   * toward another bound before has moved: both hashes are deleted (rebuilt from the store at
   * their next use), and the deletion is returned to wait for; null otherwise.
   */
  trackAccount(keyId: string, id: string, hash: string): Promise<unknown> | null {
    let keys = this.#accountKeys.get(id);
    if (!keys) {
      if (this.#accountKeys.size >= KNOWN_MAX) this.#accountKeys.clear();
      keys = new Set();
      this.#accountKeys.set(id, keys);
    }
    keys.add(keyId);
    const before = this.#keyAccount.get(keyId);
    if (before === id) return null;
    if (this.#keyAccount.size >= KNOWN_MAX) this.#keyAccount.clear();
    this.#keyAccount.set(keyId, id);
    if (before === undefined) return null;
    this.#accountKeys.get(before)?.delete(keyId);
    return this.#link.redis.del(this.#link.accountKey(before), hash);
  }

  /** Rebuilds a key's missing quota hash from the store (one seed at a time per key). */
  seed(keyId: string, dayNum: number): Promise<void> {
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
  seedAccount(accountId: string, tier: Tier, id: string, hashKey: string, dayNum: number): Promise<void> {
    let pending = this.#seeding.get(id);
    if (!pending) {
      pending = (async () => {
        const day = dayOfNumber(dayNum);
        const floors = await this.#usage.exclusive(async () => {
          const stored = await this.#store.accountUsageTotals({ accountId, tier: tier.id }, day, {
            daily: tier.dailyQuota,
            monthly: tier.monthlyQuota,
          });
          let { dayUsed: du, monthUsed: mu } = stored;
          for (const keyId of this.#accountKeys.get(id) ?? []) {
            const own = this.#usage.pendingFor(keyId, day);
            du += own.n;
            mu += own.m;
          }
          return { du, mu };
        });
        await this.#link.scripts.lrdsMerge(
          hashKey,
          this.#link.nowArg(),
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

  /** Notes an account bound whose request the store decided (see raiseDecidedInStore). */
  decidedInStore(id: string, accountId: string, tier: Tier): void {
    this.#decidedInStore.set(id, { accountId, tier, hash: this.#link.accountKey(id) });
  }

  /**
   * The account counters whose requests the store decided while Redis could not: raised to the
   * store's counts (and this instance's unflushed ones) as floors, so what was admitted meanwhile
   * counts toward the account in Redis too. A failure leaves them for the next return.
   */
  async raiseDecidedInStore(): Promise<void> {
    const day = dayNumber(utcDay(this.#link.time.now()));
    for (const [id, { accountId, tier, hash }] of [...this.#decidedInStore]) {
      try {
        await this.seedAccount(accountId, tier, id, hash, day);
        this.#decidedInStore.delete(id);
      } catch {
        return; // kept for the next return to Redis
      }
    }
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
    const floors = await this.floors(keyId, dayNum);
    const r = await timed(
      redisCall('merge'),
      performance.now(),
      this.#link.scripts.lrdsMerge(
        this.#link.keys(keyId).q,
        this.#link.nowArg(),
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
    this.rememberMerge(keyId, r);
  }

  /**
   * Lower bounds of a key's counts for a day and its month: the store's totals plus this
   * instance's unflushed events (read with no flush in between), and the last counts Redis
   * reported here. Never throws: a failing store leaves the last reported counts.
   */
  async floors(keyId: string, dayNum: number): Promise<{ du: number; mu: number }> {
    const [floors] = await this.floorsOf([{ keyId, dayNum }]);
    return must(floors, `floors of ${keyId}`);
  }

  /** floors() of several keys, read in one turn of the store queue (in parallel). */
  async floorsOf(items: { keyId: string; dayNum: number }[]): Promise<{ du: number; mu: number }[]> {
    const read = await this.#usage.exclusive(async () => {
      const stored = await Promise.allSettled(
        items.map(({ keyId, dayNum }) => this.#store.usageTotals(keyId, dayOfNumber(dayNum))),
      );
      // After every read and with no flush in between: each unflushed event is counted once.
      return stored.map((x, i) => {
        if (x.status === 'rejected') return x;
        const { keyId, dayNum } = must(items[i], 'usage totals item');
        const own = this.#usage.pendingFor(keyId, dayOfNumber(dayNum));
        return { du: x.value.dayUsed + own.n, mu: x.value.monthUsed + own.m };
      });
    });
    return read.map((x, i) => {
      const { keyId, dayNum } = must(items[i], 'usage totals item');
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
}
