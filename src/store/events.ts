import { createHash } from 'node:crypto';
import type { Protocol } from '../domain/enums.ts';

/**
 * The risk events' outbox (DECISIONS D22 in the repository's own docs/webhooks.md): who is
 * subscribed, the events, and each webhook delivery with its attempts. Written before any
 * attempt, so a crash loses nothing; claimed one attempt at a time across processes.
 */

export const EVENT_TYPES = [
  'position.health_factor_below',
  'position.liquidated',
  'oracle.stale',
  'oracle.recovered',
  'ping',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What a subscription narrows its events to; every filter given must match. */
export interface EventFilters {
  chainIds?: number[];
  protocols?: Protocol[];
  /** Market uniqueKeys, lower-case. */
  marketIds?: string[];
  /** Lower-case 0x addresses. */
  wallets?: string[];
  /** position.health_factor_below fires when a health factor crosses below this (default 1.1). */
  healthFactorBelow?: number;
}

/**
 * A webhook (`kind: 'webhook'`), or the interest of an event stream (`kind: 'stream'`: no URL;
 * expires unless a stream with those filters is open, so the events it wants are computed and
 * kept while it reconnects).
 */
export interface SubscriptionRecord {
  id: string;
  accountId: string;
  /** Test keys' subscriptions follow the sandbox served to test keys; live ones the live data. */
  mode: 'live' | 'test';
  kind: 'webhook' | 'stream';
  url: string | null;
  events: EventType[];
  filters: EventFilters;
  /** The signing secret as sealed (src/events/secrets.ts); null for a stream. */
  sealedSecret: string | null;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms after which a stream interest is forgotten; null for a webhook. */
  expiresAt: number | null;
}

/** One event, as stored and sent. */
export interface EventRecord {
  /** `evt_…`; derived from what happened where that is unique (a liquidation's log), so it is stored once. */
  id: string;
  mode: 'live' | 'test';
  type: EventType;
  /** Epoch ms. */
  createdAt: number;
  /** The whole event `{ id, type, createdAt, data }` as JSON: the body of every delivery. */
  body: string;
  /** What filters match on (null where the event has none). */
  chainId: number | null;
  protocol: string | null;
  marketKey: string | null;
  wallet: string | null;
  /** The subscription threshold a health-factor event crossed. */
  threshold: number | null;
  /** A ping goes to one webhook only (and never to streams). */
  webhookId?: string | null;
}

/** A stored event, with its place in the log (streams resume after it). */
export interface StoredEvent extends EventRecord {
  seq: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRecord {
  /** `dlv_…` */
  id: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  /** Epoch ms (the event's): retries stop 24 hours after it. */
  createdAt: number;
  status: DeliveryStatus;
  attempts: number;
  /** HTTP status of the last attempt; null when it got none (timeout, refused, blocked address). */
  lastStatus: number | null;
  lastError: string | null;
  /** Epoch ms; null once delivered or failed. */
  nextAttemptAt: number | null;
  deliveredAt: number | null;
}

/** A delivery claimed for one attempt, with what the attempt needs. */
export interface ClaimedDelivery extends DeliveryRecord {
  /** The claim's own token: only it records the attempt's outcome. */
  token: string;
  url: string;
  sealedSecret: string;
  body: string;
}

/** What an attempt did. */
export interface AttemptOutcome {
  at: number;
  status: DeliveryStatus;
  httpStatus: number | null;
  error: string | null;
  nextAttemptAt: number | null;
}

export type SubscriptionCreation = { ok: true } | { ok: false; reason: 'TOO_MANY'; active: number };

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
}

/** Subscription rows as stored (JSON columns as text). */
export interface SubscriptionRow {
  id: string;
  account_id: string;
  mode: string;
  kind: string;
  url: string | null;
  events: string;
  filters: string;
  secret: string | null;
  created_at: number | string | bigint;
  expires_at: number | string | bigint | null;
}

export function toSubscription(r: SubscriptionRow): SubscriptionRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    mode: r.mode === 'test' ? 'test' : 'live',
    kind: r.kind === 'stream' ? 'stream' : 'webhook',
    url: r.url,
    events: JSON.parse(r.events) as EventType[],
    filters: JSON.parse(r.filters) as EventFilters,
    sealedSecret: r.secret,
    createdAt: Number(r.created_at),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
  };
}

export interface EventRow {
  seq: number | string | bigint;
  id: string;
  mode: string;
  type: string;
  created_at: number | string | bigint;
  body: string;
  chain_id: number | string | bigint | null;
  protocol: string | null;
  market_key: string | null;
  wallet: string | null;
  threshold: number | null;
  webhook_id: string | null;
}

export function toEvent(r: EventRow): StoredEvent {
  return {
    seq: Number(r.seq),
    id: r.id,
    mode: r.mode === 'test' ? 'test' : 'live',
    type: r.type as EventType,
    createdAt: Number(r.created_at),
    body: r.body,
    chainId: r.chain_id === null ? null : Number(r.chain_id),
    protocol: r.protocol,
    marketKey: r.market_key,
    wallet: r.wallet,
    threshold: r.threshold,
    webhookId: r.webhook_id,
  };
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  created_at: number | string | bigint;
  status: string;
  attempts: number | string | bigint;
  last_status: number | string | bigint | null;
  last_error: string | null;
  next_attempt_at: number | string | bigint | null;
  delivered_at: number | string | bigint | null;
}

const num = (v: number | string | bigint | null): number | null => (v === null ? null : Number(v));

export function toDelivery(r: DeliveryRow): DeliveryRecord {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventType: r.event_type as EventType,
    createdAt: Number(r.created_at),
    status: r.status as DeliveryStatus,
    attempts: Number(r.attempts),
    lastStatus: num(r.last_status),
    lastError: r.last_error,
    nextAttemptAt: num(r.next_attempt_at),
    deliveredAt: num(r.delivered_at),
  };
}

/** Delivery ids: `dlv_` and a digest of the (webhook, event) pair, so a pair is one delivery everywhere. */
export function deliveryId(webhookId: string, eventId: string): string {
  return `dlv_${hash24(`${webhookId}:${eventId}`)}`;
}

/** 24 hex digits of SHA-256. */
export function hash24(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}
