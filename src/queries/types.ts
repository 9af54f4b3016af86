import type { Protocol } from '../domain/enums.ts';
import type { HistoryStore } from '../store/ports/history.ts';

/**
 * The caller's scope, already narrowed by its tier (docs/decisions.md "Clamping"): the chains it may see
 * (undefined = every chain) and the protocol it asked for.
 */
export interface Scope {
  protocol?: Protocol | undefined;
  chainIds?: readonly number[] | undefined;
}

/**
 * What a query found, and the facts the answer's meta needs besides (docs/decisions.md "Meta"): the protocol of each
 * item, or the protocols in the scope when nothing was found (meta.source), and the number of
 * items in scope when the query counts them (meta.total).
 */
export interface Found<T> {
  items: T[];
  itemProtocols: readonly string[];
  scopeProtocols: readonly string[];
  /**
   * The chains the answer is about, when it is about one market (its chain): the answer is as
   * fresh as their sources (docs/decisions.md "Freshness per source"). Absent: the chains the request was scoped to (a list's ranking
   * and totals depend on every chain in scope), else every chain.
   */
  chains?: readonly number[];
  total?: number;
  /** Lists paged by cursor (docs/decisions.md "Lists, pages and streams"): the cursor of the next page; absent on the last. */
  nextCursor?: string;
  /**
   * A later page of a list whose first page fixed its set: the instant the set was taken at
   * (the first page's meta.asOf), which every page of it reports.
   */
  asOfMs?: number;
}

/** What history queries read: market snapshots, oracle rounds, liquidations and their daily sums (no writes). */
export type HistoryReader = Pick<
  HistoryStore,
  | 'marketSnapshots'
  | 'oracleRounds'
  | 'liquidations'
  | 'dailyMarketTotals'
  | 'dailyLiquidationTotals'
  | 'researchReports'
  | 'researchReport'
>;
