import { randomUUID } from 'node:crypto';
import type { Sql, TransactionSql } from 'postgres';
import { must } from '../../domain/must.ts';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryRecord,
  EventRecord,
  StoredEvent,
  SubscriptionCreation,
  SubscriptionRecord,
} from '../../domain/records/events.ts';
import {
  type DeliveryRow,
  deliveryId,
  type EventRow,
  type SubscriptionRow,
  toDelivery,
  toEvent,
  toSubscription,
} from '../events.ts';
import type { EventStore, StreamSlot } from '../ports/events.ts';

/** Runs a call on the store's serving pool (PostgresConnection.serve: deadlines, outage detection). */
export type Serve = <T>(run: (sql: Sql) => PromiseLike<T>) => Promise<T>;

/**
 * The events' outbox in PostgreSQL. Deliveries are claimed with `FOR UPDATE SKIP LOCKED` and a
 * lease: several servers each take different due deliveries, and a claim whose server died is
 * taken over once its lease has run out.
 */
export class PostgresEventStore implements EventStore {
  private readonly serve: Serve;

  constructor(serve: Serve) {
    this.serve = serve;
  }

  private async bump(tx: TransactionSql): Promise<number> {
    const [row] = await tx<{ value: string }[]>`
      UPDATE counters SET value = value + 1 WHERE name = 'subscriptions_version' RETURNING value`;
    return Number(must(row, 'the subscriptions_version counter').value);
  }

  private async insertSubscription(
    tx: TransactionSql,
    s: SubscriptionRecord,
    changed: number,
  ): Promise<void> {
    await tx`
      INSERT INTO event_subscriptions (id, account_id, mode, kind, url, events, filters, secret, created_at, expires_at, changed)
      VALUES (${s.id}, ${s.accountId}, ${s.mode}, ${s.kind}, ${s.url}, ${JSON.stringify(s.events)},
              ${JSON.stringify(s.filters)}, ${s.sealedSecret}, ${s.createdAt}, ${s.expiresAt}, ${changed})
      ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, changed = excluded.changed, deleted_at = NULL`;
  }

  async createSubscription(s: SubscriptionRecord, maxActive: number | null): Promise<SubscriptionCreation> {
    return this.serve((sql) =>
      sql.begin(async (tx): Promise<SubscriptionCreation> => {
        // One creation per account at a time: the count and the insert cannot interleave with another's.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`webhooks:${s.accountId}`}))`;
        const [row] = await tx<{ n: string }[]>`
          SELECT count(*) AS n FROM event_subscriptions
           WHERE account_id = ${s.accountId} AND mode = ${s.mode} AND kind = 'webhook' AND deleted_at IS NULL`;
        const n = Number(must(row, 'the count of subscriptions').n);
        if (maxActive !== null && n >= maxActive) return { ok: false, reason: 'TOO_MANY', active: n };
        await this.insertSubscription(tx, s, await this.bump(tx));
        return { ok: true };
      }),
    );
  }

  async listWebhooks(accountId: string, mode: 'live' | 'test'): Promise<SubscriptionRecord[]> {
    const rows = await this.serve(
      (sql) => sql<SubscriptionRow[]>`
        SELECT * FROM event_subscriptions
         WHERE account_id = ${accountId} AND mode = ${mode} AND kind = 'webhook' AND deleted_at IS NULL
         ORDER BY created_at, id`,
    );
    return rows.map(toSubscription);
  }

  async getSubscription(id: string): Promise<SubscriptionRecord | null> {
    const rows = await this.serve(
      (sql) =>
        sql<SubscriptionRow[]>`SELECT * FROM event_subscriptions WHERE id = ${id} AND deleted_at IS NULL`,
    );
    return rows[0] ? toSubscription(rows[0]) : null;
  }

  async deleteWebhook(accountId: string, id: string, nowMs: number): Promise<boolean> {
    return this.serve((sql) =>
      sql.begin(async (tx) => {
        const r = await tx`
          UPDATE event_subscriptions SET deleted_at = ${nowMs}
           WHERE id = ${id} AND account_id = ${accountId} AND kind = 'webhook' AND deleted_at IS NULL`;
        if (r.count === 0) return false;
        const v = await this.bump(tx);
        await tx`UPDATE event_subscriptions SET changed = ${v} WHERE id = ${id}`;
        await tx`
          UPDATE event_deliveries SET status = 'failed', last_error = 'webhook deleted', next_attempt_at = NULL
           WHERE webhook_id = ${id} AND status = 'pending'`;
        return true;
      }),
    );
  }

  async touchStreamInterest(s: SubscriptionRecord): Promise<void> {
    await this.serve((sql) => sql.begin(async (tx) => this.insertSubscription(tx, s, await this.bump(tx))));
  }

  async claimStreamSlot(slot: StreamSlot, limit: number, nowMs: number): Promise<boolean> {
    return this.serve((sql) =>
      sql.begin(async (tx) => {
        // One claim of a key at a time across the servers: the count and the insert agree.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`stream-slots:${slot.keyId}`}))`;
        await tx`DELETE FROM stream_slots WHERE key_id = ${slot.keyId} AND expires_at <= ${nowMs}`;
        const [held] = await tx<
          { n: string }[]
        >`SELECT count(*) AS n FROM stream_slots WHERE key_id = ${slot.keyId}`;
        if (Number(must(held, 'the count of stream slots').n) >= limit) return false;
        await tx`INSERT INTO stream_slots (id, key_id, expires_at) VALUES (${slot.id}, ${slot.keyId}, ${slot.expiresAt})`;
        return true;
      }),
    );
  }

  async renewStreamSlot(slot: StreamSlot): Promise<boolean> {
    const r = await this.serve(
      (sql) => sql`UPDATE stream_slots SET expires_at = ${slot.expiresAt} WHERE id = ${slot.id}`,
    );
    return r.count > 0;
  }

  async releaseStreamSlot(id: string): Promise<void> {
    await this.serve((sql) => sql`DELETE FROM stream_slots WHERE id = ${id}`);
  }

  async activeSubscriptions(nowMs: number): Promise<SubscriptionRecord[]> {
    const rows = await this.serve(
      (sql) => sql<SubscriptionRow[]>`
        SELECT * FROM event_subscriptions WHERE deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ${nowMs})`,
    );
    return rows.map(toSubscription);
  }

  async subscriptionsVersion(): Promise<number> {
    const [row] = await this.serve(
      (sql) => sql<{ value: string }[]>`SELECT value FROM counters WHERE name = 'subscriptions_version'`,
    );
    return Number(must(row, 'the subscriptions_version counter').value);
  }

  async appendEvents(
    events: readonly EventRecord[],
    deliveries: readonly { eventId: string; webhookId: string }[],
  ): Promise<number> {
    if (events.length === 0 && deliveries.length === 0) return 0;
    return this.serve((sql) =>
      sql.begin(async (tx) => {
        let added = 0;
        if (events.length > 0) {
          const r = await tx`
            INSERT INTO events (id, mode, type, created_at, body, chain_id, protocol, market_key, wallet, threshold, webhook_id)
            SELECT * FROM unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.mode)}::text[],
                   ${events.map((e) => e.type)}::text[], ${events.map((e) => e.createdAt)}::bigint[],
                   ${events.map((e) => e.body)}::text[], ${events.map((e) => e.chainId) as number[]}::bigint[],
                   ${events.map((e) => e.protocol) as string[]}::text[], ${events.map((e) => e.marketKey) as string[]}::text[],
                   ${events.map((e) => e.wallet) as string[]}::text[], ${events.map((e) => e.threshold) as number[]}::float8[],
                   ${events.map((e) => e.webhookId ?? null) as string[]}::text[])
            ORDER BY 4
            ON CONFLICT (id) DO NOTHING`;
          added = r.count;
        }
        if (deliveries.length > 0)
          await tx`
            INSERT INTO event_deliveries (id, webhook_id, event_id, event_type, created_at, status, next_attempt_at)
            SELECT d.id, d.webhook_id, e.id, e.type, e.created_at, 'pending', e.created_at
              FROM unnest(${deliveries.map((d) => deliveryId(d.webhookId, d.eventId))}::text[],
                          ${deliveries.map((d) => d.webhookId)}::text[], ${deliveries.map((d) => d.eventId)}::text[])
                   AS d(id, webhook_id, event_id)
              JOIN events e ON e.id = d.event_id
            ON CONFLICT (id) DO NOTHING`;
        return added;
      }),
    );
  }

  async eventSeq(id: string): Promise<number | null> {
    const rows = await this.serve((sql) => sql<{ seq: string }[]>`SELECT seq FROM events WHERE id = ${id}`);
    return rows[0] ? Number(rows[0].seq) : null;
  }

  async lastEventSeq(): Promise<number> {
    const [row] = await this.serve(
      (sql) => sql<{ seq: string | null }[]>`SELECT max(seq) AS seq FROM events`,
    );
    return Number(row?.seq ?? 0);
  }

  async eventsAfter(seq: number, mode: 'live' | 'test', limit: number): Promise<StoredEvent[]> {
    const rows = await this.serve(
      (sql) => sql<EventRow[]>`
        SELECT * FROM events WHERE seq > ${seq} AND mode = ${mode} AND type <> 'ping' ORDER BY seq LIMIT ${limit}`,
    );
    return rows.map(toEvent);
  }

  async claimDeliveries(
    holder: string,
    nowMs: number,
    leaseMs: number,
    limit: number,
  ): Promise<ClaimedDelivery[]> {
    const token = `${holder}:${randomUUID()}`;
    const rows = await this.serve(
      (sql) => sql<(DeliveryRow & { url: string; secret: string; body: string })[]>`
        WITH due AS (
          SELECT id FROM event_deliveries
           WHERE status = 'pending' AND next_attempt_at <= ${nowMs} AND lease_until <= ${nowMs}
           ORDER BY next_attempt_at LIMIT ${limit}
           FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE event_deliveries d SET lease_token = ${token}, lease_until = ${nowMs + leaseMs}
            FROM due WHERE d.id = due.id
          RETURNING d.*
        )
        SELECT c.id, c.webhook_id, c.event_id, c.event_type, c.created_at, c.status, c.attempts, c.last_status,
               c.last_error, c.next_attempt_at, c.delivered_at, s.url, s.secret, e.body
          FROM claimed c JOIN events e ON e.id = c.event_id JOIN event_subscriptions s ON s.id = c.webhook_id`,
    );
    return rows.map((r) => ({ ...toDelivery(r), token, url: r.url, sealedSecret: r.secret, body: r.body }));
  }

  async finishAttempt(id: string, token: string, o: AttemptOutcome): Promise<boolean> {
    const r = await this.serve(
      (sql) => sql`
        UPDATE event_deliveries SET status = ${o.status}, attempts = attempts + 1, last_status = ${o.httpStatus},
               last_error = ${o.error}, next_attempt_at = ${o.nextAttemptAt},
               delivered_at = ${o.status === 'delivered' ? o.at : null}, lease_token = NULL, lease_until = 0
         WHERE id = ${id} AND lease_token = ${token} AND status = 'pending'`,
    );
    return r.count === 1;
  }

  async listDeliveries(webhookId: string, limit: number, before?: string): Promise<DeliveryRecord[]> {
    const rows = await this.serve(
      (sql) => sql<DeliveryRow[]>`
        SELECT id, webhook_id, event_id, event_type, created_at, status, attempts, last_status, last_error,
               next_attempt_at, delivered_at
          FROM event_deliveries d
         WHERE webhook_id = ${webhookId}
           ${
             before === undefined
               ? sql``
               : sql`AND (created_at, id) < (SELECT created_at, id FROM event_deliveries WHERE id = ${before})`
           }
         ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    );
    return rows.map(toDelivery);
  }

  async pruneEvents(beforeMs: number): Promise<number> {
    return this.serve((sql) =>
      sql.begin(async (tx) => {
        const gone = await tx`
          DELETE FROM events e WHERE e.created_at < ${beforeMs}
             AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')`;
        await tx`
          DELETE FROM event_deliveries d WHERE d.created_at < ${beforeMs} AND d.status <> 'pending'
             AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)`;
        await tx`DELETE FROM event_subscriptions WHERE expires_at IS NOT NULL AND expires_at < ${beforeMs}`;
        return gone.count;
      }),
    );
  }

  async claimEventLease(holder: string, nowMs: number, leaseMs: number): Promise<boolean> {
    const rows = await this.serve(
      (sql) => sql`
        INSERT INTO event_lease (id, holder, expires_at) VALUES (1, ${holder}, ${nowMs + leaseMs})
        ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
        WHERE event_lease.holder = excluded.holder OR event_lease.expires_at <= ${nowMs}
        RETURNING holder`,
    );
    return rows.length === 1;
  }

  async releaseEventLease(holder: string): Promise<void> {
    await this.serve((sql) => sql`UPDATE event_lease SET expires_at = 0 WHERE holder = ${holder}`);
  }

  async eventLeaseHolder(nowMs: number): Promise<string | null> {
    const rows = await this.serve(
      (sql) => sql`SELECT holder FROM event_lease WHERE id = 1 AND expires_at > ${nowMs}`,
    );
    return (rows[0]?.['holder'] as string | undefined) ?? null;
  }
}
