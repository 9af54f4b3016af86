import type { Clock } from '../domain/clock.ts';
import type { ClaimedDelivery } from '../domain/records/events.ts';
import type { EventStore } from '../store/ports/events.ts';
import { ATTEMPT_TIMEOUT_MS, type AttemptResult, attemptDelivery } from './attempt.ts';
import { nextAttemptAt } from './backoff.ts';
import type { SecretBox } from './secrets.ts';
import type { Resolver } from './ssrf.ts';

export interface DelivererOptions {
  store: Pick<EventStore, 'claimDeliveries' | 'finishAttempt'>;
  secrets: SecretBox;
  clock: Clock;
  /** This process, in the claims it takes. */
  holder: string;
  /** WEBHOOK_ALLOW_PRIVATE: http and private, loopback and link-local addresses allowed. */
  allowPrivate: boolean;
  resolve?: Resolver;
  /** Attempts under way at once, at most (default 16). */
  concurrency?: number;
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** Makes an attempt (tests and the bench may count them); default attemptDelivery. */
  attempt?: typeof attemptDelivery;
  /** A delivery whose outcome could not be written (the store down): its claim lapses and it is tried again. */
  onError?: (err: unknown) => void;
}

/**
 * Webhook deliveries from the store's outbox: claims what is due (a lease longer than an
 * attempt can take, so no other process attempts it meanwhile), attempts each, and records the
 * outcome: delivered, or the next attempt with exponential backoff, or failed after 24 hours.
 */
export class Deliverer {
  private readonly o: DelivererOptions;
  private running = 0;
  private readonly inFlight = new Set<Promise<void>>();
  /** The claim under way (passes join it: two claims at once could take more than the free slots). */
  private claiming: Promise<number> | null = null;
  /** The last claim took every free slot: more may be due, claimed as soon as a slot frees. */
  private backlog = false;
  private refills = true;

  constructor(options: DelivererOptions) {
    this.o = options;
  }

  private get concurrency(): number {
    return this.o.concurrency ?? 16;
  }

  /** The claim's lease: the attempt's timeout, DNS and the write of its outcome, with room to spare. */
  private get leaseMs(): number {
    return (this.o.timeoutMs ?? ATTEMPT_TIMEOUT_MS) * 3;
  }

  /** Attempts under way. */
  get busy(): number {
    return this.running;
  }

  /**
   * Claims due deliveries up to the free attempt slots and starts them; resolves once those
   * are started (not finished: `idle()` waits for them). Returns the number started. When a
   * claim takes every free slot, more may be due: each attempt that finishes claims again
   * (until `pause()`), so a burst of events is delivered at the concurrency, not a batch per pass.
   */
  pass(): Promise<number> {
    this.claiming ??= this.claim().finally(() => {
      this.claiming = null;
    });
    return this.claiming;
  }

  private async claim(): Promise<number> {
    const free = this.concurrency - this.running;
    if (free <= 0) return 0;
    const now = Math.floor(this.o.clock.now());
    const claimed = await this.o.store.claimDeliveries(this.o.holder, now, this.leaseMs, free);
    this.backlog = claimed.length === free;
    for (const d of claimed) {
      this.running++;
      const p = this.deliver(d)
        .catch((err: unknown) => this.o.onError?.(err))
        .finally(() => {
          this.running--;
          this.inFlight.delete(p);
          if (this.backlog && this.refills) this.pass().catch((err: unknown) => this.o.onError?.(err));
        });
      this.inFlight.add(p);
    }
    return claimed.length;
  }

  /** No more claims as attempts finish (before stopping); `pass()` still claims. */
  pause(): void {
    this.refills = false;
  }

  /** Claims again as attempts finish (after `pause()`). */
  resume(): void {
    this.refills = true;
  }

  /** Resolves once every attempt started (and every claim under way) has finished. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.claiming)
      await Promise.allSettled([...this.inFlight, ...(this.claiming ? [this.claiming] : [])]);
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const secret = this.o.secrets.open(d.sealedSecret);
    let result: AttemptResult;
    if (secret === null)
      result = {
        ok: false,
        httpStatus: null,
        error: 'the signing secret cannot be read (another secrets key?)',
      };
    else
      result = await (this.o.attempt ?? attemptDelivery)(d.url, secret, d.eventId, d.body, {
        allowPrivate: this.o.allowPrivate,
        nowSeconds: Math.floor(this.o.clock.now() / 1000),
        ...(this.o.resolve ? { resolve: this.o.resolve } : {}),
        ...(this.o.timeoutMs ? { timeoutMs: this.o.timeoutMs } : {}),
      }).catch((err: unknown) => ({ ok: false, httpStatus: null, error: String(err) }));
    const at = Math.floor(this.o.clock.now());
    const next = result.ok ? null : nextAttemptAt(d.attempts + 1, at, d.createdAt);
    await this.o.store.finishAttempt(d.id, d.token, {
      at,
      status: result.ok ? 'delivered' : next === null ? 'failed' : 'pending',
      httpStatus: result.httpStatus,
      error: result.error === null ? null : result.error.slice(0, 500),
      nextAttemptAt: next,
    });
  }
}
