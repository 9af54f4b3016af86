import type {
  AccountScope,
  QuotaCaps,
  ReservedUsage,
  UsageEvent,
  UsageReservation,
  UsageRow,
  UsageTotals,
} from '../../domain/records/usage.ts';
import type { UsageStore } from '../ports/usage.ts';
import {
  accountDayId,
  aggregateUsage,
  decideReservations,
  replayedReservations,
  reservationAccountDays,
  reservationDays,
  SQLITE_USAGE_BATCH_PRUNE_EVERY,
  SQLITE_USAGE_BATCH_RETENTION_MS,
  USAGE_BATCH_PRUNE_PER_WRITE,
} from '../usage.ts';
import type { SqliteConnection } from './connection.ts';

/** Usage counts and quota reservations in the SQLite file. */
export class SqliteUsage implements UsageStore {
  readonly #db: SqliteConnection;
  /** Writes to go before the next prune of expired batch ids (0: this one prunes). */
  #pruneIn = 0;

  constructor(db: SqliteConnection) {
    this.#db = db;
  }

  /** One transaction: the batch id claimed, then the counts, unless the id was already there. */
  async recordUsage(events: readonly UsageEvent[], batchId: string): Promise<void> {
    if (events.length === 0) return;
    const upsert = this.#db.stmt(
      `INSERT INTO usage (key_id, day, endpoint, requests, monthly) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day, endpoint) DO UPDATE
         SET requests = requests + excluded.requests, monthly = monthly + excluded.monthly`,
    );
    const rows = aggregateUsage(events);
    this.#db.transaction(() => {
      if (!this.claimBatch(batchId)) return;
      for (const r of rows) upsert.run(r.keyId, r.day, r.endpoint, r.requests, r.monthly);
    });
  }

  /**
   * Records usage batch `id` as applied (inside the caller's write transaction); false when it
   * already was. Deletes a few ids past their retention first (USAGE_BATCH_PRUNE_PER_WRITE):
   * on every write while there is a backlog, else on one in SQLITE_USAGE_BATCH_PRUNE_EVERY.
   */
  private claimBatch(id: string): boolean {
    const now = Math.floor(this.#db.clock.now());
    if (this.#pruneIn > 0) this.#pruneIn--;
    else {
      const pruned = this.#db
        .stmt(
          'DELETE FROM usage_batches WHERE id IN (SELECT id FROM usage_batches WHERE applied_at < ? LIMIT ?)',
        )
        .run(now - SQLITE_USAGE_BATCH_RETENTION_MS, USAGE_BATCH_PRUNE_PER_WRITE);
      this.#pruneIn =
        Number(pruned.changes) >= USAGE_BATCH_PRUNE_PER_WRITE ? 0 : SQLITE_USAGE_BATCH_PRUNE_EVERY - 1;
    }
    const r = this.#db
      .stmt('INSERT INTO usage_batches (id, applied_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING')
      .run(id, now);
    return r.changes === 1;
  }

  async usageTotals(keyId: string, day: string): Promise<UsageTotals> {
    return this.totalsOf(keyId, day);
  }

  async accountUsageTotals(scope: AccountScope, day: string, keyQuotas: QuotaCaps): Promise<UsageTotals> {
    return this.accountTotalsOf(scope, day, keyQuotas);
  }

  private accountTotalsOf(scope: AccountScope, day: string, keyQuotas: QuotaCaps): UsageTotals {
    const month = day.slice(0, 7);
    const row = this.#db
      .stmt(
        `SELECT COALESCE(SUM(MIN(d, ?)), 0) AS day_used, COALESCE(SUM(MIN(m, ?)), 0) AS month_used
         FROM (SELECT SUM(CASE WHEN u.day = ? THEN u.requests ELSE 0 END) AS d, SUM(u.monthly) AS m
                 FROM api_keys k JOIN usage u ON u.key_id = k.id
                WHERE k.account_id = ? AND k.tier = ? AND u.day >= ? AND u.day <= ?
                GROUP BY k.id)`,
      )
      .get(
        keyQuotas.daily ?? Number.MAX_SAFE_INTEGER,
        keyQuotas.monthly ?? Number.MAX_SAFE_INTEGER,
        day,
        scope.accountId,
        scope.tier,
        `${month}-01`,
        `${month}-31`,
      ) as { day_used: number; month_used: number };
    return { dayUsed: row.day_used, monthUsed: row.month_used };
  }

  /**
   * One transaction under the write lock (BEGIN IMMEDIATE): the totals read and the counts
   * written cannot interleave with another reservation, from this process or another one
   * sharing the file.
   */
  async reserveUsage(requests: readonly UsageReservation[], batchId: string): Promise<ReservedUsage[]> {
    if (requests.length === 0) return [];
    const upsert = this.#db.stmt(
      `INSERT INTO usage (key_id, day, endpoint, requests, monthly) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day, endpoint) DO UPDATE
         SET requests = requests + excluded.requests, monthly = monthly + excluded.monthly`,
    );
    return this.#db.transaction(() => {
      const fresh = this.claimBatch(batchId);
      const totals = new Map<string, UsageTotals>();
      for (const { keyId, day } of reservationDays(requests)) {
        totals.set(`${keyId}\u0000${day}`, this.totalsOf(keyId, day));
      }
      if (!fresh) return replayedReservations(requests, totals);
      const accountTotals = new Map<string, UsageTotals>();
      for (const a of reservationAccountDays(requests)) {
        accountTotals.set(accountDayId(a.scope, a.day), this.accountTotalsOf(a.scope, a.day, a));
      }
      const { results, events } = decideReservations(requests, totals, accountTotals);
      for (const r of aggregateUsage(events)) upsert.run(r.keyId, r.day, r.endpoint, r.requests, r.monthly);
      return results;
    });
  }

  private totalsOf(keyId: string, day: string): UsageTotals {
    const month = day.slice(0, 7);
    const row = this.#db
      .stmt(
        `SELECT COALESCE(SUM(CASE WHEN day = ? THEN requests ELSE 0 END), 0) AS day_used,
              COALESCE(SUM(monthly), 0) AS month_used
         FROM usage WHERE key_id = ? AND day >= ? AND day <= ?`,
      )
      .get(day, keyId, `${month}-01`, `${month}-31`) as { day_used: number; month_used: number };
    return { dayUsed: row.day_used, monthUsed: row.month_used };
  }

  async usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]> {
    const rows = this.#db
      .stmt(
        'SELECT day, endpoint, requests FROM usage WHERE key_id = ? AND day >= ? AND day <= ? ORDER BY day, endpoint',
      )
      .all(keyId, fromDay, toDay) as unknown as UsageRow[];
    return rows.map((r) => ({ day: r.day, endpoint: r.endpoint, requests: r.requests }));
  }
}
