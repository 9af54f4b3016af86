import type {
  AccountScope,
  QuotaCaps,
  ReservedUsage,
  UsageEvent,
  UsageReservation,
  UsageRow,
  UsageTotals,
} from '../../domain/records/usage.ts';

/** Usage counts and quota decisions (admission backends, the client routes' usage). */
export interface UsageStore {
  /**
   * Durably records admitted requests, as batch `batchId` (see newUsageBatchId()): the counts
   * and the id are written in one transaction, and a batch whose id is already recorded is
   * skipped. So a writer that got an error (a deadline passed, the COMMIT may still have
   * happened) retries the same events under the same id, never merged with newer ones, and
   * each request is counted once. Ids are remembered for USAGE_BATCH_RETENTION_MS. Resolves
   * once the batch is durable (applied now or before).
   */
  recordUsage(events: readonly UsageEvent[], batchId: string): Promise<void>;
  usageTotals(keyId: string, day: string): Promise<UsageTotals>;
  /**
   * The counts of an account's quota bound (docs/keys-and-accounts.md) for the UTC day `day`
   * and its month: over the keys of `scope.tier` the account holds, revoked ones included, of
   * both modes, the sum per key of its day count capped at `keyQuotas.daily`, and of its month
   * count capped at `keyQuotas.monthly` (null = uncapped). A request refused by its key's own
   * quota never reached the account's count, and that is exactly what the caps leave out.
   */
  accountUsageTotals(scope: AccountScope, day: string, keyQuotas: QuotaCaps): Promise<UsageTotals>;
  /**
   * Counts each request in order and decides it against its quotas as docs/decisions.md "Order of checks and what counts" does
   * (daily first; refused daily, the month is not counted), atomically per key with respect
   * to other reservations from any process: the stored counts are the authority, as while
   * Redis is unreachable. Durable once resolved.
   *
   * `batchId` is recorded with the counts, in the same transaction, in the ids of
   * recordUsage(): a reservation that failed without knowing whether it was applied is made
   * good by writing its requests' counts with recordUsage() under the same id (applied only if
   * the reservation was not). A reservation batch already applied changes nothing and answers
   * as replayedReservations() says.
   */
  reserveUsage(requests: readonly UsageReservation[], batchId: string): Promise<ReservedUsage[]>;
  usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]>;
}
