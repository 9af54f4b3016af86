/**
 * The Morpho API ("Real sources" (docs/decisions.md)'s `morphoApi`): Morpho Blue's markets, borrowers, liquidations and vaults
 * (MetaMorpho) from Morpho's GraphQL API, for the chains the sources file names. One source,
 * `morpho-api`, kind `api`.
 *
 * What it serves, so that no record has two sources: on a chain the file also reads on-chain
 * with Morpho Blue, the chain's markets, positions and liquidations are the chain source's (exact
 * and tied to a block); so are its vaults where the chain reads a MetaMorpho factory, else the API
 * serves them. On its other chains it serves all four.
 *
 * Every figure is the API's, converted as the chain sources convert theirs: token amounts from
 * their integer units and the token's decimals; USD at the API's `priceUsd` of each token (the
 * API is the price source of its markets: it reads no feed); APYs as the API states them
 * (`supplyApy`, `borrowApy`: rewards excluded; the rewards' part is `netSupplyApy − supplyApy`
 * and `borrowApy − netBorrowApy`); a borrower's health factor the API's own (Morpho's
 * `collateral × oracle price × lltv / debt`), else `collateralUsd × lltv / borrowUsd`. Positions
 * are the borrowers' (`borrowShares ≥ 1`): lenders' supply is served through the markets and
 * vaults, not as positions.
 *
 * Lists are read in pages of `pageSize` items (`first`/`skip`); a page the API refuses as too
 * complex is asked again at half the size. A request that fails (the network, an HTTP error, a
 * GraphQL error) fails the whole pass: the source keeps its last data, which ages (docs/decisions.md "Freshness per source"). An item
 * answered out of shape is left out and named; a market left out keeps what the last pass served
 * of it. A market without a USD price of a token is served with what is known ("Real sources" (docs/decisions.md), no
 * position), named; one served priced before keeps its last priced records instead.
 */

import type { LiquidationEvent } from '../../domain/records/history.ts';
import {
  isPriced,
  loanBalances,
  type MarketRecord,
  type OracleRecord,
  type PositionRecord,
  type VaultRecord,
} from '../../domain/types.ts';
import { checkLiquidations } from '../../store/history.ts';
import { checkMarketChanges, checkPositionChanges } from '../../store/position-changes.ts';
import { append } from '../append.ts';
import { scaled } from '../chain/chainlink.ts';
import { usdValue } from '../chain/liquidation.ts';
import { tokenText } from '../chain/tokens.ts';
import type { ItemReport, PreviousRun, Source, SourceOutput } from '../contract.ts';
import { morphoKey, NO_CAP, UNPRICED_NOTE } from '../records.ts';
import type { MorphoApiConfig } from '../sources-file.ts';

/** How far back a first pass reads liquidations (later passes: from the newest one seen). */
export const LIQUIDATION_LOOKBACK_SECONDS = 30 * 86_400;
/** Liquidations are asked again from this long before the newest seen (the API indexes late ones; appends are idempotent). */
export const LIQUIDATION_OVERLAP_SECONDS = 3_600;
/** A request that has not answered after this long fails the pass. */
const REQUEST_TIMEOUT_MS = 30_000;
/** The most requests one list is read in (a guard against an API whose pages never end). */
const MAX_PAGES = 20_000;
/** A MetaMorpho supply cap this high is no cap (caps are uint184). */

const MARKETS = `query Markets($first: Int!, $skip: Int!, $chainIds: [Int!]) {
  markets(first: $first, skip: $skip, where: { chainId_in: $chainIds }) {
    items {
      uniqueKey lltv
      morphoBlue { chain { id } }
      oracle { address type }
      loanAsset { address symbol name decimals priceUsd }
      collateralAsset { address symbol name decimals priceUsd }
      state { supplyAssets borrowAssets supplyApy borrowApy netSupplyApy netBorrowApy rewards { asset { symbol } } }
    }
  }
}`;

const POSITIONS = `query Positions($first: Int!, $skip: Int!, $chainIds: [Int!]) {
  marketPositions(first: $first, skip: $skip, orderBy: BorrowShares, orderDirection: Desc,
    where: { chainId_in: $chainIds, borrowShares_gte: "1" }) {
    items {
      user { address } market { uniqueKey morphoBlue { chain { id } } } healthFactor
      state { supplyAssets borrowAssets collateral }
    }
  }
}`;

const LIQUIDATIONS = `query Liquidations($first: Int!, $skip: Int!, $chainIds: [Int!], $since: Int!) {
  transactions(first: $first, skip: $skip, orderBy: Timestamp, orderDirection: Asc,
    where: { chainId_in: $chainIds, type_in: [MarketLiquidation], timestamp_gte: $since }) {
    items {
      hash logIndex blockNumber timestamp chain { id } user { address }
      data {
        ... on MarketLiquidationTransactionData {
          seizedAssets repaidAssets badDebtAssets seizedAssetsUsd repaidAssetsUsd badDebtAssetsUsd liquidator
          market { uniqueKey loanAsset { decimals } collateralAsset { decimals } }
        }
      }
    }
  }
}`;

const VAULTS = `query Vaults($first: Int!, $skip: Int!, $chainIds: [Int!]) {
  vaults(first: $first, skip: $skip, where: { chainId_in: $chainIds }) {
    items {
      address name symbol chain { id } asset { address symbol }
      state { curator fee allocation { market { uniqueKey } supplyAssets supplyCap } }
    }
  }
}`;

/** The requests a source sends: `fetch`'s shape (tests pass recorded answers). */
export type FetchFn = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

/** The API refused a request, or answered out of shape. */
export class MorphoApiError extends Error {
  override name = 'MorphoApiError';
}

/** The figures of the last successful pass, for the logs and tests. */
export interface MorphoApiStats {
  requests: number;
  markets: number;
  positions: number;
  liquidations: number;
  vaults: number;
}

export interface MorphoApiSource extends Source {
  lastRun(): MorphoApiStats | null;
}

type Json = Record<string, unknown>;

function obj(x: unknown, what: string): Json {
  if (typeof x !== 'object' || x === null || Array.isArray(x))
    throw new MorphoApiError(`${what}: not an object`);
  return x as Json;
}

/** An integer amount (the API's BigInt: a string or a number). */
function big(x: unknown, what: string): bigint {
  if (typeof x === 'string' && /^-?\d+$/.test(x)) return BigInt(x);
  if (typeof x === 'number' && Number.isSafeInteger(x)) return BigInt(x);
  throw new MorphoApiError(`${what}: not an integer amount (${JSON.stringify(x)})`);
}

function num(x: unknown, what: string): number {
  if (typeof x === 'number' && Number.isFinite(x)) return x;
  throw new MorphoApiError(`${what}: not a number (${JSON.stringify(x)})`);
}

/** A chain id (a positive integer). */
function chainIdOf(x: unknown, what: string): number {
  const id = num(x, what);
  if (!Number.isSafeInteger(id) || id < 1) throw new MorphoApiError(`${what}: not a chain id (${id})`);
  return id;
}

/** A number, or null when the API has none. */
function numOrNull(x: unknown, what: string): number | null {
  return x === null || x === undefined ? null : num(x, what);
}

function str(x: unknown, what: string): string {
  if (typeof x === 'string') return x;
  throw new MorphoApiError(`${what}: not a string`);
}

function address(x: unknown, what: string): string {
  const s = str(x, what);
  if (!/^0x[0-9a-fA-F]{40}$/.test(s)) throw new MorphoApiError(`${what}: not an address`);
  return s.toLowerCase();
}

function decimals(x: unknown, what: string): number {
  const d = num(x, what);
  if (!Number.isInteger(d) || d < 0 || d > 36) throw new MorphoApiError(`${what}: not token decimals (${d})`);
  return d;
}

/** Where this source's prices come from. */
const API_PRICE = { kind: 'api', address: null, description: 'Morpho API priceUsd' } as const;

/** A token's text as the chain sources serve it (tokenText), or '' when the API gives none. */
function text(x: unknown, max: number): string {
  return typeof x === 'string' ? tokenText(x, max) : '';
}

interface Token {
  address: string;
  symbol: string;
  name: string;
  decimals: number;
  /** The API's USD price; null when it has none. */
  usd: number | null;
}

function token(x: unknown, what: string): Token {
  const t = obj(x, what);
  const usd = numOrNull(t.priceUsd, `${what}.priceUsd`);
  return {
    address: address(t.address, `${what}.address`),
    symbol: text(t.symbol, 32),
    name: text(t.name, 64),
    decimals: decimals(t.decimals, `${what}.decimals`),
    usd: usd !== null && usd > 0 ? usd : null,
  };
}

/** A market as read: its record's facts, and its supply in loan units (vault shares are of it). */
interface ApiMarket {
  key: string;
  chainId: number;
  loan: Token;
  collateral: Token;
  supplyAssets: bigint;
  record: MarketRecord | null;
}

/** What the API says of a market's oracle: its address and kind (the feeds' update times are not in it). */
function oracleRecord(addressOf: string, type: unknown): OracleRecord {
  const chainlink = type === 'ChainlinkOracleV2' || type === 'ChainlinkOracle';
  return {
    address: addressOf,
    type: chainlink ? type : 'Custom',
    provider: chainlink ? 'Chainlink' : 'Unknown',
    feeds: [],
    isComposite: false,
    warnings: [
      "Feeds not read: the Morpho API does not state their last update; read the market's chain for its oracle health",
    ],
  };
}

/** The oracle the API names for a market (null: none named). */
function oracleOf(x: unknown, key: string): OracleRecord | null {
  if (x === null || x === undefined) return null;
  const o = obj(x, `market ${key}: oracle`);
  return oracleRecord(address(o.address, `market ${key}: oracle.address`), o.type);
}

/** A market item, or null for an idle market (no collateral token: never served). */
function readMarket(item: unknown): { market: ApiMarket; unpriced: string | null } | null {
  const m = obj(item, 'market');
  const id = str(m.uniqueKey, 'market.uniqueKey');
  if (!/^0x[0-9a-fA-F]{64}$/.test(id)) throw new MorphoApiError(`market ${id}: uniqueKey is not a market id`);
  if (m.collateralAsset === null || m.collateralAsset === undefined) return null;
  const chainId = chainIdOf(
    obj(obj(m.morphoBlue, 'market.morphoBlue').chain, 'market.morphoBlue.chain').id,
    `market ${id}: chain id`,
  );
  const key = morphoKey(chainId, id);
  const loan = token(m.loanAsset, `market ${key}: loanAsset`);
  const collateral = token(m.collateralAsset, `market ${key}: collateralAsset`);
  const state = obj(m.state, `market ${key}: state`);
  const supplyAssets = big(state.supplyAssets, `market ${key}: state.supplyAssets`);
  const borrowAssets = big(state.borrowAssets, `market ${key}: state.borrowAssets`);
  const market: ApiMarket = { key, chainId, loan, collateral, supplyAssets, record: null };
  const unpricedToken = loan.usd === null ? loan : collateral.usd === null ? collateral : null;
  const supplyApy = num(state.supplyApy, `market ${key}: state.supplyApy`);
  const borrowApy = num(state.borrowApy, `market ${key}: state.borrowApy`);
  const netSupplyApy = numOrNull(state.netSupplyApy, `market ${key}: state.netSupplyApy`);
  const netBorrowApy = numOrNull(state.netBorrowApy, `market ${key}: state.netBorrowApy`);
  const rewards = Array.isArray(state.rewards) ? state.rewards : [];
  const rewardTokens = [
    ...new Set(
      rewards.map((r) => text(obj(obj(r, 'reward').asset, 'reward.asset').symbol, 32)).filter(Boolean),
    ),
  ];
  market.record = {
    uniqueKey: key,
    protocol: 'morpho',
    chainId,
    label: null,
    collateral: collateral.symbol,
    collateralName: collateral.name,
    collateralAddress: collateral.address,
    loan: loan.symbol,
    loanName: loan.name,
    loanAddress: loan.address,
    collateralDecimals: collateral.decimals,
    loanDecimals: loan.decimals,
    // A price the API does not state is null, and the USD amounts of the loan token with it (docs/decisions.md "Real sources").
    collateralPrice: collateral.usd,
    loanPrice: loan.usd,
    ...loanBalances(scaled(supplyAssets, loan.decimals), scaled(borrowAssets, loan.decimals), loan.usd),
    supplyApy,
    borrowApy,
    supplyRewardsApy: netSupplyApy === null ? 0 : Math.max(0, netSupplyApy - supplyApy),
    borrowRewardsApy: netBorrowApy === null ? 0 : Math.max(0, borrowApy - netBorrowApy),
    rewardTokens,
    lltv: scaled(big(m.lltv, `market ${key}: lltv`), 18),
    vaultSymbol: null,
    vaultAddress: null,
    governor: null,
    loanPriceSource: loan.usd === null ? null : API_PRICE,
    collateralPriceSource: collateral.usd === null ? null : API_PRICE,
    oracle: oracleOf(m.oracle, key),
  };
  checkMarketChanges([market.record]);
  return {
    market,
    unpriced: unpricedToken
      ? `market ${key}: the Morpho API has no USD price for its ${unpricedToken === loan ? 'loan token' : 'collateral'} ${unpricedToken.symbol} ${unpricedToken.address}`
      : null,
  };
}

function readPosition(item: unknown, markets: ReadonlyMap<string, ApiMarket>): PositionRecord | null {
  const p = obj(item, 'position');
  const m = obj(p.market, 'position.market');
  const id = str(m.uniqueKey, 'position.market.uniqueKey');
  const chainId = chainIdOf(
    obj(obj(m.morphoBlue, 'position.market.morphoBlue').chain, 'position.market.morphoBlue.chain').id,
    `position in ${id}: chain id`,
  );
  const user = address(obj(p.user, 'position.user').address, 'position.user.address');
  const market = markets.get(morphoKey(chainId, id));
  // A position of a market not served (idle, left out) or without a USD price is not served either.
  if (!market?.record || !isPriced(market.record)) return null;
  const r = market.record;
  const what = `position ${r.uniqueKey}:${user}`;
  const state = obj(p.state, `${what}: state`);
  const collateralUsd =
    scaled(big(state.collateral, `${what}: collateral`), market.collateral.decimals) * r.collateralPrice;
  const borrowUsd =
    scaled(big(state.borrowAssets, `${what}: borrowAssets`), market.loan.decimals) * r.loanPrice;
  const supplyUsd =
    scaled(big(state.supplyAssets, `${what}: supplyAssets`), market.loan.decimals) * r.loanPrice;
  const hf = numOrNull(p.healthFactor, `${what}: healthFactor`);
  const record: PositionRecord = {
    marketKey: r.uniqueKey,
    user,
    collateralUsd,
    borrowUsd,
    supplyUsd,
    healthFactor: hf ?? (borrowUsd > 0 ? (collateralUsd * r.lltv) / borrowUsd : Number.POSITIVE_INFINITY),
  };
  checkPositionChanges([record]);
  return record;
}

/** The unix second of a liquidation item, when it can be read (to hold its chain's cursor there). */
function liquidationTime(item: unknown): number | null {
  const at = (item as { timestamp?: unknown } | null)?.timestamp;
  if (typeof at === 'number' && Number.isSafeInteger(at) && at >= 0) return at;
  if (typeof at === 'string' && /^\d+$/.test(at)) return Number(at);
  return null;
}

function readLiquidation(
  item: unknown,
  markets: ReadonlyMap<string, ApiMarket>,
  unread: ReadonlySet<string>,
  served: (key: string) => MarketRecord | undefined,
): LiquidationEvent {
  const t = obj(item, 'liquidation');
  const txHash = str(t.hash, 'liquidation.hash').toLowerCase();
  const what = `liquidation ${txHash}`;
  const data = obj(t.data, `${what}: data`);
  const m = obj(data.market, `${what}: market`);
  const id = str(m.uniqueKey, `${what}: market.uniqueKey`);
  const chainId = chainIdOf(obj(t.chain, `${what}: chain`).id, `${what}: chain.id`);
  const loanDecimals = decimals(obj(m.loanAsset, `${what}: loanAsset`).decimals, `${what}: loan decimals`);
  const collateralDecimals = decimals(
    obj(m.collateralAsset, `${what}: collateralAsset`).decimals,
    `${what}: collateral decimals`,
  );
  const marketKey = morphoKey(chainId, id);
  // (A market not priced this pass is served at its last prices: so is its liquidation. One never
  // priced states its amounts in tokens, their USD values unknown.)
  const fresh = markets.get(marketKey)?.record ?? null;
  const market = fresh && isPriced(fresh) ? fresh : (served(marketKey) ?? fresh);
  const amount = (field: string, units: number) => scaled(big(data[field], `${what}: ${field}`), units);
  const collateralSeized = amount('seizedAssets', collateralDecimals);
  const debtRepaid = amount('repaidAssets', loanDecimals);
  const badDebt = amount('badDebtAssets', loanDecimals);
  // In USD as the API valued them at the liquidation, else at the market's price now, else
  // unknown (docs/decisions.md "Real sources"). Of a market the API answered out of shape this pass (its price unread), it is
  // read again next pass: it holds its chain's cursor.
  const usd = (field: string, tokens: number, price: number | null | undefined) => {
    const v = numOrNull(data[field], `${what}: ${field}`);
    if (v !== null) return v;
    if (!market && unread.has(marketKey) && tokens !== 0)
      throw new MorphoApiError(
        `${what}: no USD value (${field}), and its market ${marketKey} could not be read`,
      );
    return usdValue(tokens, price ?? null);
  };
  const event: LiquidationEvent = {
    protocol: 'morpho',
    chainId,
    txHash,
    logIndex: num(t.logIndex, `${what}: logIndex`),
    block: Number(big(t.blockNumber, `${what}: blockNumber`)),
    at: Number(big(t.timestamp, `${what}: timestamp`)) * 1000,
    marketKey,
    borrower: address(obj(t.user, `${what}: user`).address, `${what}: user.address`),
    liquidator: address(data.liquidator, `${what}: liquidator`),
    collateralSeized,
    collateralSeizedUsd: usd('seizedAssetsUsd', collateralSeized, market?.collateralPrice),
    debtRepaid,
    debtRepaidUsd: usd('repaidAssetsUsd', debtRepaid, market?.loanPrice),
    badDebt,
    badDebtUsd: usd('badDebtAssetsUsd', badDebt, market?.loanPrice),
  };
  // (What the history refuses, a fractional log index, fails this item, not the pass's writes.)
  checkLiquidations([event]);
  return event;
}

/**
 * A vault item. An allocation to a market the API answered out of shape (`unread`) fails the
 * vault (it keeps its last record). A cap is kept in units of the asset: one to a market without
 * a USD price is served in them, its USD value null, never dropped or stated at 0.
 */
function readVault(
  item: unknown,
  markets: ReadonlyMap<string, ApiMarket>,
  unread: ReadonlySet<string>,
): VaultRecord {
  const v = obj(item, 'vault');
  const vault = address(v.address, 'vault.address');
  const chainId = chainIdOf(obj(v.chain, `vault ${vault}: chain`).id, `vault ${vault}: chain.id`);
  const asset = obj(v.asset, `vault ${vault}: asset`);
  const state = obj(v.state, `vault ${vault}: state`);
  const curator =
    state.curator === null || state.curator === undefined ? null : address(state.curator, 'curator');
  const fee = num(state.fee, `vault ${vault}: fee`);
  if (fee < 0 || fee > 1) throw new MorphoApiError(`vault ${vault}: fee ${fee} is not 0 to 1`);
  const allocations: VaultRecord['allocations'] = [];
  for (const a of Array.isArray(state.allocation) ? state.allocation : []) {
    const alloc = obj(a, `vault ${vault}: allocation`);
    const id = str(obj(alloc.market, `vault ${vault}: allocation.market`).uniqueKey, 'uniqueKey');
    const key = morphoKey(chainId, id);
    if (unread.has(key)) throw new MorphoApiError(`vault ${vault}: its market ${key} could not be read`);
    const market = markets.get(key);
    // Allocations to markets the API does not serve (idle: no collateral) hold no borrower's risk.
    if (!market) continue;
    const supplied = big(alloc.supplyAssets, `vault ${vault}: supplyAssets`);
    const cap = big(alloc.supplyCap, `vault ${vault}: supplyCap`);
    if (supplied === 0n && cap === 0n) continue;
    const share =
      market.supplyAssets > 0n
        ? Math.min(1, Number((supplied * 10n ** 18n) / market.supplyAssets) / 1e18)
        : 0;
    allocations.push({
      marketKey: key,
      supplyShare: share,
      // In units of the asset: valued at the market's price as served.
      supplyCap: cap >= NO_CAP ? null : scaled(cap, market.loan.decimals),
    });
  }
  return {
    protocol: 'morpho',
    chainId,
    address: vault,
    name: text(v.name, 64),
    symbol: text(v.symbol, 32),
    assetAddress: address(asset.address, `vault ${vault}: asset.address`),
    assetSymbol: text(asset.symbol, 32),
    curator: curator === '0x0000000000000000000000000000000000000000' ? null : curator,
    governor: null,
    fee,
    allocations,
  };
}

/**
 * The checkpoint's cursor: per chain, the unix second its liquidations are read from next (the
 * newest one seen, held at the oldest one that could not be read); a chain without one reads the
 * lookback.
 */
function readCursor(cursor: string | null | undefined): Map<number, number> {
  const out = new Map<number, number>();
  try {
    const c = JSON.parse(cursor ?? '{}') as { liquidationsFrom?: Record<string, unknown> };
    for (const [chain, at] of Object.entries(c.liquidationsFrom ?? {}))
      if (typeof at === 'number' && Number.isSafeInteger(at)) out.set(Number(chain), at);
  } catch {
    // An unreadable cursor reads the lookback again (a liquidation is appended once).
  }
  return out;
}

/**
 * The Morpho API source. `onChainMorpho`: the chains the sources file reads Morpho Blue on
 * (their markets, positions and liquidations are theirs; see the module comment).
 */
export function morphoApiSource(
  config: MorphoApiConfig,
  options: {
    onChainMorpho?: ReadonlySet<number>;
    onChainVaults?: ReadonlySet<number>;
    fetch?: FetchFn;
    timeoutMs?: number;
  } = {},
): MorphoApiSource {
  const send: FetchFn = options.fetch ?? ((url, init) => fetch(url, init));
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const onChain = options.onChainMorpho ?? new Set<number>();
  const vaultsOnChain = options.onChainVaults ?? new Set<number>();
  const chains = new Set(config.chainIds);
  // The chains whose MetaMorpho vaults it serves: those whose vaults no chain source reads.
  const vaultChains = config.chainIds.filter((c) => !vaultsOnChain.has(c));
  const served = config.chainIds.filter((c) => !onChain.has(c));
  let last: MorphoApiStats | null = null;
  let requests = 0;

  /** One GraphQL request; a `too complex` refusal resolves to null (the caller asks for less). */
  async function request(query: string, variables: Json): Promise<Json | null> {
    requests++;
    let res: Awaited<ReturnType<FetchFn>>;
    try {
      res = await send(config.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      // The pass fails with what happened, said plainly (no URL: it may carry a key).
      const e = err as Error & { cause?: { code?: unknown } };
      if (e.name === 'TimeoutError' || e.name === 'AbortError')
        throw new MorphoApiError(`Morpho API: no answer within ${timeoutMs / 1000} s`);
      const code = typeof e.cause?.code === 'string' ? ` (${e.cause.code})` : '';
      throw new MorphoApiError(`Morpho API: request failed${code}`);
    }
    let body: Json;
    try {
      body = obj(await res.json(), 'answer');
    } catch (err) {
      if ((err as Error).name === 'TimeoutError')
        throw new MorphoApiError(`Morpho API: no answer within ${timeoutMs / 1000} s`);
      throw new MorphoApiError(`Morpho API: HTTP ${res.status}, not a GraphQL answer`);
    }
    const errors = Array.isArray(body.errors) ? body.errors : [];
    if (errors.length > 0) {
      const message = errors
        .map((e) => (typeof e === 'object' && e !== null ? String((e as Json).message ?? '') : String(e)))
        .join('; ');
      if (/complex/i.test(message)) return null;
      throw new MorphoApiError(`Morpho API: ${message || 'error'} (HTTP ${res.status})`);
    }
    if (!res.ok) throw new MorphoApiError(`Morpho API: HTTP ${res.status}`);
    return obj(body.data, 'Morpho API answer: data');
  }

  /** Every item of a list, page by page (see the module comment). */
  async function list(field: string, query: string, variables: Json): Promise<unknown[]> {
    const items: unknown[] = [];
    let first = config.pageSize;
    let lastPage: string | null = null;
    for (let pages = 0; ; pages++) {
      if (pages >= MAX_PAGES)
        throw new MorphoApiError(`Morpho API: ${field} did not end after ${MAX_PAGES} pages`);
      const data = await request(query, { ...variables, first, skip: items.length });
      if (data === null) {
        if (first === 1) throw new MorphoApiError(`Morpho API: ${field} too complex even one at a time`);
        first = Math.max(1, Math.floor(first / 2));
        continue;
      }
      const got = obj(data[field], `Morpho API answer: ${field}`).items;
      if (!Array.isArray(got)) throw new MorphoApiError(`Morpho API answer: ${field}.items is not a list`);
      // The same full page as the last one: the API ignores `skip` (this would never end).
      const page = got.length >= first ? JSON.stringify(got) : null;
      if (page !== null && page === lastPage)
        throw new MorphoApiError(`Morpho API: ${field} answered the same page twice (skip ignored)`);
      lastPage = page;
      append(items, got);
      if (got.length < first) return items;
    }
  }

  return {
    id: 'morpho-api',
    kind: 'api',
    chainIds: [...config.chainIds],
    owns: (r, kind) =>
      r.protocol === 'morpho' &&
      chains.has(r.chainId) &&
      (kind === 'vault' ? !vaultsOnChain.has(r.chainId) : !onChain.has(r.chainId)),
    lastRun: () => last,
    async run(nowMs: number, previous?: PreviousRun): Promise<SourceOutput> {
      const requests0 = requests;
      const items: ItemReport[] = [];
      const failed = (id: string, err: unknown) =>
        items.push({ id, ok: false, error: err instanceof Error ? err.message : String(err) });
      const cursor = readCursor(previous?.state?.cursor);
      const oldest = Math.floor(nowMs / 1000) - LIQUIDATION_LOOKBACK_SECONDS;
      // Per chain: from its cursor less the overlap, never before the lookback.
      const sinceOf = (chainId: number) =>
        Math.max(oldest, (cursor.get(chainId) ?? oldest) - LIQUIDATION_OVERLAP_SECONDS);

      // Markets of the chains it serves markets or vaults of (a vault's allocations are valued
      // at its markets); a chain whose markets and vaults are both read on chain is not asked.
      const chainIds = config.chainIds.filter((c) => served.includes(c) || vaultChains.includes(c));
      const marketItems = chainIds.length > 0 ? await list('markets', MARKETS, { chainIds }) : [];
      const vaultItems =
        vaultChains.length > 0 ? await list('vaults', VAULTS, { chainIds: vaultChains }) : [];
      const positionItems =
        served.length > 0 ? await list('marketPositions', POSITIONS, { chainIds: served }) : [];
      // One read per chain: each has its own cursor (the API indexes each chain at its own pace).
      const liquidationItems: { chainId: number; item: unknown }[] = [];
      for (const chainId of served)
        for (const item of await list('transactions', LIQUIDATIONS, {
          chainIds: [chainId],
          since: sinceOf(chainId),
        }))
          liquidationItems.push({ chainId, item });

      // Markets by key (`morpho-<chainId>-<id>`: an id is a hash of the market's params, which two
      // chains may share).
      const markets = new Map<string, ApiMarket>();
      const previousMarkets = new Map((previous?.markets ?? []).map((m) => [m.uniqueKey, m]));
      /** Markets of its chains answered out of shape. */
      const unread = new Set<string>();
      /** Markets served as the last pass served them. */
      const kept = new Set<string>();
      for (const item of marketItems) {
        const id = typeof (item as Json)?.uniqueKey === 'string' ? ((item as Json).uniqueKey as string) : '?';
        try {
          const read = readMarket(item);
          if (!read) continue;
          markets.set(read.market.key, read.market);
          if (read.unpriced && served.includes(read.market.chainId)) {
            const last = previousMarkets.get(read.market.key);
            if (last && isPriced(last)) {
              // Once priced, a market keeps its last priced records (which age) until it is again.
              failed(`morpho-api:${read.market.key}`, new Error(read.unpriced));
              kept.add(read.market.key);
            } else {
              // Never priced: served with what is known (docs/decisions.md "Real sources").
              items.push({
                id: `morpho-api:${read.market.key}`,
                ok: true,
                note: `${read.unpriced}: ${UNPRICED_NOTE[read.market.record?.loanPrice === null ? 'loan' : 'collateral']}`,
              });
            }
          }
        } catch (err) {
          failed(`morpho-api:${id}`, err);
          for (const c of chainIds) unread.add(morphoKey(c, id));
          for (const c of served) kept.add(morphoKey(c, id));
        }
      }
      const outMarkets: MarketRecord[] = [];
      for (const m of markets.values())
        if (m.record && served.includes(m.chainId) && !kept.has(m.key)) outMarkets.push(m.record);
      // A market not served this pass keeps what the last pass served of it, with its positions.
      for (const key of kept) {
        const record = previousMarkets.get(key);
        if (record) outMarkets.push(record);
      }

      const positions: PositionRecord[] = [];
      const seen = new Set<string>();
      for (const item of positionItems) {
        try {
          const p = readPosition(item, markets);
          if (!p || kept.has(p.marketKey) || seen.has(`${p.marketKey}:${p.user}`)) continue;
          seen.add(`${p.marketKey}:${p.user}`);
          positions.push(p);
        } catch (err) {
          failed('morpho-api:position', err);
        }
      }
      for (const p of previous?.positions ?? []) if (kept.has(p.marketKey)) positions.push(p);

      const liquidations: LiquidationEvent[] = [];
      // Each chain's next cursor: its newest liquidation, held at the oldest one not read.
      const newest = new Map(served.map((c) => [c, cursor.get(c) ?? null] as const));
      const held = new Map<number, number>();
      const servedMarket = (key: string) => previousMarkets.get(key);
      for (const { chainId, item } of liquidationItems) {
        try {
          const l = readLiquidation(item, markets, unread, servedMarket);
          if (l.chainId !== chainId)
            throw new MorphoApiError(`liquidation ${l.txHash}: of chain ${l.chainId}, asked for ${chainId}`);
          liquidations.push(l);
          newest.set(chainId, Math.max(newest.get(chainId) ?? 0, Math.floor(l.at / 1000)));
        } catch (err) {
          failed('morpho-api:liquidation', err);
          // Its chain's cursor is held at it; at the old cursor when its time cannot be read.
          const at = liquidationTime(item) ?? cursor.get(chainId) ?? sinceOf(chainId);
          held.set(chainId, Math.min(held.get(chainId) ?? at, at));
        }
      }
      const liquidationsFrom: Record<string, number> = {};
      for (const [c, at] of newest) {
        const hold = held.get(c);
        const next = hold === undefined ? at : Math.min(at ?? hold, hold);
        if (next !== null) liquidationsFrom[c] = next;
      }

      // Vaults by chain and address: each once (offset pages may repeat one).
      const vaultsByKey = new Map<string, VaultRecord>();
      const previousVaults = new Map((previous?.vaults ?? []).map((v) => [`${v.chainId}:${v.address}`, v]));
      for (const item of vaultItems) {
        try {
          const v = readVault(item, markets, unread);
          if (vaultChains.includes(v.chainId)) vaultsByKey.set(`${v.chainId}:${v.address}`, v);
        } catch (err) {
          failed('morpho-api:vault', err);
          // A vault that cannot be read this pass keeps its last record (of its chain, when it says).
          const i = item as { address?: unknown; chain?: { id?: unknown } } | null;
          const address = typeof i?.address === 'string' ? i.address.toLowerCase() : '';
          const chainOf = i?.chain?.id;
          for (const c of typeof chainOf === 'number' ? [chainOf] : vaultChains) {
            const key = `${c}:${address}`;
            const kept = previousVaults.get(key);
            if (kept && !vaultsByKey.has(key)) vaultsByKey.set(key, kept);
          }
        }
      }
      const vaults = [...vaultsByKey.values()];

      last = {
        requests: requests - requests0,
        markets: outMarkets.length,
        positions: positions.length,
        liquidations: liquidations.length,
        vaults: vaults.length,
      };
      return {
        records: { markets: outMarkets, positions, vaults },
        liquidations,
        cursor: JSON.stringify({ liquidationsFrom }),
        items,
      };
    },
  };
}
