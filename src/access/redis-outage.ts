/**
 * Counts of the Redis admission backend (see redis-admission.ts) decided without Redis, kept
 * until they are added to it: per key and day, as increments of a known hash generation or as
 * floors (MERGE_LUA); and the tokens of in-store decisions a failed call may have left in Redis.
 */

import { must } from '../domain/must.ts';
import { redisCall, timed } from '../metrics.ts';
import { dayNumber, inner, newGeneration, type RedisLink } from './redis-link.ts';
import type { QuotaHashes } from './redis-quota-hashes.ts';

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

/** Keys whose outage counts are added to Redis together (one store turn, one burst of merges). */
const MERGE_CHUNK = 64;

export class OutageCounts {
  readonly #link: RedisLink;
  readonly #hashes: QuotaHashes;
  #outage = new Map<string, Map<string, OutageDelta>>();
  /**
   * Tokens of quota decisions in the store (see RedisDecisions) that this instance may have left
   * in Redis, a call having failed, per key: removed once their counts are in Redis, so that
   * they do not keep the key's quotas in the store until their deadline.
   */
  readonly #unsettled = new Map<string, Map<string, true>>();

  constructor(link: RedisLink, hashes: QuotaHashes) {
    this.#link = link;
    this.#hashes = hashes;
  }

  /** Counts or tokens are waiting to be added to Redis (or removed from it). */
  waiting(): boolean {
    return this.#outage.size > 0 || this.#unsettled.size > 0;
  }

  /**
   * Counts a request decided without Redis, to add to Redis later: as an increment if the key's
   * hash is still of generation `gen` (read before the request was counted; '' = unknown), else
   * as floors (see MERGE_LUA).
   */
  add(keyId: string, day: string, countedMonthly: boolean, gen: string): void {
    const byDay = inner(this.#outage, keyId);
    const delta = byDay.get(day);
    if (!delta) byDay.set(day, { n: 1, m: countedMonthly ? 1 : 0, gen, uncertain: false });
    else {
      delta.n++;
      if (countedMonthly) delta.m++;
      if (delta.gen !== gen) delta.uncertain = true;
    }
  }

  /** A token of the key's decisions under way that a failed call may have left in Redis. */
  unsettled(keyId: string, token: string): void {
    inner(this.#unsettled, keyId).set(token, true);
  }

  /**
   * Adds the counts made locally to Redis: per chunk of keys, their floors read in one turn of
   * the store queue, then their merges sent together; throws if Redis fails, the counts not
   * added staying for the next attempt. `untilNone`: also the counts made meanwhile.
   */
  async apply(untilNone: boolean): Promise<void> {
    for (let once = true; this.#outage.size > 0 && (once || untilNone); once = false) {
      const items: { keyId: string; day: string; delta: OutageDelta }[] = [];
      for (const [keyId, days] of this.#outage) {
        for (const [day, delta] of [...days].sort(([a], [b]) => (a < b ? -1 : 1)))
          items.push({ keyId, day, delta });
      }
      this.#outage = new Map();
      for (let i = 0; i < items.length; i += MERGE_CHUNK) {
        const chunk = items.slice(i, i + MERGE_CHUNK);
        let failure: unknown = null;
        try {
          const floors = await this.#hashes.floorsOf(
            chunk.map((c) => ({ keyId: c.keyId, dayNum: dayNumber(c.day) })),
          );
          // Sent in order on one connection, so a key's days are merged in order.
          const merged = await Promise.allSettled(
            chunk.map(({ keyId, day, delta }, j) => {
              const dayNum = dayNumber(day);
              const floor = must(floors[j], `floors of ${keyId}`);
              const gen = delta.uncertain ? '' : delta.gen;
              // If the call fails, it may have been applied: a retry merges floors only.
              delta.uncertain = true;
              return timed(
                redisCall('merge'),
                performance.now(),
                this.#link.scripts.lrdsMerge(
                  this.#link.keys(keyId).q,
                  this.#link.nowArg(),
                  dayNum,
                  floor.du,
                  floor.mu,
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
            const { keyId, day, delta } = must(chunk[j], 'merged item');
            if (m.status === 'fulfilled') this.#hashes.rememberMerge(keyId, m.value);
            else {
              failure ??= m.reason;
              this.#restore(keyId, day, delta);
            }
          });
        } catch (err) {
          failure = err;
          for (const c of chunk) this.#restore(c.keyId, c.day, c.delta);
        }
        if (failure !== null) {
          for (const c of items.slice(i + MERGE_CHUNK)) this.#restore(c.keyId, c.day, c.delta);
          throw failure;
        }
      }
    }
  }

  /** Removes the unsettled tokens, once the counts made without Redis are in it; throws if Redis fails. */
  async clearUnsettled(): Promise<void> {
    if (this.#outage.size > 0) return;
    await Promise.all(
      [...this.#unsettled].map(async ([keyId, tokens]) => {
        const sent = [...tokens.keys()];
        await timed(
          redisCall('zrem'),
          performance.now(),
          this.#link.redis.zrem(this.#link.keys(keyId).s, ...sent),
        );
        for (const t of sent) tokens.delete(t);
        if (tokens.size === 0) this.#unsettled.delete(keyId);
      }),
    );
  }

  /** Puts back counts that could not be added to Redis (joining any counted since). */
  #restore(keyId: string, day: string, delta: OutageDelta): void {
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
