import type { Sql, TransactionSql } from 'postgres';
import type {
  AccountScope,
  QuotaCaps,
  ReservedUsage,
  UsageEvent,
  UsageReservation,
  UsageRow,
  UsageTotals,
} from '../../domain/records/usage.ts';
import { compare } from '../history.ts';
import type { UsageStore } from '../ports/usage.ts';
import {
  accountDayId,
  aggregateUsage,
  decideReservations,
  replayedReservations,
  reservationAccountDays,
  reservationDays,
  USAGE_BATCH_PRUNE_PER_WRITE,
  USAGE_BATCH_RETENTION_MS,
  type UsageIncrement,
} from '../usage.ts';
import type { PostgresConnection } from './connection.ts';
import { LOCK_USAGE } from './locks.ts';

/** Usage counts and quota reservations in PostgreSQL. */
export class PostgresUsage implements UsageStore {
  readonly #db: PostgresConnection;

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  /**
   * One statement for the whole batch (atomic, one round trip): the batch id is inserted
   * (`ON CONFLICT DO NOTHING RETURNING`), and the counts are upserted only if it came back, so
   * a batch already applied, or being applied by a retry still under way on the server (the
   * insert waits for it), changes nothing. Repeated (key, day, endpoint) events are folded into
   * one increment each; rows go in a fixed order so two concurrent batches touching the same
   * rows cannot deadlock.
   */
  async recordUsage(events: readonly UsageEvent[], batchId: string): Promise<void> {
    if (events.length === 0) return;
    const rows = aggregateUsage(events).sort(byUsageRow);
    await this.#db.serve(
      (sql) => sql`
      WITH pruned AS (${this.#pruneBatches(sql)}),
      batch AS (
        INSERT INTO usage_batches (id, applied_at) VALUES (${batchId}, ${Math.floor(this.#db.clock.now())})
        ON CONFLICT (id) DO NOTHING RETURNING id)
      INSERT INTO usage (key_id, day, endpoint, requests, monthly)
      SELECT * FROM unnest(
        ${rows.map((r) => r.keyId)}::text[],
        ${rows.map((r) => r.day)}::text[],
        ${rows.map((r) => r.endpoint)}::text[],
        ${rows.map((r) => r.requests)}::bigint[],
        ${rows.map((r) => r.monthly)}::bigint[])
      WHERE EXISTS (SELECT 1 FROM batch)
      ON CONFLICT (key_id, day, endpoint) DO UPDATE
        SET requests = usage.requests + excluded.requests, monthly = usage.monthly + excluded.monthly`,
    );
  }

  /**
   * A statement (for a data-modifying CTE or on its own) deleting a few usage batch ids past
   * their retention (USAGE_BATCH_PRUNE_PER_WRITE): every write prunes as it adds one, so there
   * is never a backlog to delete at once. Rows another writer is deleting are skipped.
   */
  #pruneBatches(sql: Sql | TransactionSql) {
    const before = Math.floor(this.#db.clock.now()) - USAGE_BATCH_RETENTION_MS;
    return sql`
      DELETE FROM usage_batches WHERE id IN (
        SELECT id FROM usage_batches WHERE applied_at < ${before}
        LIMIT ${USAGE_BATCH_PRUNE_PER_WRITE} FOR UPDATE SKIP LOCKED)`;
  }

  async usageTotals(keyId: string, day: string): Promise<UsageTotals> {
    const month = day.slice(0, 7);
    const [row] = await this.#db.serve(
      (sql) => sql`
      SELECT COALESCE(SUM(CASE WHEN day = ${day} THEN requests ELSE 0 END), 0)::bigint AS day_used,
             COALESCE(SUM(monthly), 0)::bigint AS month_used
        FROM usage WHERE key_id = ${keyId} AND day >= ${`${month}-01`} AND day <= ${`${month}-31`}`,
    );
    return { dayUsed: Number(row?.day_used), monthUsed: Number(row?.month_used) };
  }

  async accountUsageTotals(scope: AccountScope, day: string, keyQuotas: QuotaCaps): Promise<UsageTotals> {
    return this.#db.serve((sql) => this.#accountTotals(sql, scope, day, keyQuotas));
  }

  async #accountTotals(
    sql: Sql | TransactionSql,
    scope: AccountScope,
    day: string,
    keyQuotas: QuotaCaps,
  ): Promise<UsageTotals> {
    const month = day.slice(0, 7);
    const daily = keyQuotas.daily ?? Number.MAX_SAFE_INTEGER;
    const monthly = keyQuotas.monthly ?? Number.MAX_SAFE_INTEGER;
    const [row] = await sql`
      SELECT COALESCE(SUM(LEAST(d, ${daily}::bigint)), 0)::bigint AS day_used,
             COALESCE(SUM(LEAST(m, ${monthly}::bigint)), 0)::bigint AS month_used
        FROM (SELECT SUM(CASE WHEN u.day = ${day} THEN u.requests ELSE 0 END) AS d, SUM(u.monthly) AS m
                FROM api_keys k JOIN usage u ON u.key_id = k.id
               WHERE k.account_id = ${scope.accountId} AND k.tier = ${scope.tier}
                 AND u.day >= ${`${month}-01`} AND u.day <= ${`${month}-31`}
               GROUP BY k.id) per_key`;
    return { dayUsed: Number(row?.day_used), monthUsed: Number(row?.month_used) };
  }

  /**
   * One transaction: per-key advisory locks (taken in key order, so two batches cannot
   * deadlock), the batch id claimed (a batch already applied only reads), the totals of every
   * (key, day) of the batch in one query, the decisions, then one upsert. Reservations of one
   * key from any number of processes are serialized; plain recordUsage() batches (counts
   * already decided in Redis) are not held up by them.
   */
  async reserveUsage(requests: readonly UsageReservation[], batchId: string): Promise<ReservedUsage[]> {
    if (requests.length === 0) return [];
    const days = reservationDays(requests);
    // Locks are taken in the order of their ids (hashes of the key ids, distinct): two batches
    // whose keys' hashes collide still lock in one order, so they cannot deadlock.
    const accountDays = reservationAccountDays(requests);
    // The account bounds are locked too (their reservations from any key serialize), in the same order.
    const keys = [
      ...new Set([
        ...days.map((d) => d.keyId),
        ...accountDays.map((a) => `account:${a.scope.accountId}:${a.scope.tier}`),
      ]),
    ];
    const results = await this.#db.serve(
      (sql) =>
        sql.begin(async (tx) => {
          await tx`
        SELECT pg_advisory_xact_lock(${LOCK_USAGE}, h)
          FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest(${keys}::text[]) AS k ORDER BY h) AS ordered`;
          await this.#pruneBatches(tx);
          const claimed = await tx`
        INSERT INTO usage_batches (id, applied_at) VALUES (${batchId}, ${Math.floor(this.#db.clock.now())})
        ON CONFLICT (id) DO NOTHING RETURNING id`;
          const rows = await tx`
        SELECT d.k, d.d,
               COALESCE(SUM(CASE WHEN u.day = d.d THEN u.requests ELSE 0 END), 0)::bigint AS day_used,
               COALESCE(SUM(u.monthly), 0)::bigint AS month_used
          FROM unnest(${days.map((d) => d.keyId)}::text[], ${days.map((d) => d.day)}::text[]) AS d(k, d)
          LEFT JOIN usage u
            ON u.key_id = d.k AND u.day >= left(d.d, 7) || '-01' AND u.day <= left(d.d, 7) || '-31'
         GROUP BY d.k, d.d`;
          const totals = new Map<string, UsageTotals>();
          for (const r of rows) {
            totals.set(`${r.k}\u0000${r.d}`, {
              dayUsed: Number(r.day_used),
              monthUsed: Number(r.month_used),
            });
          }
          if (claimed.length === 0) return replayedReservations(requests, totals);
          const accountTotals = new Map<string, UsageTotals>();
          for (const a of accountDays) {
            accountTotals.set(accountDayId(a.scope, a.day), await this.#accountTotals(tx, a.scope, a.day, a));
          }
          const { results, events } = decideReservations(requests, totals, accountTotals);
          const inc = aggregateUsage(events).sort(byUsageRow);
          await tx`
        INSERT INTO usage (key_id, day, endpoint, requests, monthly)
        SELECT * FROM unnest(
          ${inc.map((r) => r.keyId)}::text[],
          ${inc.map((r) => r.day)}::text[],
          ${inc.map((r) => r.endpoint)}::text[],
          ${inc.map((r) => r.requests)}::bigint[],
          ${inc.map((r) => r.monthly)}::bigint[])
        ON CONFLICT (key_id, day, endpoint) DO UPDATE
          SET requests = usage.requests + excluded.requests, monthly = usage.monthly + excluded.monthly`;
          return results;
        }) as Promise<ReservedUsage[]>,
    );
    return results;
  }

  async usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]> {
    const rows = await this.#db.serve(
      (sql) => sql`
      SELECT day, endpoint, requests FROM usage
       WHERE key_id = ${keyId} AND day >= ${fromDay} AND day <= ${toDay}
       ORDER BY day, endpoint`,
    );
    return rows.map((r) => ({
      day: r.day as string,
      endpoint: r.endpoint as string,
      requests: Number(r.requests),
    }));
  }
}

/** Increments in a fixed order (key, day, endpoint; bytewise, as COLLATE "C"): concurrent writers cannot deadlock. */
function byUsageRow(a: UsageIncrement, b: UsageIncrement): number {
  return compare(a.keyId, b.keyId) || compare(a.day, b.day) || compare(a.endpoint, b.endpoint);
}
