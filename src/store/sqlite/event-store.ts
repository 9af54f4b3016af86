import { randomUUID } from 'node:crypto';
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
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
import { isSqliteBusy, withoutWaiting } from './connection.ts';

const DELIVERY_COLUMNS = `d.id, d.webhook_id, d.event_id, d.event_type, d.created_at, d.status, d.attempts,
  d.last_status, d.last_error, d.next_attempt_at, d.delivered_at`;

/** The events' outbox in the embedded store's file (one writer at a time: its transactions are the lock). */
export class SqliteEventStore implements EventStore {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.db = db;
  }

  private stmt(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  private transaction<T>(fn: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  /**
   * `fn` in a write transaction if the write lock is free now; undefined if another connection
   * holds it (SQLITE_BUSY: no wait). For the periodic work that can be done on its next pass, so
   * that it never holds the event loop waiting for another connection's write.
   */
  private tryTransaction<T>(fn: () => T): T | undefined {
    try {
      withoutWaiting(this.db, () => this.db.exec('BEGIN IMMEDIATE'));
    } catch (err) {
      if (isSqliteBusy(err)) return undefined;
      throw err;
    }
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      // SQLite may have rolled back already (a full disk): the error to report is this one.
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw err;
    }
  }

  /** Moves the subscriptions' version on; returns the new one (inside a transaction). */
  private bump(): number {
    const row = this.stmt(
      `UPDATE counters SET value = value + 1 WHERE name = 'subscriptions_version' RETURNING value`,
    ).get() as { value: number };
    return Number(row.value);
  }

  private insertSubscription(s: SubscriptionRecord, changed: number): void {
    this.stmt(
      `INSERT INTO event_subscriptions (id, account_id, mode, kind, url, events, filters, secret, created_at, expires_at, changed)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, changed = excluded.changed, deleted_at = NULL`,
    ).run(
      s.id,
      s.accountId,
      s.mode,
      s.kind,
      s.url,
      JSON.stringify(s.events),
      JSON.stringify(s.filters),
      s.sealedSecret,
      s.createdAt,
      s.expiresAt,
      changed,
    );
  }

  async createSubscription(s: SubscriptionRecord, maxActive: number | null): Promise<SubscriptionCreation> {
    return this.transaction((): SubscriptionCreation => {
      const { n } = this.stmt(
        `SELECT count(*) AS n FROM event_subscriptions
          WHERE account_id = ? AND mode = ? AND kind = 'webhook' AND deleted_at IS NULL`,
      ).get(s.accountId, s.mode) as { n: number };
      if (maxActive !== null && Number(n) >= maxActive)
        return { ok: false, reason: 'TOO_MANY', active: Number(n) };
      this.insertSubscription(s, this.bump());
      return { ok: true };
    });
  }

  async listWebhooks(accountId: string, mode: 'live' | 'test'): Promise<SubscriptionRecord[]> {
    const rows = this.stmt(
      `SELECT * FROM event_subscriptions WHERE account_id = ? AND mode = ? AND kind = 'webhook' AND deleted_at IS NULL
        ORDER BY created_at, id`,
    ).all(accountId, mode) as unknown as SubscriptionRow[];
    return rows.map(toSubscription);
  }

  async getSubscription(id: string): Promise<SubscriptionRecord | null> {
    const row = this.stmt('SELECT * FROM event_subscriptions WHERE id = ? AND deleted_at IS NULL').get(id) as
      | SubscriptionRow
      | undefined;
    return row ? toSubscription(row) : null;
  }

  async deleteWebhook(accountId: string, id: string, nowMs: number): Promise<boolean> {
    return this.transaction(() => {
      const r = this.stmt(
        `UPDATE event_subscriptions SET deleted_at = ?, changed = ?
          WHERE id = ? AND account_id = ? AND kind = 'webhook' AND deleted_at IS NULL`,
      ).run(nowMs, 0, id, accountId);
      if (Number(r.changes) === 0) return false;
      const v = this.bump();
      this.stmt('UPDATE event_subscriptions SET changed = ? WHERE id = ?').run(v, id);
      this.stmt(
        `UPDATE event_deliveries SET status = 'failed', last_error = 'webhook deleted', next_attempt_at = NULL
          WHERE webhook_id = ? AND status = 'pending'`,
      ).run(id);
      return true;
    });
  }

  async touchStreamInterest(s: SubscriptionRecord): Promise<void> {
    this.transaction(() => this.insertSubscription(s, this.bump()));
  }

  async claimStreamSlot(slot: StreamSlot, limit: number, nowMs: number): Promise<boolean> {
    return this.transaction(() => {
      this.stmt(`DELETE FROM stream_slots WHERE key_id = ? AND expires_at <= ?`).run(slot.keyId, nowMs);
      const held = this.stmt(`SELECT count(*) AS n FROM stream_slots WHERE key_id = ?`).get(slot.keyId) as {
        n: number;
      };
      if (Number(held.n) >= limit) return false;
      this.stmt(`INSERT INTO stream_slots (id, key_id, expires_at) VALUES (?, ?, ?)`).run(
        slot.id,
        slot.keyId,
        slot.expiresAt,
      );
      return true;
    });
  }

  async renewStreamSlot(slot: StreamSlot): Promise<boolean> {
    const r = this.stmt(`UPDATE stream_slots SET expires_at = ? WHERE id = ?`).run(slot.expiresAt, slot.id);
    return Number(r.changes) > 0;
  }

  async releaseStreamSlot(id: string): Promise<void> {
    this.stmt(`DELETE FROM stream_slots WHERE id = ?`).run(id);
  }

  async activeSubscriptions(nowMs: number): Promise<SubscriptionRecord[]> {
    const rows = this.stmt(
      `SELECT * FROM event_subscriptions WHERE deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`,
    ).all(nowMs) as unknown as SubscriptionRow[];
    return rows.map(toSubscription);
  }

  async subscriptionsVersion(): Promise<number> {
    const row = this.stmt(`SELECT value FROM counters WHERE name = 'subscriptions_version'`).get() as {
      value: number;
    };
    return Number(row.value);
  }

  async appendEvents(
    events: readonly EventRecord[],
    deliveries: readonly { eventId: string; webhookId: string }[],
  ): Promise<number> {
    if (events.length === 0 && deliveries.length === 0) return 0;
    return this.transaction(() => {
      let added = 0;
      const ins = this.stmt(
        `INSERT INTO events (id, mode, type, created_at, body, chain_id, protocol, market_key, wallet, threshold, webhook_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
      );
      for (const e of events) {
        const r = ins.run(
          e.id,
          e.mode,
          e.type,
          e.createdAt,
          e.body,
          e.chainId,
          e.protocol,
          e.marketKey,
          e.wallet,
          e.threshold,
          e.webhookId ?? null,
        );
        added += Number(r.changes);
      }
      const del = this.stmt(
        `INSERT INTO event_deliveries (id, webhook_id, event_id, event_type, created_at, status, next_attempt_at)
         SELECT ?, ?, e.id, e.type, e.created_at, 'pending', e.created_at FROM events e WHERE e.id = ?
         ON CONFLICT (id) DO NOTHING`,
      );
      for (const d of deliveries) del.run(deliveryId(d.webhookId, d.eventId), d.webhookId, d.eventId);
      return added;
    });
  }

  async eventSeq(id: string): Promise<number | null> {
    const row = this.stmt('SELECT seq FROM events WHERE id = ?').get(id) as { seq: number } | undefined;
    return row ? Number(row.seq) : null;
  }

  async lastEventSeq(): Promise<number> {
    const row = this.stmt('SELECT max(seq) AS seq FROM events').get() as { seq: number | null };
    return Number(row.seq ?? 0);
  }

  async eventsAfter(seq: number, mode: 'live' | 'test', limit: number): Promise<StoredEvent[]> {
    const rows = this.stmt(
      `SELECT * FROM events WHERE seq > ? AND mode = ? AND type <> 'ping' ORDER BY seq LIMIT ?`,
    ).all(seq, mode, limit) as unknown as EventRow[];
    return rows.map(toEvent);
  }

  async claimDeliveries(
    holder: string,
    nowMs: number,
    leaseMs: number,
    limit: number,
  ): Promise<ClaimedDelivery[]> {
    const due = `FROM event_deliveries d
      WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND d.lease_until <= ?`;
    // Nothing due (most passes): answered by a read, without the write lock.
    if (!this.stmt(`SELECT EXISTS (SELECT 1 ${due}) AS due`).get(nowMs, nowMs)?.due) return [];
    const claimed = this.tryTransaction(() => {
      const rows = this.stmt(
        `SELECT ${DELIVERY_COLUMNS}, s.url, s.secret, e.body FROM event_deliveries d
           JOIN events e ON e.id = d.event_id JOIN event_subscriptions s ON s.id = d.webhook_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND d.lease_until <= ?
          ORDER BY d.next_attempt_at LIMIT ?`,
      ).all(nowMs, nowMs, limit) as unknown as (DeliveryRow & {
        url: string;
        secret: string;
        body: string;
      })[];
      const lease = this.stmt('UPDATE event_deliveries SET lease_token = ?, lease_until = ? WHERE id = ?');
      return rows.map((r) => {
        const token = `${holder}:${randomUUID()}`;
        lease.run(token, nowMs + leaseMs, r.id);
        return { ...toDelivery(r), token, url: r.url, sealedSecret: r.secret, body: r.body };
      });
    });
    // Another connection writes (the history's background writes): claimed on the next pass.
    return claimed ?? [];
  }

  async finishAttempt(id: string, token: string, o: AttemptOutcome): Promise<boolean> {
    const r = this.stmt(
      `UPDATE event_deliveries SET status = ?, attempts = attempts + 1, last_status = ?, last_error = ?,
              next_attempt_at = ?, delivered_at = ?, lease_token = NULL, lease_until = 0
        WHERE id = ? AND lease_token = ? AND status = 'pending'`,
    ).run(
      o.status,
      o.httpStatus,
      o.error,
      o.nextAttemptAt,
      o.status === 'delivered' ? o.at : null,
      id,
      token,
    );
    return Number(r.changes) === 1;
  }

  async listDeliveries(webhookId: string, limit: number, before?: string): Promise<DeliveryRecord[]> {
    const args: SQLInputValue[] = [webhookId];
    let where = 'd.webhook_id = ?';
    if (before !== undefined) {
      where += ` AND (d.created_at, d.id) < (SELECT created_at, id FROM event_deliveries WHERE id = ?)`;
      args.push(before);
    }
    args.push(limit);
    const rows = this.stmt(
      `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries d WHERE ${where} ORDER BY d.created_at DESC, d.id DESC LIMIT ?`,
    ).all(...args) as unknown as DeliveryRow[];
    return rows.map(toDelivery);
  }

  async pruneEvents(beforeMs: number): Promise<number> {
    return this.transaction(() => {
      const gone = this.stmt(
        `DELETE FROM events WHERE created_at < ?
           AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = events.id AND d.status = 'pending')
         RETURNING id`,
      ).all(beforeMs) as { id: string }[];
      this.stmt(
        `DELETE FROM event_deliveries WHERE created_at < ? AND status <> 'pending'
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = event_deliveries.event_id)`,
      ).run(beforeMs);
      this.stmt(`DELETE FROM event_subscriptions WHERE expires_at IS NOT NULL AND expires_at < ?`).run(
        beforeMs,
      );
      return gone.length;
    });
  }

  async claimEventLease(holder: string, nowMs: number, leaseMs: number): Promise<boolean> {
    // Read first, without the write lock: a lease another holds needs no write.
    const held = this.stmt('SELECT holder, expires_at FROM event_lease WHERE id = 1').get() as
      | { holder: string; expires_at: number }
      | undefined;
    if (held && held.holder !== holder && held.expires_at > nowMs) return false;
    const claim = () =>
      this.stmt(
        `INSERT INTO event_lease (id, holder, expires_at) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE event_lease.holder = excluded.holder OR event_lease.expires_at <= ?`,
      ).run(holder, nowMs + leaseMs, nowMs);
    const taken = this.tryTransaction(claim);
    if (taken !== undefined) return Number(taken.changes) === 1;
    // Another connection writes. A lease of this holder's with more than a quarter of its length
    // left stays held, renewed on the next pass; closer to its end, the renewal waits its turn.
    if (held?.holder === holder && held.expires_at - nowMs > leaseMs / 4) return true;
    return Number(this.transaction(claim).changes) === 1;
  }

  async releaseEventLease(holder: string): Promise<void> {
    this.stmt('UPDATE event_lease SET expires_at = 0 WHERE holder = ?').run(holder);
  }

  async eventLeaseHolder(nowMs: number): Promise<string | null> {
    const row = this.stmt('SELECT holder FROM event_lease WHERE id = 1 AND expires_at > ?').get(nowMs) as
      | { holder: string }
      | undefined;
    return row?.holder ?? null;
  }
}
