/**
 * Ingestion of the real sources (docs/decisions.md "Real sources", "Freshness per source"): one pass runs every source, then writes one dataset
 * (kind `live`) that holds each source's records: this run's where it succeeded, the last stored
 * ones where it failed (a failing source keeps its data, which ages). The dataset is as fresh
 * as its stalest source. Liquidations and oracle rounds go to the history (appends are
 * idempotent), and each source's checkpoint records its block, failures and last error.
 */

import { BaseError } from 'viem';
import type { Clock } from '../domain/clock.ts';
import { must } from '../domain/must.ts';
import type { DatasetInfo } from '../domain/records/dataset.ts';
import type { SourceState } from '../domain/records/sources.ts';
import { isPriced, type MarketRecord, type PositionRecord, type VaultRecord } from '../domain/types.ts';
import { ALL_HISTORY } from '../store/history.ts';
import { holderGone } from '../store/lease-holder.ts';
import type { HistoryStore } from '../store/ports/history.ts';
import type { MarketDataStore } from '../store/ports/market-data.ts';
import type { SourceStore } from '../store/ports/sources.ts';
import { append } from './append.ts';
import type { ItemReport, Source, SourceOutput } from './contract.ts';
import {
  hold,
  isEmpty,
  type PassRecords,
  type PositionsByMarket,
  positionKey,
  WrittenDataset,
} from './live-writes.ts';
import { newSourceState, redactSecrets } from './runner.ts';

export interface SourceRun {
  source: string;
  ok: boolean;
  error: string | null;
  items: ItemReport[];
  state: SourceState;
  markets: number;
  positions: number;
  /** Vaults served, and liquidations read in this run (0 when it failed). */
  vaults: number;
  liquidations: number;
  /** False when the run read no state (SourceOutput's `stateUnread`): its items are the last run's. */
  stateRead: boolean;
}

export interface LivePass {
  runs: SourceRun[];
  /** The dataset written; null when no source has ever succeeded (nothing to serve yet). */
  dataset: DatasetInfo | null;
  /** False when the pass wrote nothing because its ingestion lease was lost (another took over). */
  written: boolean;
}

export type LiveStore = MarketDataStore &
  SourceStore &
  Pick<
    HistoryStore,
    | 'appendLiquidations'
    | 'appendOracleRounds'
    | 'dropLiquidationsFrom'
    | 'dropOracleRoundsFrom'
    | 'pruneHistory'
  >;

/**
 * What went wrong, in a line: viem's errors carry the request's whole calldata in their message;
 * their short message and details say it.
 */
export function errorText(err: unknown): string {
  if (err instanceof BaseError)
    return err.details ? `${err.shortMessage} (${err.details})` : err.shortMessage;
  return err instanceof Error ? err.message : String(err);
}

/** Profile name of a dataset written from the sources file. */
export const LIVE_PROFILE = 'sources';

/** The source the change feed names for a pass's changes (every source's records are merged first). */
const LIVE_SOURCE = 'sources';

/**
 * What the ingesting process keeps of the live dataset between passes, per store: the dataset
 * as it wrote it (what the next pass's changes are computed against), and the records its
 * sources handed (each source is handed its own back as its last run's), the positions by
 * market as each was last handed.
 */
interface LiveMemory {
  written: WrittenDataset;
  markets: readonly MarketRecord[];
  vaults: readonly VaultRecord[];
  positions: PositionsByMarket;
}

/** A memory of what `records` hold, whole. */
function remember(written: WrittenDataset, records: PassRecords): LiveMemory {
  const positions: PositionsByMarket = new Map();
  for (const p of records.positions) hold(positions, p);
  return { written, markets: records.markets, vaults: records.vaults, positions };
}

/**
 * The memory after a pass written as changes: each market's positions as handed, those of a
 * market handed in part changed in place (one handed empty forgotten); a market gone, gone.
 */
function update(memory: LiveMemory, records: PassRecords): void {
  const partial = records.partial ?? new Set<string>();
  const keys = new Set(records.markets.map((m) => m.uniqueKey));
  for (const key of memory.positions.keys())
    if (!keys.has(key) || !partial.has(key)) memory.positions.delete(key);
  for (const p of records.positions)
    if (!isEmpty(p)) hold(memory.positions, p);
    else memory.positions.get(p.marketKey)?.delete(p.user);
  memory.markets = records.markets;
  memory.vaults = records.vaults;
}

const memories = new WeakMap<LiveStore, LiveMemory>();

/**
 * The live dataset the store holds, as this process last wrote it; read from the store when
 * another process wrote since (or none has been read yet). Null when the store holds none.
 */
async function liveMemory(store: LiveStore, info: DatasetInfo | null): Promise<LiveMemory | null> {
  if (info?.kind !== 'live') return null;
  const kept = memories.get(store);
  if (kept && kept.written.version === info.version && kept.written.changeSeq === info.changeSeq) return kept;
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = attempt === 0 ? info : await store.datasetInfo();
    if (current?.kind !== 'live') return null;
    const written = await WrittenDataset.load(store, current);
    if (written) {
      const memory = remember(written, written.records());
      memories.set(store, memory);
      return memory;
    }
  }
  throw new Error('the live dataset kept changing while it was being read');
}

/** Which stored records a source owns (Source.owns; left out: those of its chains). */
function ownership(source: Source): NonNullable<Source['owns']> {
  if (source.owns) return source.owns.bind(source);
  const chains = new Set(source.chainIds);
  return (r) => chains.has(r.chainId);
}

/** Runs every source once and writes what they read (see the module comment). */
export async function ingestLive(
  sources: readonly Source[],
  store: LiveStore,
  clock: Clock,
  options: {
    onSource?: (run: SourceRun) => void;
    /** Asked once every source has run, before anything is written: false writes nothing (the lease was lost). */
    mayWrite?: () => Promise<boolean>;
  } = {},
): Promise<LivePass> {
  const states = new Map((await store.listSources()).map((s) => [s.id, s]));
  const info = await store.datasetInfo();
  // Over a sandbox (or an empty store), the sources start afresh: a checkpoint left from an
  // earlier live dataset would resume after blocks whose records are gone.
  const fresh = info?.kind !== 'live';
  const memory = await liveMemory(store, info);
  const storedMarkets = memory?.markets ?? [];
  const storedVaults = memory?.vaults ?? [];
  const held = memory?.positions ?? new Map<string, Map<string, PositionRecord>>();
  const markets: MarketRecord[] = [];
  const positions: PositionRecord[] = [];
  const vaults: VaultRecord[] = [];
  // The markets whose positions are handed in part (a source that failed hands none of its own).
  const partial = new Set<string>();
  const runs: SourceRun[] = [];
  /** The successful runs' outputs, whose history is written once every source has run. */
  const outputs: SourceOutput[] = [];
  let anyData = false;
  let refreshedAt = Number.POSITIVE_INFINITY;
  for (const source of sources) {
    const owns = ownership(source);
    const mine = storedMarkets.filter((m) => owns(m, 'market'));
    const keys = mine.map((m) => m.uniqueKey);
    const mineVaults = storedVaults.filter((v) => owns(v, 'vault'));
    // Its positions as it last handed them, listed only if it asks.
    let minePositions: PositionRecord[] | null = null;
    const previousPositions = () => {
      if (minePositions === null) {
        minePositions = [];
        for (const k of keys) for (const p of held.get(k)?.values() ?? []) minePositions.push(p);
      }
      return minePositions;
    };
    const recorded = states.get(source.id) ?? null;
    const previous = fresh ? null : recorded;
    // Starting afresh, a source's failures go on being counted until it is first read.
    const base: SourceState = previous ?? {
      ...newSourceState(source),
      consecutiveFailures: recorded?.refreshedAt === null ? recorded.consecutiveFailures : 0,
    };
    let run: SourceRun;
    try {
      const out = await source.run(clock.now(), {
        state: previous,
        markets: mine,
        get positions() {
          return previousPositions();
        },
        positionsIn: (marketKey) => held.get(marketKey)?.values() ?? [],
        vaults: mineVaults,
      });
      outputs.push(out);
      const records = out.records ?? { markets: [], positions: [] };
      append(markets, records.markets);
      append(positions, records.positions);
      append(vaults, records.vaults ?? []);
      for (const k of records.partial ?? []) partial.add(k);
      const now = Math.floor(clock.now());
      const { sync: lastSync, ...kept } = base;
      const state: SourceState = {
        ...kept,
        kind: source.kind,
        chainIds: [...source.chainIds],
        refreshedAt: now,
        lastBlock: { ...base.lastBlock, ...out.blocks },
        ...(out.cursor !== undefined ? { cursor: out.cursor } : {}),
        ...(out.head ? { head: { ...base.head, ...out.head } } : {}),
        ...syncOf(lastSync, out.sync),
        consecutiveFailures: 0,
        lastError: null,
        updatedAt: now,
      };
      run = {
        source: source.id,
        ok: true,
        error: null,
        // Credentials never reach a log line or the CLI's report (an RPC error may name the URL).
        items: out.items.map((i) => (i.ok ? i : { ...i, error: redactSecrets(i.error) })),
        state,
        markets: records.markets.length,
        positions: positionsHeld(records, held),
        vaults: records.vaults?.length ?? 0,
        liquidations: out.liquidations?.length ?? 0,
        stateRead: out.stateUnread !== true,
      };
    } catch (err) {
      // The source keeps what it served last; its checkpoint counts the failure.
      append(markets, mine);
      for (const k of keys) partial.add(k);
      append(vaults, mineVaults);
      const error = redactSecrets(errorText(err));
      const state: SourceState = {
        ...base,
        consecutiveFailures: base.consecutiveFailures + 1,
        lastError: error,
        updatedAt: Math.floor(clock.now()),
      };
      run = {
        source: source.id,
        ok: false,
        error,
        items: [],
        state,
        markets: mine.length,
        positions: positionsHeld({ positions: [], partial: new Set(keys) }, held),
        vaults: mineVaults.length,
        liquidations: 0,
        stateRead: false,
      };
    }
    if (run.state.refreshedAt !== null) {
      anyData = true;
      refreshedAt = Math.min(refreshedAt, run.state.refreshedAt);
    }
    runs.push(run);
    options.onSource?.(run);
  }
  let dataset: DatasetInfo | null = null;
  if (options.mayWrite && !(await options.mayWrite())) return { runs, dataset, written: false };
  // The sandbox's history (simulated liquidations, rounds, snapshots) must not be served as the
  // real sources' history: it goes with the sandbox, before theirs is written.
  if (anyData && info?.kind === 'sandbox') await store.pruneHistory(ALL_HISTORY);
  for (const out of outputs) {
    if (out.reorg) await store.dropLiquidationsFrom(out.reorg.chainId, out.reorg.fromBlock);
    if (out.reorg?.fromMs !== undefined)
      await store.dropOracleRoundsFrom(out.reorg.chainId, out.reorg.fromMs);
    if (out.liquidations?.length) await store.appendLiquidations(out.liquidations);
    if (out.rounds?.length) await store.appendOracleRounds(out.rounds);
  }
  if (anyData) {
    // A position's USD amounts are stated at its market's prices: a market without both serves
    // none ("Real sources" (docs/decisions.md); the sources hand none, this holds it whatever a
    // source or old data holds).
    const unpriced = new Set(markets.filter((m) => !isPriced(m)).map((m) => m.uniqueKey));
    const served = unpriced.size === 0 ? positions : positions.filter((p) => !unpriced.has(p.marketKey));
    const records: PassRecords = { markets, positions: served, vaults, partial };
    dataset = await writePass(store, memory, records, refreshedAt);
  }
  // Checkpoints after the data: a crash in between reads the same blocks again (idempotent).
  for (const r of runs) await store.saveSource(r.state);
  return { runs, dataset, written: true };
}

/**
 * Writes a pass's records: as changes to the live dataset the store holds when they can be
 * (live-writes.ts), else as a new dataset. Returns the dataset now in the store.
 */
async function writePass(
  store: LiveStore,
  memory: LiveMemory | null,
  records: PassRecords,
  refreshedAt: number,
): Promise<DatasetInfo> {
  const changes = memory?.written.changes(records, refreshedAt) ?? null;
  if (memory && changes) {
    const seq = await store.applyChanges(LIVE_SOURCE, changes, memory.written);
    if (seq !== null) {
      memory.written.committed(changes, seq);
      update(memory, records);
      return must(await store.datasetInfo(), 'the dataset just written');
    }
  }
  const whole = wholeRecords(memory?.written ?? null, records);
  const dataset = await store.replaceDataset({
    kind: 'live',
    profile: LIVE_PROFILE,
    seed: null,
    refreshedAt,
    markets: whole.markets,
    vaults: whole.vaults,
    positions: whole.positions,
    positionCount: whole.positions.length,
  });
  memories.set(store, remember(WrittenDataset.written(dataset, whole), whole));
  return dataset;
}

/**
 * A pass's records whole: the positions of a market handed in part completed with those the
 * dataset holds and the pass did not hand, at the market's figures now; none empty.
 */
function wholeRecords(written: WrittenDataset | null, records: PassRecords): PassRecords {
  const partial = records.partial ?? new Set<string>();
  const positions = records.positions.filter((p) => !isEmpty(p));
  if (partial.size > 0 && written) {
    const handed = new Set(records.positions.map(positionKey));
    for (const m of records.markets)
      if (partial.has(m.uniqueKey) && isPriced(m))
        for (const p of written.held(m.uniqueKey, m)) if (!handed.has(positionKey(p))) positions.push(p);
  }
  return { markets: records.markets, positions, vaults: records.vaults };
}

/** How many positions a source holds after handing `records` (`held`: as it last handed them). */
function positionsHeld(
  records: Pick<PassRecords, 'positions' | 'partial'>,
  held: ReadonlyMap<string, ReadonlyMap<string, PositionRecord>>,
): number {
  const partial = records.partial ?? new Set<string>();
  let n = 0;
  for (const k of partial) n += held.get(k)?.size ?? 0;
  for (const p of records.positions) {
    const had = partial.has(p.marketKey) && held.get(p.marketKey)?.has(p.user) === true;
    n += (isEmpty(p) ? 0 : 1) - (had ? 1 : 0);
  }
  return n;
}

/** Who ingests, and for how long a claim of the store's ingestion lease holds. */
export interface IngestLease {
  holder: string;
  ms: number;
}

/**
 * One pass by the holder of the store's ingestion lease (several servers on one store elect one
 * ingester, "Real sources" (docs/decisions.md)): claims the lease (null when another holds it:
 * nothing is run; a holder of this host that is gone, killed or crashed, is let go first),
 * renews it every third of its time while the pass runs, and writes only if it still holds it
 * then.
 */
export async function ingestWithLease(
  sources: readonly Source[],
  store: LiveStore,
  clock: Clock,
  lease: IngestLease,
  options: {
    onSource?: (run: SourceRun) => void;
    /** Aborted when the process stops: the pass claims the lease no more and writes nothing. */
    signal?: AbortSignal;
  } = {},
): Promise<LivePass | null> {
  const { signal, ...rest } = options;
  const claim = async () =>
    !signal?.aborted && store.claimIngestion(lease.holder, Math.floor(clock.now()), lease.ms);
  if (!(await claim())) {
    const holder = await store.ingestionHolder(Math.floor(clock.now()));
    if (holder === null || !holderGone(holder)) return null;
    await store.releaseIngestion(holder);
    if (!(await claim())) return null;
  }
  const renew = setInterval(() => void claim().catch(() => false), Math.max(1, Math.floor(lease.ms / 3)));
  renew.unref();
  const stop = () => clearInterval(renew);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    return await ingestLive(sources, store, clock, { ...rest, mayWrite: claim });
  } finally {
    stop();
    signal?.removeEventListener('abort', stop);
  }
}

/**
 * The blocks of logs a written pass left its sources to read (their syncs under way: the next
 * pass is due at once while this shrinks from pass to pass); null when it left none, or was not
 * written.
 */
export function syncGap(pass: LivePass | null | undefined): number | null {
  if (pass?.written !== true) return null;
  let gap: number | null = null;
  for (const r of pass.runs)
    if (r.ok)
      for (const s of Object.values(r.state.sync ?? {})) gap = (gap ?? 0) + (s.toBlock - s.throughBlock);
  return gap;
}

/** A source's syncs under way after a run: those it reported replace the last (null: synced). */
function syncOf(last: SourceState['sync'], reported: SourceOutput['sync']): Pick<SourceState, 'sync'> {
  const out = { ...last };
  for (const [chain, sync] of Object.entries(reported ?? {}))
    if (sync) out[chain] = sync;
    else delete out[chain];
  return Object.keys(out).length > 0 ? { sync: out } : {};
}
