import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryRecord,
  EventRecord,
  StoredEvent,
  SubscriptionCreation,
  SubscriptionRecord,
} from '../../domain/records/events.ts';

/**
 * The risk events' outbox (docs/decisions.md "Risk events" in the repository's own docs/webhooks.md): who is
 * subscribed, the events, and each webhook delivery with its attempts. Written before any
 * attempt, so a crash loses nothing; claimed one attempt at a time across processes.
 */
export interface EventStore {
  /** Adds a webhook unless its account holds `maxActive` webhooks of its mode already (null: no cap), atomically. */
  createSubscription(s: SubscriptionRecord, maxActive: number | null): Promise<SubscriptionCreation>;
  /** The account's webhooks (not deleted), oldest first. */
  listWebhooks(accountId: string, mode: 'live' | 'test'): Promise<SubscriptionRecord[]>;
  getSubscription(id: string): Promise<SubscriptionRecord | null>;
  /** Deletes a webhook of the account: its pending deliveries fail. False when there is none. */
  deleteWebhook(accountId: string, id: string, nowMs: number): Promise<boolean>;
  /** Creates or renews a stream interest (by id) until `s.expiresAt`. */
  touchStreamInterest(s: SubscriptionRecord): Promise<void>;
  /**
   * Takes one of a key's `limit` stream slots until `slot.expiresAt` (its expired ones are freed
   * first): false when the key holds them all. The slots are the store's, so every server on it
   * counts a key's open streams together.
   */
  claimStreamSlot(slot: StreamSlot, limit: number, nowMs: number): Promise<boolean>;
  /** Holds a slot until `slot.expiresAt`; false when it is no longer held (it lapsed and was taken). */
  renewStreamSlot(slot: StreamSlot): Promise<boolean>;
  /** Frees a slot. */
  releaseStreamSlot(id: string): Promise<void>;
  /** Every webhook and unexpired stream interest (what the matcher matches against). */
  activeSubscriptions(nowMs: number): Promise<SubscriptionRecord[]>;
  /** Moves on whenever a subscription is added, renewed or deleted. */
  subscriptionsVersion(): Promise<number>;
  /**
   * Appends events (skipping ids stored already) and their pending deliveries (skipping
   * (webhook, event) pairs stored already; due at once) in one transaction. Returns the events added.
   */
  appendEvents(
    events: readonly EventRecord[],
    deliveries: readonly { eventId: string; webhookId: string }[],
  ): Promise<number>;
  /** Where an event stands in the log, or null when it is not (or no longer) retained. */
  eventSeq(id: string): Promise<number | null>;
  /** The last event's place in the log (0: none). */
  lastEventSeq(): Promise<number>;
  /** Events after `seq` in log order (of one mode; pings left out), at most `limit`. */
  eventsAfter(seq: number, mode: 'live' | 'test', limit: number): Promise<StoredEvent[]>;
  /**
   * Claims up to `limit` pending deliveries due at `nowMs` that no one holds, for `leaseMs`:
   * one attempt at a time per delivery across every process (a claim held past its lease, its
   * process dead, is taken over).
   */
  claimDeliveries(holder: string, nowMs: number, leaseMs: number, limit: number): Promise<ClaimedDelivery[]>;
  /** Records an attempt of a claimed delivery; false when the claim was lost (its lease ran out and another took it). */
  finishAttempt(id: string, token: string, outcome: AttemptOutcome): Promise<boolean>;
  /** A webhook's deliveries, newest first, at most `limit`, older than the delivery `before` when given. */
  listDeliveries(webhookId: string, limit: number, before?: string): Promise<DeliveryRecord[]>;
  /**
   * Forgets events created before `beforeMs` with no delivery pending, and their deliveries;
   * and stream interests expired before it. Returns the events deleted.
   */
  pruneEvents(beforeMs: number): Promise<number>;
  /** The matching lease: one process derives events from changes at a time. As claimIngestion. */
  claimEventLease(holder: string, nowMs: number, leaseMs: number): Promise<boolean>;
  releaseEventLease(holder: string): Promise<void>;
  /** Who holds the matching lease at `nowMs` (not expired); null: nobody. */
  eventLeaseHolder(nowMs: number): Promise<string | null>;
}

/** An open event stream's place among its key's `maxStreamsPerKey`. */
export interface StreamSlot {
  id: string;
  keyId: string;
  /** Epoch ms after which the slot is free unless renewed (a server that died frees its own). */
  expiresAt: number;
}
