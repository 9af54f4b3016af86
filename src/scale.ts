/**
 * Backends of the scaled mode, chosen by REDIS_URL (docs/decisions.md "Settings"): with it, limits, quotas
 * and key-cache invalidation go through Redis, shared by every instance; without it, the
 * embedded in-process backends.
 */

import { type Admission, LocalAdmission } from './access/admission.ts';
import { type KeyEvents, NoKeyEvents, RedisKeyEvents } from './access/key-events.ts';
import { RedisAdmission, type WarnLogger } from './access/redis-admission.ts';
import type { Clock } from './domain/clock.ts';
import type { UsageStore } from './store/ports/usage.ts';

export interface CreateAdmissionOptions {
  redisUrl: string | null;
  store: UsageStore;
  /** Tests only: replaces Redis's TIME as the time of windows and days (see RedisAdmissionOptions.clock). */
  clock?: Clock;
  /**
   * Instances sharing the traffic (all hosts), set by the operator; each admits floor(rate / instances)
   * per key on its own while Redis is down, and Redis keeps that share free for any instance it has
   * not heard from (see RedisAdmission). Default 1.
   */
  instances?: number;
  logger?: WarnLogger;
}

/** LocalAdmission without a Redis URL, else RedisAdmission (connecting in the background). */
export function createAdmission(opts: CreateAdmissionOptions): Admission {
  if (opts.redisUrl === null) {
    return new LocalAdmission(opts.store, {
      onStoreError: (err) =>
        err === null
          ? opts.logger?.warn({}, 'usage counts written to the store again')
          : opts.logger?.warn(
              { err: (err as Error).message },
              'usage counts kept in memory until the store takes writes again',
            ),
    });
  }
  return new RedisAdmission({
    url: opts.redisUrl,
    store: opts.store,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.instances !== undefined ? { instances: opts.instances } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
}

/** Pub/sub over Redis with a URL, else the no-op (the key cache then follows the store's version). */
export function createKeyEvents(redisUrl: string | null, logger?: WarnLogger): KeyEvents {
  if (redisUrl === null) return new NoKeyEvents();
  return new RedisKeyEvents(redisUrl, logger ? { logger } : {});
}

/** The limiter state for /health: a Redis backend reports whether Redis serves; the embedded one is always up. */
export function admissionState(admission: Admission): 'up' | 'down' {
  return admission instanceof RedisAdmission ? admission.state() : 'up';
}
