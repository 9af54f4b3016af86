import { createHash } from 'node:crypto';
import type {
  DeliveryRecord,
  DeliveryStatus,
  EventFilters,
  EventType,
  StoredEvent,
  SubscriptionRecord,
} from '../domain/records/events.ts';

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
