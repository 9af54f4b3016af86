/**
 * Risk events: subscriptions, events and webhook deliveries, as the outbox keeps them
 * (src/store/ports/events.ts).
 */
import type { Protocol } from '../enums.ts';

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
