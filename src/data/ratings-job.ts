import type { Clock } from '../domain/clock.ts';
import { DAY_MS, dayStartMs } from '../domain/periods.ts';
import {
  type DailyClose,
  DEFAULT_RATING_SIZE_FLOOR_USD,
  dailyCloses,
  type LiquidationRecord,
  RATING_WINDOW_DAYS,
  ratingChanged,
} from '../domain/rating.ts';
import type {
  AssetPrice,
  AssetPriceCursor,
  LiquidationCursor,
  LiquidationEvent,
  LiquidationFilter,
  RatingChange,
  RatingChangeCursor,
  RatingSubjectKind,
} from '../domain/records/history.ts';
import {
  type MarketRatingView,
  type RatingInputs,
  type RatingSet,
  rateModel,
  slices,
  tokenKey,
  type VaultRatingView,
  vaultKey,
} from './ratings.ts';
import type { ReadModel } from './read-model.ts';

/**
 * What the job reads and writes in the store: price and liquidation history, rating changes
 * (calls of the store's HistoryStore port, whose meaning is stated there).
 */
export interface RatingsJobStore {
  assetPrices(
    chainId: number,
    token: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: AssetPriceCursor,
  ): Promise<AssetPrice[]>;
  liquidations(
    filter: LiquidationFilter,
    limit: number,
    after?: LiquidationCursor,
  ): Promise<LiquidationEvent[]>;
  ratingChanges(
    kind: RatingSubjectKind,
    subject: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: RatingChangeCursor,
  ): Promise<RatingChange[]>;
  latestRatingChanges(kind: RatingSubjectKind, limit: number, afterSubject?: string): Promise<RatingChange[]>;
  appendRatingChanges(rows: readonly RatingChange[]): Promise<number>;
}

export interface RatingsJobOptions {
  /** The read models to rate (null entries ignored; one model listed twice is rated once). */
  models: () => readonly (ReadModel | null)[];
  store: RatingsJobStore;
  clock: Clock;
  /**
   * Whether this process records rating changes in the store (the one that writes history:
   * several processes rating one dataset would record each change several times).
   */
  writes: boolean;
  /** Assets (USD) below which a market or vault is not graded; DEFAULT_RATING_SIZE_FLOOR_USD when not given. */
  sizeFloorUsd?: number;
  /** Called with a run's failure (the run is retried RETRY_MS later). */
  onError?: (err: unknown) => void;
  /** Called after each model is rated. */
  onRated?: (info: { markets: number; vaults: number; recorded: number; ms: number }) => void;
}

/** Hourly prices per token over the window, read in one query (a day more than the window's hours). */
const PRICE_ROWS = (RATING_WINDOW_DAYS + 1) * 24;
/** Liquidations read per query while summing the window. */
const LIQUIDATION_PAGE = 500;
/** Subjects' last recorded ratings read per query. */
const LATEST_PAGE = 1_000;
/** Rating changes written per append. */
const WRITE_BATCH = 1_000;
/** A failed run is tried again this long after (clock ms). */
export const RETRY_MS = 60_000;

/** Markets or vaults added to a model are rated with it again once its ratings are this old. */
const ADDED_RATED_AFTER_MS = 60_000;

/**
 * The ratings job: rates every read model (src/data/ratings.ts) from the model and the store's
 * history, and keeps each model's latest ratings in memory for the routes (`ratingsOf`). A
 * model is rated when it is first seen (at start-up, after the dataset was replaced: a reload
 * is a new model, and the test keys' sandbox when it is built), then again once a 00:00 UTC of
 * the injected clock has passed since its last rating (`runDue`, polled by the service every
 * second). Ratings that changed beyond the tolerance (grade, methodology version, score by
 * RATING_CHANGE_TOLERANCE points, or the step into or out of NR: ratingChanged) are appended to the store's rating history, for the model
 * that is the store's dataset, by the process that writes history.
 *
 * Cost on the large profile (20,000 markets, 1,000,000 positions): the price history is read
 * once per distinct (chain, token), one query each (at most PRICE_ROWS rows), the
 * liquidations of the window once, in pages, and every step (store reads, markets, vaults,
 * writes) yields to the event loop after about 5 ms of work (`slices`: the embedded store's
 * calls complete synchronously, so awaiting them alone would hold the loop for the whole run);
 * memory is one RatingSet per model (the previous one is dropped with its model), about 25 MB
 * for 20,000 markets.
 */
export class RatingsJob {
  readonly #o: RatingsJobOptions;
  readonly #sets = new WeakMap<ReadModel, RatingSet>();
  /** Bumped when the store's history gained what ratings read (historyWritten); per set, the value it was rated at. */
  #historyGeneration = 0;
  readonly #ratedGeneration = new WeakMap<RatingSet, number>();
  #running: Promise<number> | null = null;
  #retryAt = 0;
  /** Aborted by stop(): a run under way stops at its next pause. */
  readonly #stop = new AbortController();

  constructor(options: RatingsJobOptions) {
    this.#o = options;
  }

  /** The latest ratings of `model`; null until it is first rated (a run is then started). */
  ratingsOf(model: ReadModel): RatingSet | null {
    const set = this.#sets.get(model);
    if (!set) void this.runDue();
    return set ?? null;
  }

  /** One subject's recorded rating changes (the store's, read-only). */
  ratingChanges(
    kind: RatingSubjectKind,
    subject: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: RatingChangeCursor,
  ): Promise<RatingChange[]> {
    return this.#o.store.ratingChanges(kind, subject, fromMs, toMs, limit, after);
  }

  /**
   * Whether `model` needs rating at `nowMs`: never rated, a 00:00 UTC passed since, markets or
   * vaults added since (rated a minute ago or more), or (the store's dataset) its history gained days since (historyWritten).
   */
  isDue(model: ReadModel, nowMs: number): boolean {
    const set = this.#sets.get(model);
    return (
      set === undefined ||
      set.ratedAt < dayStartMs(nowMs) ||
      // Markets or vaults added to the model since (the change feed adds them in place), rated
      // at most once a minute: anyone can create markets at every block.
      ((set.markets.length < model.catalog.size || set.vaults.length < model.vaults.entries.length) &&
        nowMs - set.ratedAt >= ADDED_RATED_AFTER_MS) ||
      (model.stored && (this.#ratedGeneration.get(set) ?? 0) < this.#historyGeneration)
    );
  }

  /**
   * The store's history gained days (the backfill after a seed, a day's close): the dataset's
   * ratings are due again, so that the first ratings of a new dataset, made before its price
   * history was written, do not stand until the next 00:00 UTC with default volatilities.
   */
  historyWritten(): void {
    this.#historyGeneration++;
  }

  /**
   * Rates the models that are due (see isDue), one run at a time: a call while a run is under
   * way joins it. Resolves to the models rated. A failure is reported to onError and the next
   * run waits RETRY_MS.
   */
  runDue(): Promise<number> {
    return this.#run(false);
  }

  /** Rates every model now, due or not (tests, operators). */
  refresh(): Promise<number> {
    return this.#run(true);
  }

  #run(all: boolean): Promise<number> {
    if (this.#running) return this.#running;
    if (this.#stop.signal.aborted) return Promise.resolve(0);
    const now = this.#o.clock.now();
    if (!all && now < this.#retryAt) return Promise.resolve(0);
    const models = [...new Set(this.#o.models())].filter((m): m is ReadModel => m !== null);
    const due = all ? models : models.filter((m) => this.isDue(m, now));
    if (due.length === 0) return Promise.resolve(0);
    this.#running = (async () => {
      let rated = 0;
      try {
        for (const model of due) {
          await this.#rate(model);
          rated++;
        }
        this.#retryAt = 0;
      } catch (err) {
        // Stopped: the run was abandoned on purpose, not failed.
        if (!this.#stop.signal.aborted) {
          this.#retryAt = this.#o.clock.now() + RETRY_MS;
          this.#o.onError?.(err);
        }
      } finally {
        this.#running = null;
      }
      return rated;
    })();
    return this.#running;
  }

  /** Stops: no run starts any more; the one under way stops at its next pause (a few ms). */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('the ratings job was stopped'));
    await this.#running;
  }

  async #rate(model: ReadModel): Promise<void> {
    const started = performance.now();
    const nowMs = Math.floor(this.#o.clock.now());
    const generation = this.#historyGeneration;
    // A model that is not the store's dataset (the test keys' sandbox while the store holds
    // another) has no stored history: it is rated without.
    const inputs: RatingInputs = model.stored
      ? await this.#history(model, nowMs)
      : { closes: null, liquidations: null };
    const set = await rateModel(model, inputs, nowMs, this.#stop.signal);
    const recorded = this.#o.writes && model.stored ? await this.#record(set) : 0;
    this.#sets.set(model, set);
    this.#ratedGeneration.set(set, generation);
    this.#o.onRated?.({
      markets: set.markets.length,
      vaults: set.vaults.length,
      recorded,
      ms: performance.now() - started,
    });
  }

  /** The window's daily closes of every token of the model (one read each) and liquidations by market. */
  async #history(model: ReadModel, nowMs: number): Promise<RatingInputs> {
    const { store } = this.#o;
    const fromMs = nowMs - RATING_WINDOW_DAYS * DAY_MS;
    const toMs = nowMs + 1;
    const tokens = new Map<string, { chainId: number; address: string }>();
    for (const m of model.catalog.baseRecords()) {
      for (const address of [m.collateralAddress, m.loanAddress])
        tokens.set(tokenKey(m.chainId, address), { chainId: m.chainId, address: address.toLowerCase() });
    }
    const slice = slices(this.#stop.signal);
    const closes = new Map<string, readonly DailyClose[]>();
    for (const [key, t] of tokens) {
      const rows = await store.assetPrices(t.chainId, t.address, fromMs, toMs, PRICE_ROWS);
      if (rows.length > 0) closes.set(key, dailyCloses(rows));
      await slice.pause();
    }
    const liquidations = new Map<string, LiquidationRecord>();
    let after: LiquidationCursor | undefined;
    for (;;) {
      const page = await store.liquidations({ fromMs, toMs }, LIQUIDATION_PAGE, after);
      for (const l of page) {
        const r = liquidations.get(l.marketKey) ?? { count: 0, repaidUsd: 0, badDebtUsd: 0 };
        r.count++;
        // A sum with a term of no known USD value (a market without a price then) is unknown.
        r.repaidUsd = r.repaidUsd === null || l.debtRepaidUsd === null ? null : r.repaidUsd + l.debtRepaidUsd;
        r.badDebtUsd = r.badDebtUsd === null || l.badDebtUsd === null ? null : r.badDebtUsd + l.badDebtUsd;
        liquidations.set(l.marketKey, r);
      }
      if (page.length < LIQUIDATION_PAGE) break;
      after = page.at(-1);
      await slice.pause();
    }
    return {
      closes,
      liquidations,
      ...(this.#o.sizeFloorUsd !== undefined ? { sizeFloorUsd: this.#o.sizeFloorUsd } : {}),
    };
  }

  /** Assets (USD) below which a market or vault is not graded. */
  get sizeFloorUsd(): number {
    return this.#o.sizeFloorUsd ?? DEFAULT_RATING_SIZE_FLOOR_USD;
  }

  /** Appends the ratings of `set` that changed beyond the tolerance since the last recorded one. */
  async #record(set: RatingSet): Promise<number> {
    const { store } = this.#o;
    const at = set.ratedAt;
    const rows: RatingChange[] = [];
    const consider = (
      kind: RatingSubjectKind,
      last: ReadonlyMap<string, RatingChange>,
      subject: string,
      chainId: number,
      r: MarketRatingView | VaultRatingView,
    ) => {
      // Graded and not graded (NR, no score, with its reason) alike: the history shows the step
      // into NR and back out of it; NR after NR is no change (ratingChanged).
      const prev = last.get(subject);
      if (prev && !ratingChanged(prev, { grade: r.grade, score: r.score, methodology: r.methodologyVersion }))
        return;
      rows.push({
        kind,
        subject,
        chainId,
        at,
        methodology: r.methodologyVersion,
        grade: r.grade,
        score: r.score,
        reason: r.reason,
        previousGrade: prev?.grade ?? null,
        previousScore: prev?.score ?? null,
        components: Object.fromEntries(Object.entries(r.components).map(([k, c]) => [k, c.score])),
      });
    };
    const slice = slices(this.#stop.signal);
    const lastOf = async (kind: RatingSubjectKind) => {
      const last = new Map<string, RatingChange>();
      for (let after = ''; ; ) {
        const page = await store.latestRatingChanges(kind, LATEST_PAGE, after);
        for (const c of page) last.set(c.subject, c);
        await slice.pause();
        const tail = page.at(-1);
        if (page.length < LATEST_PAGE || tail === undefined) return last;
        after = tail.subject;
      }
    };
    const lastMarkets = await lastOf('market');
    for (const m of set.markets) consider('market', lastMarkets, m.marketId, m.chainId, m);
    const lastVaults = await lastOf('vault');
    for (const v of set.vaults) consider('vault', lastVaults, vaultKey(v.chainId, v.address), v.chainId, v);
    let added = 0;
    for (let i = 0; i < rows.length; i += WRITE_BATCH) {
      added += await store.appendRatingChanges(rows.slice(i, i + WRITE_BATCH));
      await slice.pause();
    }
    return added;
  }
}
