import type { Clock } from '../domain/clock.ts';
import type { Protocol } from '../domain/enums.ts';
import { DAY_MS, dayStartMs } from '../domain/periods.ts';
import type {
  LiquidationCursor,
  LiquidationEvent,
  LiquidationFilter,
  MarketSnapshot,
  RatingChange,
  ResearchReportRow,
} from '../domain/records/history.ts';
import {
  buildDigest,
  type DigestData,
  type DigestLiquidation,
  type DigestPositionAtRisk,
  type DigestRatingChange,
  type DigestSnapshot,
  type DigestStaleOracle,
} from '../domain/research.ts';
import { slices } from './ratings.ts';
import type { ReadModel } from './read-model.ts';

/** What the research job reads and writes in the store (calls of its HistoryStore port, stated there). */
export interface ResearchJobStore {
  daySnapshots(dayMs: number): Promise<MarketSnapshot[]>;
  liquidations(
    filter: LiquidationFilter,
    limit: number,
    after?: LiquidationCursor,
  ): Promise<LiquidationEvent[]>;
  ratingChangesBetween(fromMs: number, toMs: number, limit: number): Promise<RatingChange[]>;
  appendResearchReports(rows: readonly ResearchReportRow[]): Promise<number>;
  lastResearchDay(): Promise<number | null>;
}

export interface ResearchJobOptions {
  /** The store's dataset as a read model (null while there is none). */
  model: () => ReadModel | null;
  store: ResearchJobStore;
  clock: Clock;
  /** True while the history is being written (a backfill): days are then not complete yet. */
  busy?: () => boolean;
  onError?: (err: unknown) => void;
  onWritten?: (info: { days: number; reports: number; ms: number }) => void;
}

/** How far back a first run writes digests, in days (the sandbox keeps a year of history). */
export const RESEARCH_LOOKBACK_DAYS = 366;
/** How long after a day ends its digest is written (ms): the history of its last hour is written by then. */
export const DIGEST_DELAY_MS = 3_600_000;
/** Positions below this health factor are listed as near liquidation in a live digest. */
export const DIGEST_AT_RISK_HF = 1.05;
/** Liquidations read per query. */
const LIQUIDATION_PAGE = 5_000;
/** A failed run is tried again this long after (clock ms). */
const RETRY_MS = 60_000;
/** Without history to digest, the next look is this long after (clock ms). */
const IDLE_RETRY_MS = 3_600_000;

/**
 * The research job: one digest per UTC day and protocol (src/domain/research.ts), written to
 * the store once the day is over, from that day's history. The first run writes every day of
 * the lookback the history covers (a year of digests for the sandbox's year), oldest first,
 * yielding to the event loop every few ms of work (slices); later runs write the days since the last digest. The digest
 * of the day that just ended also lists the positions near liquidation and the stale oracles
 * of the read model at that moment (they are not history). Only the process that writes
 * history runs it; the routes read the store.
 */
export class ResearchJob {
  readonly #o: ResearchJobOptions;
  #running: Promise<number> | null = null;
  #retryAt = 0;
  #stopped = false;
  /** The last day written (ms at 00:00 UTC), known after the first run. */
  #last: number | null | undefined;

  constructor(options: ResearchJobOptions) {
    this.#o = options;
  }

  /** Writes the digests of the days that are over and not written yet; resolves to the reports written. */
  runDue(): Promise<number> {
    if (this.#running) return this.#running;
    const now = this.#o.clock.now();
    if (this.#stopped || now < this.#retryAt || this.#o.busy?.()) return Promise.resolve(0);
    const model = this.#o.model();
    if (!model?.stored) return Promise.resolve(0);
    // A day is digested once its history is complete: the history of its last hour is written
    // within the hour after it (DIGEST_DELAY_MS).
    const yesterday = dayStartMs(now - DIGEST_DELAY_MS) - DAY_MS;
    if (this.#last !== undefined && this.#last !== null && this.#last >= yesterday) return Promise.resolve(0);
    this.#running = (async () => {
      const started = performance.now();
      let reports = 0;
      let days = 0;
      try {
        if (this.#last === undefined) this.#last = await this.#o.store.lastResearchDay();
        // No daily snapshot yesterday: no history to digest (yet); looked at again in an hour.
        if ((await this.#o.store.daySnapshots(yesterday)).length === 0) {
          this.#retryAt = now + IDLE_RETRY_MS;
          return 0;
        }
        const from = Math.max(
          this.#last === null ? 0 : this.#last + DAY_MS,
          dayStartMs(now) - RESEARCH_LOOKBACK_DAYS * DAY_MS,
        );
        // The embedded store answers synchronously: the work yields every few ms (slices).
        const { pause } = slices();
        let previous = await this.#o.store.daySnapshots(from - DAY_MS);
        for (let day = from; day <= yesterday && !this.#stopped; day += DAY_MS) {
          const snapshots = await this.#o.store.daySnapshots(day);
          await pause();
          const rows = await this.#day(model, day, snapshots, previous, day === yesterday, pause);
          if (rows.length > 0) {
            reports += await this.#o.store.appendResearchReports(rows);
            this.#last = day;
          }
          previous = snapshots;
          days++;
          await pause();
        }
        this.#retryAt = 0;
        if (days > 0) this.#o.onWritten?.({ days, reports, ms: performance.now() - started });
      } catch (err) {
        this.#retryAt = this.#o.clock.now() + RETRY_MS;
        this.#o.onError?.(err);
      } finally {
        this.#running = null;
      }
      return reports;
    })();
    return this.#running;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }

  /** The digests of one day, one per protocol with a snapshot or a liquidation that day. */
  async #day(
    model: ReadModel,
    day: number,
    snapshots: readonly MarketSnapshot[],
    previous: readonly MarketSnapshot[],
    live: boolean,
    pause: () => Promise<void>,
  ): Promise<ResearchReportRow[]> {
    const { catalog } = model;
    const pairOf = (key: string) => {
      const ord = catalog.ordOf(key);
      if (ord === undefined) return key;
      const m = catalog.recordAt(ord);
      return `${m.collateral}/${m.loan}`;
    };
    const digestSnapshot = (s: MarketSnapshot): DigestSnapshot => ({
      marketKey: s.marketKey,
      chainId: s.chainId,
      pair: pairOf(s.marketKey),
      supplyUsd: s.supplyUsd,
      borrowUsd: s.borrowUsd,
      utilization: s.utilization,
    });
    const byProtocol = <T>(rows: readonly T[], protocolOf: (r: T) => string) => {
      const out = new Map<string, T[]>();
      for (const r of rows) {
        const p = protocolOf(r);
        const l = out.get(p);
        if (l) l.push(r);
        else out.set(p, [r]);
      }
      return out;
    };
    const liquidations: (DigestLiquidation & { protocol: string })[] = [];
    let after: LiquidationCursor | undefined;
    for (;;) {
      const page = await this.#o.store.liquidations(
        { fromMs: day, toMs: day + DAY_MS },
        LIQUIDATION_PAGE,
        after,
      );
      for (const l of page) {
        liquidations.push({
          protocol: l.protocol,
          chainId: l.chainId,
          marketKey: l.marketKey,
          txHash: l.txHash,
          at: l.at,
          borrower: l.borrower,
          debtRepaidUsd: l.debtRepaidUsd,
          collateralSeizedUsd: l.collateralSeizedUsd,
          badDebtUsd: l.badDebtUsd,
        });
      }
      await pause();
      const last = page.at(-1);
      if (page.length < LIQUIDATION_PAGE || last === undefined) break;
      after = { at: last.at, chainId: last.chainId, txHash: last.txHash, logIndex: last.logIndex };
    }
    // The digest lists the day's changes of markets' grades; a step into NR (no score) is not
    // one of them (a step out of NR is: its grade and score, the grade before NR).
    const ratings = (await this.#o.store.ratingChangesBetween(day, day + DAY_MS, 10_000)).filter(
      (c): c is RatingChange & { score: number } => c.kind === 'market' && c.score !== null,
    );
    const protocolOfKey = (key: string) => {
      const ord = catalog.ordOf(key);
      if (ord !== undefined) return catalog.recordAt(ord).protocol;
      const [protocol = ''] = key.split('-');
      return protocol;
    };
    const snaps = byProtocol(snapshots, (s) => s.protocol);
    const prevs = byProtocol(previous, (s) => s.protocol);
    const liqs = byProtocol(liquidations, (l) => l.protocol);
    const rates = byProtocol(ratings, (r) => protocolOfKey(r.subject));
    const protocols = [...new Set([...snaps.keys(), ...liqs.keys()])].sort();
    const nowMs = Math.floor(this.#o.clock.now());
    await pause();
    const rows: ResearchReportRow[] = [];
    for (const protocol of protocols) {
      const report = buildDigest({
        day,
        protocol,
        snapshots: (snaps.get(protocol) ?? []).map(digestSnapshot),
        previous: (prevs.get(protocol) ?? []).map(digestSnapshot),
        liquidations: liqs.get(protocol) ?? [],
        ratingChanges: (rates.get(protocol) ?? []).map(
          (c): DigestRatingChange => ({
            kind: c.kind,
            subject: c.subject,
            chainId: c.chainId,
            grade: c.grade,
            score: c.score,
            previousGrade: c.previousGrade,
            previousScore: c.previousScore,
          }),
        ),
        data: digestData(model),
        live: live ? liveView(model, protocol as Protocol, nowMs) : null,
        generatedAt: nowMs,
      });
      rows.push({
        id: report.id,
        day,
        protocol,
        generatedAt: nowMs,
        body: JSON.stringify(report),
      });
      await pause();
    }
    return rows;
  }
}

/** The read model's positions near liquidation and stale oracles of one protocol, now. */
function liveView(
  model: ReadModel,
  protocol: Protocol,
  nowMs: number,
): { at: number; positionsAtRisk: DigestPositionAtRisk[]; staleOracles: DigestStaleOracle[] } {
  const { catalog, risk } = model;
  const nowSec = Math.floor(nowMs / 1000);
  const positionsAtRisk = risk
    // Every position below the threshold (by health factor): the digest lists the largest by debt.
    .query({
      healthFactorThreshold: DIGEST_AT_RISK_HF,
      protocol,
      minBorrowUsd: 0,
      limit: Number.MAX_SAFE_INTEGER,
    })
    .map((i) => {
      const a = risk.amountsOf(i);
      const m = catalog.recordAt(a.ord);
      return {
        chainId: m.chainId,
        marketKey: m.uniqueKey,
        user: risk.stateOf(i).user,
        healthFactor: Number(a.healthFactor.toPrecision(8)),
        debtUsd: a.borrowUsd,
      };
    });
  const staleOracles: DigestStaleOracle[] = [];
  for (const ord of catalog.list({ protocol }, 0, catalog.size)) {
    const m = catalog.viewAt(ord, nowSec);
    if (m.oracle && m.oracleHealth?.isStale) {
      staleOracles.push({
        chainId: m.chainId,
        marketKey: m.uniqueKey,
        oracle: m.oracle.address,
        secondsSinceUpdate: m.oracleHealth.secondsSinceUpdate,
        stalenessRatio: m.oracleHealth.stalenessRatio,
      });
    }
  }
  return { at: nowMs, positionsAtRisk, staleOracles };
}

/** The data of a model's digests: its sandbox's profile and seed, or market data. */
export function digestData(model: ReadModel): DigestData {
  const d = model.dataset;
  return d.kind === 'sandbox'
    ? { kind: 'sandbox', profile: d.profile, seed: d.seed }
    : { kind: 'market', profile: null, seed: null };
}
