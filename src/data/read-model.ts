import { type ChangeRound, changeRounds } from '../domain/change-feed.ts';
import { must } from '../domain/must.ts';
import { type PositionColumns, PositionColumnsBuilder } from '../domain/position-columns.ts';
import type {
  DatasetInfo,
  StoredMarketChange,
  StoredPositionChange,
  StoredVaultChange,
} from '../domain/records/dataset.ts';
import type { SourceState } from '../domain/records/sources.ts';
import type {
  FeedUpdate,
  MarketRecord,
  MarketStateChange,
  PositionRecord,
  PriceChange,
  VaultRecord,
} from '../domain/types.ts';
import { Catalog } from './catalog.ts';
import { RiskIndex } from './risk-index.ts';
import { VaultIndex } from './vaults.ts';

export type Freshness = 'live' | 'cached' | 'snapshot';

/**
 * What a read model is loaded from and follows, read only: the store's market data (its
 * MarketDataStore port; the meaning of each call is stated there).
 */
interface MarketDataSource {
  datasetInfo(): Promise<DatasetInfo | null>;
  loadMarkets(keys?: readonly string[]): Promise<MarketRecord[]>;
  loadVaults(): Promise<VaultRecord[]>;
  loadPositions(onBlock: (block: PositionColumns) => void): Promise<void>;
  positionChangesSince(after: number, limit: number): Promise<StoredPositionChange[]>;
  marketChangesSince(after: number, limit: number): Promise<StoredMarketChange[]>;
  vaultChangesSince(after: number, limit: number): Promise<StoredVaultChange[]>;
}

/** Everything a request reads: markets, positions by health factor, and where they came from. */
export interface ReadModel {
  catalog: Catalog;
  risk: RiskIndex;
  /** The vaults lending into the catalog's markets. */
  vaults: VaultIndex;
  dataset: DatasetInfo;
  /** Epoch ms the data reflects: the dataset's refresh, then the last price move applied. */
  asOf: number;
  /** The last position change of the store applied (DatasetInfo.changeSeq), 0 for none. */
  changeSeq: number;
  /**
   * The chain blocks the data reflects (docs/decisions.md "Freshness per source"): per chain id, the lowest last block of
   * the sources reporting that chain (the stalest); null when no source reports blocks (the
   * sandbox).
   */
  blocks: Record<string, number> | null;
  /**
   * Per chain id, the last successful refresh (epoch ms) of the stalest source reporting that
   * chain (docs/decisions.md "Freshness per source"): an answer about some chains is as fresh as their sources; null when
   * no source reports chains (the sandbox).
   */
  chainRefreshedAt: Record<string, number> | null;
  /**
   * Per chain id, where the sync of a chain still behind stands (its sources' `sync`): what is
   * served of that chain is partial. Null when no chain is syncing.
   */
  syncing: Record<string, Syncing> | null;
  /**
   * The model is the store's dataset, so the store's history (market snapshots, oracle rounds,
   * liquidations) is its history. False for a model built in memory (the test keys' sandbox
   * while the store holds another dataset): it has no stored history.
   */
  stored: boolean;
  /**
   * False for the empty live model served while a sources file's first pass has read nothing
   * (no source read yet): its answers are empty, labelled `snapshot`, with no `asOf`.
   */
  synced: boolean;
  /**
   * Moves on with every change applied to the model in place (prices, market and position
   * changes, the sources' blocks): what an answer computed from the model is valid for, with
   * the second of the clock for time-dependent fields (src/http/answer-cache.ts).
   */
  revision: number;
}

/** A chain whose sync is under way: its logs read through `throughBlock`, the state at `toBlock`. */
export interface Syncing {
  throughBlock: number;
  toBlock: number;
}

/**
 * Sets what the sources' checkpoints say the model reflects (per chain, the last block and the
 * last refresh of the stalest source reporting it, and the syncs under way); a change of any is a
 * change of the model.
 */
export function setSourceClocks(
  model: ReadModel,
  sources: readonly Pick<SourceState, 'kind' | 'lastBlock' | 'chainIds' | 'refreshedAt' | 'sync'>[],
): void {
  const current = sources.filter((s) => sourceInUse(model.dataset, s));
  const blocks = blocksOf(current);
  const refreshed = chainRefreshedAt(current);
  const syncing = syncingOf(current);
  if (
    JSON.stringify(blocks) !== JSON.stringify(model.blocks) ||
    JSON.stringify(refreshed) !== JSON.stringify(model.chainRefreshedAt) ||
    JSON.stringify(syncing) !== JSON.stringify(model.syncing)
  )
    model.revision++;
  model.blocks = blocks;
  model.chainRefreshedAt = refreshed;
  model.syncing = syncing;
}

/** Per chain, the sync under way of a source reporting it (the least advanced); null when none is. */
function syncingOf(sources: readonly Pick<SourceState, 'sync'>[]): Record<string, Syncing> | null {
  const out: Record<string, Syncing> = {};
  let any = false;
  for (const s of sources)
    for (const [chain, sync] of Object.entries(s.sync ?? {})) {
      const was = out[chain];
      if (was && was.throughBlock <= sync.throughBlock) continue;
      out[chain] = { throughBlock: sync.throughBlock, toBlock: sync.toBlock };
      any = true;
    }
  return any ? out : null;
}

/**
 * Whether a source is behind a dataset: a sandbox's simulation behind a sandbox; behind real
 * data, the sources of the pass that wrote it (a source whose last refresh is older left the
 * sources file; the simulation is never behind real data). /health says it; answers' freshness
 * counts only these.
 */
export function sourceInUse(
  dataset: Pick<DatasetInfo, 'kind' | 'refreshedAt'>,
  source: Pick<SourceState, 'kind' | 'refreshedAt'>,
): boolean {
  if (dataset.kind === 'sandbox') return source.kind === 'simulation';
  return (
    source.kind !== 'simulation' && (source.refreshedAt === null || source.refreshedAt >= dataset.refreshedAt)
  );
}

/** Per chain, the lowest last block of the sources reporting it; null when none does. */
export function blocksOf(
  sources: readonly { lastBlock: Record<string, number> }[],
): Record<string, number> | null {
  const out: Record<string, number> = {};
  let any = false;
  for (const s of sources)
    for (const [chain, block] of Object.entries(s.lastBlock)) {
      if (!Number.isSafeInteger(block)) continue;
      out[chain] = Math.min(out[chain] ?? block, block);
      any = true;
    }
  return any ? out : null;
}

/**
 * Per chain, the oldest last refresh of the real sources reporting it that have refreshed (one
 * that never has serves nothing yet); null when none does.
 */
function chainRefreshedAt(
  sources: readonly Pick<SourceState, 'kind' | 'chainIds' | 'refreshedAt'>[],
): Record<string, number> | null {
  const out: Record<string, number> = {};
  let any = false;
  for (const s of sources) {
    if (s.refreshedAt === null || s.kind === 'simulation') continue;
    for (const chain of s.chainIds) {
      out[chain] = Math.min(out[chain] ?? s.refreshedAt, s.refreshedAt);
      any = true;
    }
  }
  return any ? out : null;
}

/**
 * What an answer about `chains` reflects (docs/decisions.md "Freshness per source"): the refresh of the stalest source behind those
 * chains (the dataset's, for every chain or a sandbox, or when no source reports them) and their
 * blocks. `chains` null: the whole dataset.
 */
export function answerClock(
  model: ReadModel,
  chains: readonly number[] | null,
): {
  refreshedAt: number;
  blocks: Record<string, number> | null;
  syncing: Record<string, Syncing> | null;
} {
  const byChain = model.chainRefreshedAt;
  if (chains === null || byChain === null || model.dataset.kind === 'sandbox')
    return { refreshedAt: model.dataset.refreshedAt, blocks: model.blocks, syncing: model.syncing };
  let refreshedAt = Number.POSITIVE_INFINITY;
  const blocks: Record<string, number> = {};
  let syncing: Record<string, Syncing> | null = null;
  for (const chain of chains) {
    const at = byChain[chain];
    if (at !== undefined) refreshedAt = Math.min(refreshedAt, at);
    const block = model.blocks?.[chain];
    if (block !== undefined) blocks[chain] = block;
    const sync = model.syncing?.[chain];
    if (sync) syncing = { ...(syncing ?? {}), [chain]: sync };
  }
  // (No block of these chains, as of an API source's: no `blocks` at all.)
  const read = Object.keys(blocks).length > 0 ? blocks : null;
  // None of the chains has a source (nothing of them is served): the dataset's refresh.
  if (refreshedAt === Number.POSITIVE_INFINITY)
    return { refreshedAt: model.dataset.refreshedAt, blocks: read, syncing };
  return { refreshedAt, blocks: read, syncing };
}

/**
 * The dataset as the store now states it, the same version as the model's: its refresh time
 * (a pass that changed nothing, or only some records, still refreshed it), change sequence
 * number and market count (markets are added as changes). A change of the refresh time is a change of the model.
 */
export function followDataset(model: ReadModel, info: DatasetInfo): void {
  if (info.version !== model.dataset.version || info.refreshedAt === model.dataset.refreshedAt) return;
  model.dataset = {
    ...model.dataset,
    refreshedAt: info.refreshedAt,
    changeSeq: info.changeSeq,
    marketCount: info.marketCount,
  };
  model.asOf = Math.max(model.asOf, info.refreshedAt);
  model.revision++;
}

/**
 * Applies a round of the store's position changes (in feed order) to a read model, in one
 * synchronous step: each position moves in the risk index, nothing is rebuilt. Changes of
 * markets the model does not hold are skipped (they come from a dataset it is not).
 */
function applyPositionChanges(model: ReadModel, changes: readonly StoredPositionChange[]): number {
  const known = [];
  for (const c of changes) {
    const ord = model.catalog.ordOf(c.marketKey);
    if (ord !== undefined) known.push({ ...c, ord });
  }
  return model.risk.applyPositionChanges(known);
}

/**
 * Applies a round of the store's market changes (in feed order) in one synchronous step: each
 * market is replaced in place in the catalog (Catalog.applyMarketRecords) and its positions
 * follow its prices and borrow index (RiskIndex.applyMarketFactors). Markets the model does not
 * hold are skipped. Returns the markets changed.
 */
function applyMarketChanges(model: ReadModel, changes: readonly StoredMarketChange[]): number {
  const factors = model.catalog.applyMarketRecords(changes.map((c) => c.record));
  model.risk.applyMarketFactors(factors);
  return factors.length;
}

/**
 * The markets a round names (its market changes and its positions') that the model does not
 * hold: added to the dataset since the model was loaded, their records as the dataset states
 * them (which their positions' amounts are stated at), read from the store. (A market's change
 * row holds its last change only: a round may hold an added market's positions and not the
 * market, moved on to a later round.) Keys the dataset does not hold are not markets of it.
 */
async function marketsAdded(
  store: MarketDataSource,
  model: ReadModel,
  round: Pick<ChangeRound, 'markets' | 'positions'>,
): Promise<MarketRecord[]> {
  const unknown = new Set<string>();
  const note = (key: string) => {
    if (model.catalog.ordOf(key) === undefined) unknown.add(key);
  };
  for (const c of round.markets) note(c.record.uniqueKey);
  for (const p of round.positions) note(p.marketKey);
  return unknown.size === 0 ? [] : store.loadMarkets([...unknown]);
}

/**
 * Applies a round of the store's vault changes in one synchronous step: each record replaces the
 * dataset's vault of the same chain and address, or is added (the vault index is rebuilt, vaults
 * being few; also when markets were added, which vaults may lend to). Returns the vaults changed.
 */
function applyVaultChanges(
  model: ReadModel,
  changes: readonly StoredVaultChange[],
  marketsAdded: boolean,
): number {
  if (changes.length === 0 && !marketsAdded) return 0;
  const records = new Map(
    model.vaults.entries.map((e) => [`${e.record.chainId}:${e.record.address}`, e.record]),
  );
  for (const { record: v } of changes) records.set(`${v.chainId}:${v.address}`, v);
  model.vaults = new VaultIndex(model.catalog, [...records.values()]);
  return changes.length;
}

/**
 * Follows the store's change feed from the model's sequence number up to `upTo` (changeRounds),
 * applying each round in one synchronous step: markets added first (the dataset's records of the
 * round's markets the model does not hold, read before the step), markets changed (a position's
 * amounts are stated at its market's dataset prices and borrow index, which no market change
 * moves), vaults, then positions; the model's sequence number moves past the round once all of
 * it is applied; a round read after the dataset was written whole is not. Returns the changes
 * applied.
 */
export async function catchUpChanges(
  store: MarketDataSource,
  model: ReadModel,
  upTo: number,
): Promise<number> {
  let applied = 0;
  for await (const round of changeRounds(store, model.changeSeq, upTo)) {
    const added = await marketsAdded(store, model, round);
    // A dataset written whole since the poll read the version: the round may be the new one's
    // (a replacement starts the feed again). Nothing is applied; the next poll loads it.
    if ((await store.datasetInfo())?.version !== model.dataset.version) break;
    if (added.length > 0 && model.catalog.addMarkets(added).length > 0) model.risk.marketsAdded();
    const n =
      applyMarketChanges(model, round.markets) +
      applyVaultChanges(model, round.vaults, added.length > 0) +
      applyPositionChanges(model, round.positions);
    if (round.markets.length + round.vaults.length + round.positions.length > 0) model.revision++;
    model.changeSeq = round.upTo;
    applied += n;
  }
  return applied;
}

/**
 * Moves prices in a read model: its markets and its positions, with the feeds' last updates and
 * the markets' states of the same instant (`feeds`, see Catalog.applyFeedUpdates; `states`:
 * balances, APYs and borrow indexes, see Catalog.applyMarketStates and
 * RiskIndex.applyDebtIndexes), in one synchronous step, so no answer mixes two instants.
 * `atMs`: the time the prices are of (meta.asOf from then on). `stateOrds`, when the caller
 * knows them: the market of each state (-1: none), else looked up by key.
 */
export function applyPrices(
  model: ReadModel,
  changes: readonly PriceChange[],
  atMs: number,
  feeds: readonly FeedUpdate[] = [],
  states: readonly MarketStateChange[] = [],
  stateOrds?: ArrayLike<number>,
): number {
  const { catalog, risk } = model;
  const ords = stateOrds ?? states.map((st) => catalog.ordOf(st.marketKey) ?? -1);
  // One re-ranking of the catalog for the whole step.
  const markets = catalog.batch(() => {
    catalog.applyFeedUpdates(feeds);
    if (states.length > 0) catalog.applyMarketStates(states, ords);
    return catalog.applyPrices(changes);
  });
  if (states.length > 0) {
    const indexes: { ord: number; index: number }[] = [];
    states.forEach((st, i) => {
      const ord = ords[i] ?? -1;
      if (ord >= 0) indexes.push({ ord, index: st.debtIndex });
    });
    risk.applyDebtIndexes(indexes);
  }
  risk.applyPrices(changes);
  model.asOf = Math.max(model.asOf, atMs);
  model.revision++;
  return markets;
}

/**
 * Freshness of an answer (docs/decisions.md "Meta"): `live` when the data was refreshed from its real
 * source within 60 s, `cached` within 15 min, `snapshot` otherwise. Sandbox data is always
 * `snapshot`, however recently it was generated.
 */
export function freshness(dataset: Pick<DatasetInfo, 'kind' | 'refreshedAt'>, nowMs: number): Freshness {
  if (dataset.kind === 'sandbox') return 'snapshot';
  const age = nowMs - dataset.refreshedAt;
  if (age <= 60_000) return 'live';
  if (age <= 15 * 60_000) return 'cached';
  return 'snapshot';
}

/**
 * The freshness of the dataset and of each chain's sources now, as one string: an answer
 * computed under one value is valid while it holds (its freshness cannot have changed).
 */
export function freshnessKey(model: ReadModel, nowMs: number): string {
  const overall = freshness(model.dataset, nowMs);
  const byChain = model.chainRefreshedAt;
  if (byChain === null || model.dataset.kind === 'sandbox') return overall;
  let key = overall;
  for (const [chain, refreshedAt] of Object.entries(byChain))
    key += `,${chain}:${freshness({ kind: model.dataset.kind, refreshedAt }, nowMs)}`;
  return key;
}

/**
 * Loads the store's dataset into memory. Null when the store holds no dataset yet. Markets and
 * positions are read by separate queries: if another process replaced the dataset in between
 * (the version moved), the load starts over, so markets and positions always belong together.
 */
export async function loadReadModel(store: MarketDataSource, nowMs: number): Promise<ReadModel | null> {
  for (let attempt = 1; ; attempt++) {
    const dataset = await store.datasetInfo();
    if (!dataset) return null;
    const markets = await store.loadMarkets();
    const vaults = await store.loadVaults();
    const catalog = new Catalog(markets, Math.floor(nowMs / 1000));
    const ordOfLoaded = Uint32Array.from(markets, (m) =>
      must(catalog.ordOf(m.uniqueKey), `market ${m.uniqueKey}`),
    );
    const builder = new PositionColumnsBuilder(dataset.positionCount);
    await store.loadPositions((block) => builder.append(block, ordOfLoaded));
    const after = await store.datasetInfo();
    if (after?.version === dataset.version && builder.size === dataset.positionCount) {
      const model: ReadModel = {
        catalog,
        risk: new RiskIndex(catalog, builder.build()),
        vaults: new VaultIndex(catalog, vaults),
        dataset: after,
        asOf: after.refreshedAt,
        changeSeq: 0,
        blocks: null,
        chainRefreshedAt: null,
        syncing: null,
        stored: true,
        synced: true,
        revision: 0,
      };
      // The sources' changes since the dataset was written, then a check that the dataset is
      // still the one loaded (a replacement forgets them).
      await catchUpChanges(store, model, after.changeSeq);
      if ((await store.datasetInfo())?.version === dataset.version) return model;
    }
    if (attempt === 5) throw new Error('the dataset kept changing while it was being loaded');
  }
}

/** Builds a read model straight from records (the sandbox served to test keys). */
export function buildReadModel(
  markets: readonly MarketRecord[],
  positions: Iterable<PositionRecord>,
  dataset: DatasetInfo,
  nowMs: number,
  vaults: readonly VaultRecord[] = [],
): ReadModel {
  const catalog = new Catalog(markets, Math.floor(nowMs / 1000));
  const builder = new PositionColumnsBuilder(dataset.positionCount);
  for (const p of positions) {
    const ord = catalog.ordOf(p.marketKey);
    if (ord === undefined) throw new Error(`position refers to unknown market ${p.marketKey}`);
    builder.push(ord, p);
  }
  return {
    catalog,
    risk: new RiskIndex(catalog, builder.build()),
    vaults: new VaultIndex(catalog, vaults),
    dataset,
    asOf: dataset.refreshedAt,
    changeSeq: 0,
    blocks: null,
    chainRefreshedAt: null,
    syncing: null,
    stored: false,
    synced: true,
    revision: 0,
  };
}

/**
 * The live model of a sources file that no pass has read yet: no market, position or vault, and
 * no refresh (its `refreshedAt` is 0: whatever the clock, never `live` or `cached`). Served to
 * live keys until the sources' first dataset is in the store.
 */
export function unsyncedLiveModel(profile: string, nowMs: number): ReadModel {
  const info: DatasetInfo = {
    kind: 'live',
    profile,
    seed: null,
    refreshedAt: 0,
    marketCount: 0,
    positionCount: 0,
    version: 0,
    changeSeq: 0,
  };
  return { ...buildReadModel([], [], info, nowMs), synced: false };
}
