/**
 * Compound v3 (Comet) on one chain: each comet's configuration (base token and price feed,
 * collateral assets with their factors, the rate curve), its totals with interest accrued to the
 * block, the price of every asset as the comet itself reads it (`getPrice`), the accounts that
 * its events named, and its absorptions (liquidations). No npm package ships Comet's ABI: the few
 * functions and events read are declared here, with the signatures of compound-finance/comet.
 *
 * Comet's arithmetic is followed exactly: a base balance is a principal times an index
 * (`principal × index / 1e15`), the indices accrue per second on the kinked rate curve at the
 * utilization of the stored totals, prices have 8 decimals, factors 18. So an account's debt
 * follows from its principal and the comet's totals at every block: a pass after the first reads
 * each comet's totals and prices and only the accounts that new events touched (a CometCache
 * keeps the others), and the debts equal `borrowBalanceOf`.
 */
import { type AbiEvent, parseAbi, zeroAddress } from 'viem';
import { type ChainRpc, getLogsAdaptive, throwIfUnread } from './rpc.ts';
import { keepTokens, TOKEN_CALLS, type TokenMeta, tokenCalls } from './tokens.ts';

export const cometAbi = parseAbi([
  'function baseToken() view returns (address)',
  'function baseTokenPriceFeed() view returns (address)',
  'function numAssets() view returns (uint8)',
  'struct AssetInfo { uint8 offset; address asset; address priceFeed; uint64 scale; uint64 borrowCollateralFactor; uint64 liquidateCollateralFactor; uint64 liquidationFactor; uint128 supplyCap; }',
  'function getAssetInfo(uint8 i) view returns (AssetInfo)',
  'function getPrice(address priceFeed) view returns (uint256)',
  'struct TotalsBasic { uint64 baseSupplyIndex; uint64 baseBorrowIndex; uint64 trackingSupplyIndex; uint64 trackingBorrowIndex; uint104 totalSupplyBase; uint104 totalBorrowBase; uint40 lastAccrualTime; uint8 pauseFlags; }',
  'function totalsBasic() view returns (TotalsBasic)',
  'function userBasic(address) view returns (int104 principal, uint64 baseTrackingIndex, uint64 baseTrackingAccrued, uint16 assetsIn, uint8 _reserved)',
  'function collateralBalanceOf(address account, address asset) view returns (uint128)',
  'function borrowBalanceOf(address account) view returns (uint256)',
  'function isLiquidatable(address account) view returns (bool)',
  'function supplyKink() view returns (uint256)',
  'function supplyPerSecondInterestRateSlopeLow() view returns (uint256)',
  'function supplyPerSecondInterestRateSlopeHigh() view returns (uint256)',
  'function supplyPerSecondInterestRateBase() view returns (uint256)',
  'function borrowKink() view returns (uint256)',
  'function borrowPerSecondInterestRateSlopeLow() view returns (uint256)',
  'function borrowPerSecondInterestRateSlopeHigh() view returns (uint256)',
  'function borrowPerSecondInterestRateBase() view returns (uint256)',
  'event Supply(address indexed from, address indexed dst, uint256 amount)',
  'event Withdraw(address indexed src, address indexed to, uint256 amount)',
  'event Transfer(address indexed from, address indexed to, uint256 amount)',
  'event SupplyCollateral(address indexed from, address indexed dst, address indexed asset, uint256 amount)',
  'event TransferCollateral(address indexed from, address indexed to, address indexed asset, uint256 amount)',
  'event WithdrawCollateral(address indexed src, address indexed to, address indexed asset, uint256 amount)',
  'event AbsorbDebt(address indexed absorber, address indexed borrower, uint256 basePaidOut, uint256 usdValue)',
  'event AbsorbCollateral(address indexed absorber, address indexed borrower, address indexed asset, uint256 collateralAbsorbed, uint256 usdValue)',
]);

const eventsOf = (names: readonly string[]) =>
  cometAbi.filter((item) => item.type === 'event' && names.includes(item.name));
/** Every event that changes an account's base principal or collateral. */
const EVENTS = eventsOf([
  'Supply',
  'Withdraw',
  'Transfer',
  'SupplyCollateral',
  'TransferCollateral',
  'WithdrawCollateral',
  'AbsorbDebt',
  'AbsorbCollateral',
]) as readonly AbiEvent[];

/** The arguments of each event that name an account whose balances it changes (not a payer). */
const ACCOUNT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Supply: ['dst'],
  Withdraw: ['src'],
  Transfer: ['from', 'to'],
  SupplyCollateral: ['dst'],
  WithdrawCollateral: ['src'],
  TransferCollateral: ['from', 'to'],
  AbsorbDebt: ['borrower'],
  AbsorbCollateral: ['borrower'],
};

const RATE_GETTERS = [
  'supplyKink',
  'supplyPerSecondInterestRateSlopeLow',
  'supplyPerSecondInterestRateSlopeHigh',
  'supplyPerSecondInterestRateBase',
  'borrowKink',
  'borrowPerSecondInterestRateSlopeLow',
  'borrowPerSecondInterestRateSlopeHigh',
  'borrowPerSecondInterestRateBase',
] as const;

export const FACTOR_SCALE = 10n ** 18n;
const BASE_INDEX_SCALE = 10n ** 15n;

type Hex = `0x${string}`;

/** A kinked rate curve, per second, 1e18 (Comet's `getSupplyRate`/`getBorrowRate`). */
export interface RateCurve {
  kink: bigint;
  slopeLow: bigint;
  slopeHigh: bigint;
  base: bigint;
}

export interface CometAsset {
  asset: string;
  priceFeed: string;
  /** 10^decimals. */
  scale: bigint;
  /** 1e18 factors. */
  liquidateCollateralFactor: bigint;
  liquidationFactor: bigint;
}

/** What a comet's configuration says (read once per process). */
export interface CometConfig {
  baseToken: string;
  baseTokenPriceFeed: string;
  assets: CometAsset[];
  supplyCurve: RateCurve;
  borrowCurve: RateCurve;
}

/** An account's base principal (negative: a debt) and its collateral balance per asset of the comet. */
export interface CometAccount {
  principal: bigint;
  collateral: bigint[];
}

export interface CometRead {
  comet: string;
  config: CometConfig;
  base: TokenMeta;
  /** Per asset of the config, its token (null when it does not answer `decimals()`). */
  tokens: (TokenMeta | null)[];
  /** Indices accrued to the block (1e15). */
  supplyIndex: bigint;
  borrowIndex: bigint;
  /** Present values of the totals at the block, base units. */
  totalSupply: bigint;
  totalBorrow: bigint;
  /** Rates per second (1e18) at the stored totals' utilization: those that accrue now. */
  supplyRate: bigint;
  borrowRate: bigint;
  /** `getPrice` of the base feed and of each asset's feed (8 decimals, the comet's quote). */
  basePrice: bigint;
  prices: (bigint | null)[];
  /** Accounts with collateral or a debt. */
  accounts: { user: string; account: CometAccount }[];
}

/** One absorption (Comet's liquidation of an account): its debt event and its collateral events. */
export interface CometAbsorb {
  comet: string;
  txHash: string;
  block: number;
  /** Unix seconds of the block. */
  timestamp: number;
  absorber: string;
  borrower: string;
  /** Base credited to the account: its debt cleared, plus any surplus of collateral value as supply. */
  basePaidOut: bigint;
  /** basePaidOut at the comet's base price (8 decimals). */
  baseValue: bigint;
  collateral: { asset: string; logIndex: number; amount: bigint; value: bigint }[];
}

export interface CompoundRead {
  comets: CometRead[];
  absorbs: CometAbsorb[];
  failures: { id: string; error: string }[];
  /** Accounts read from the chain this pass (the others came from the cache). */
  accountsRead: number;
  /** Every account known after this pass, by comet (served or not). */
  accounts: { comet: string; user: string }[];
}

/** What a chain source keeps of its comets between passes in one process. */
export class CometCache {
  readonly configs = new Map<string, CometConfig>();
  readonly tokens = new Map<string, TokenMeta>();
  /** Per `${comet}:${user}`: the account as last read; null when it held nothing. */
  readonly accounts = new Map<string, CometAccount | null>();

  clear(): void {
    this.configs.clear();
    this.tokens.clear();
    this.accounts.clear();
  }
}

/** Comet's `totalsBasic()` as viem decodes it. */
interface Totals {
  baseSupplyIndex: bigint;
  baseBorrowIndex: bigint;
  totalSupplyBase: bigint;
  totalBorrowBase: bigint;
  lastAccrualTime: number;
}

const first = (err: Error | undefined) => err?.message.split('\n')[0] ?? 'no answer';
const BLOCKS_AT_ONCE = 100;

/** Comet's kinked curve at utilization `u` (1e18). */
export function rateAt(curve: RateCurve, u: bigint): bigint {
  if (u <= curve.kink) return curve.base + (curve.slopeLow * u) / FACTOR_SCALE;
  return (
    curve.base +
    (curve.slopeLow * curve.kink) / FACTOR_SCALE +
    (curve.slopeHigh * (u - curve.kink)) / FACTOR_SCALE
  );
}

/** An account's debt (base units) at a borrow index: Comet's `presentValueBorrow`. */
export function debtOf(principal: bigint, borrowIndex: bigint): bigint {
  return principal < 0n ? (-principal * borrowIndex) / BASE_INDEX_SCALE : 0n;
}

/**
 * One pass over the comets at `block` (whose time is `timestamp`): the logs of each comet from
 * its `fromBlock` (or the pass's `resumeFrom`) to `block` name the accounts to read again.
 */
export async function readCompound(
  rpc: ChainRpc,
  comets: readonly { comet: string; fromBlock: number }[],
  range: { resumeFrom: bigint | null; block: bigint; timestamp: bigint },
  known: readonly { comet: string; user: string }[],
  cache: CometCache = new CometCache(),
): Promise<CompoundRead> {
  const at = { blockNumber: range.block, allowFailure: true, ...(await rpc.multicallOptions()) } as const;
  const accounts = new Map<string, { comet: string; user: string }>();
  for (const a of known) accounts.set(`${a.comet}:${a.user}`, a);
  const touched = new Set<string>();
  const absorbs = new Map<string, CometAbsorb>();
  const failures: CompoundRead['failures'] = [];
  const pending: Omit<CometAbsorb, 'timestamp'>[] = [];

  // 1. Logs: the accounts they touch, and absorptions.
  for (const { comet, fromBlock } of comets) {
    const from = range.resumeFrom ?? BigInt(fromBlock);
    if (from > range.block) continue;
    const logs = await getLogsAdaptive(rpc, {
      address: comet as Hex,
      events: EVENTS,
      fromBlock: from,
      toBlock: range.block,
    });
    for (const l of logs) {
      const args = l.args as Record<string, unknown>;
      for (const field of ACCOUNT_FIELDS[l.eventName] ?? []) {
        const u = String(args[field]).toLowerCase();
        // A mint or burn (Transfer from or to zero) names no second account.
        if (u === zeroAddress) continue;
        accounts.set(`${comet}:${u}`, { comet, user: u });
        touched.add(`${comet}:${u}`);
      }
      if (l.eventName !== 'AbsorbCollateral' && l.eventName !== 'AbsorbDebt') continue;
      const borrower = String(args['borrower']).toLowerCase();
      const key = `${l.transactionHash}:${borrower}:${comet}`;
      let a = pending.find((p) => `${p.txHash}:${p.borrower}:${p.comet}` === key);
      if (!a) {
        a = {
          comet,
          txHash: l.transactionHash.toLowerCase(),
          block: Number(l.blockNumber),
          absorber: String(args['absorber']).toLowerCase(),
          borrower,
          basePaidOut: 0n,
          baseValue: 0n,
          collateral: [],
        };
        pending.push(a);
      }
      if (l.eventName === 'AbsorbDebt') {
        a.basePaidOut = args['basePaidOut'] as bigint;
        a.baseValue = args['usdValue'] as bigint;
      } else {
        a.collateral.push({
          asset: String(args['asset']).toLowerCase(),
          logIndex: l.logIndex,
          amount: args['collateralAbsorbed'] as bigint,
          value: args['usdValue'] as bigint,
        });
      }
    }
  }
  // The absorptions' block times, asked together (one batched request per hundred blocks).
  const blocks = [...new Set(pending.map((p) => BigInt(p.block)))];
  const times = new Map<bigint, number>();
  for (let i = 0; i < blocks.length; i += BLOCKS_AT_ONCE) {
    const chunk = blocks.slice(i, i + BLOCKS_AT_ONCE);
    const read = await Promise.all(chunk.map((blockNumber) => rpc.client.getBlock({ blockNumber })));
    for (const [j, n] of chunk.entries()) times.set(n, Number(read[j]!.timestamp));
  }
  for (const p of pending)
    absorbs.set(`${p.txHash}:${p.borrower}`, { ...p, timestamp: times.get(BigInt(p.block))! });

  // 2. Configurations not known yet: base, feed, curve, asset count; then the assets.
  const unknown = comets.map((c) => c.comet).filter((c) => !cache.configs.has(c)) as Hex[];
  if (unknown.length > 0) {
    const heads = await rpc.client.multicall({
      ...at,
      contracts: unknown.flatMap((address) => [
        { address, abi: cometAbi, functionName: 'baseToken' } as const,
        { address, abi: cometAbi, functionName: 'baseTokenPriceFeed' } as const,
        { address, abi: cometAbi, functionName: 'numAssets' } as const,
        ...RATE_GETTERS.map((functionName) => ({ address, abi: cometAbi, functionName }) as const),
      ]),
    });
    throwIfUnread(heads);
    const PER = 3 + RATE_GETTERS.length;
    const found: { comet: Hex; base: string; feed: string; n: number; rates: bigint[] }[] = [];
    unknown.forEach((comet, i) => {
      const r = heads.slice(i * PER, (i + 1) * PER);
      const bad = r.find((x) => x.status !== 'success');
      if (bad) {
        failures.push({ id: comet, error: `comet ${comet}: ${first(bad.error)}` });
        return;
      }
      found.push({
        comet,
        base: String(r[0]!.result).toLowerCase(),
        feed: String(r[1]!.result).toLowerCase(),
        n: Number(r[2]!.result),
        rates: r.slice(3).map((x) => x.result as bigint),
      });
    });
    const infos = await rpc.client.multicall({
      ...at,
      contracts: found.flatMap((f) =>
        Array.from(
          { length: f.n },
          (_, i) => ({ address: f.comet, abi: cometAbi, functionName: 'getAssetInfo', args: [i] }) as const,
        ),
      ),
    });
    throwIfUnread(infos);
    let k = 0;
    for (const f of found) {
      const assets: CometAsset[] = [];
      let failed: string | null = null;
      for (let i = 0; i < f.n; i++) {
        const r = infos[k++]!;
        if (r.status !== 'success') {
          failed ??= first(r.error);
          continue;
        }
        const info = r.result as {
          asset: string;
          priceFeed: string;
          scale: bigint;
          liquidateCollateralFactor: bigint;
          liquidationFactor: bigint;
        };
        assets.push({
          asset: info.asset.toLowerCase(),
          priceFeed: info.priceFeed.toLowerCase(),
          scale: info.scale,
          liquidateCollateralFactor: info.liquidateCollateralFactor,
          liquidationFactor: info.liquidationFactor,
        });
      }
      if (failed) {
        failures.push({ id: f.comet, error: `comet ${f.comet}: getAssetInfo: ${failed}` });
        continue;
      }
      const [sk, sl, sh, sb, bk, bl, bh, bb] = f.rates as [
        bigint,
        bigint,
        bigint,
        bigint,
        bigint,
        bigint,
        bigint,
        bigint,
      ];
      cache.configs.set(f.comet, {
        baseToken: f.base,
        baseTokenPriceFeed: f.feed,
        assets,
        supplyCurve: { kink: sk, slopeLow: sl, slopeHigh: sh, base: sb },
        borrowCurve: { kink: bk, slopeLow: bl, slopeHigh: bh, base: bb },
      });
    }
  }
  const configured = comets.map((c) => c.comet).filter((c) => cache.configs.has(c)) as Hex[];

  // 3. Every comet's totals and prices; tokens not seen before; the accounts to read.
  const newTokens = [
    ...new Set(
      configured.flatMap((c) => {
        const config = cache.configs.get(c)!;
        return [config.baseToken, ...config.assets.map((a) => a.asset)];
      }),
    ),
  ].filter((t) => !cache.tokens.has(t)) as Hex[];
  const toRead = [...accounts.entries()].filter(
    ([key, a]) => cache.configs.has(a.comet) && (touched.has(key) || !cache.accounts.has(key)),
  );
  const reads = await rpc.client.multicall({
    ...at,
    contracts: [
      ...configured.flatMap((address) => {
        const config = cache.configs.get(address)!;
        return [
          { address, abi: cometAbi, functionName: 'totalsBasic' } as const,
          ...[config.baseTokenPriceFeed, ...config.assets.map((a) => a.priceFeed)].map(
            (feed) => ({ address, abi: cometAbi, functionName: 'getPrice', args: [feed as Hex] }) as const,
          ),
        ];
      }),
      ...tokenCalls(newTokens),
      ...toRead.flatMap(([, a]) => {
        const address = a.comet as Hex;
        return [
          { address, abi: cometAbi, functionName: 'userBasic', args: [a.user as Hex] } as const,
          ...cache.configs.get(a.comet)!.assets.map(
            (asset) =>
              ({
                address,
                abi: cometAbi,
                functionName: 'collateralBalanceOf',
                args: [a.user as Hex, asset.asset as Hex],
              }) as const,
          ),
        ];
      }),
    ],
  });
  throwIfUnread(reads);
  let k = 0;
  const states: { comet: Hex; totals: Totals | null; prices: (bigint | null)[] }[] = [];
  for (const comet of configured) {
    const config = cache.configs.get(comet)!;
    const totals = reads[k++]!;
    const prices = [config.baseTokenPriceFeed, ...config.assets].map(() => {
      const r = reads[k++]!;
      return r.status === 'success' ? (r.result as bigint) : null;
    });
    if (totals.status !== 'success')
      failures.push({ id: comet, error: `comet ${comet}: totalsBasic: ${first(totals.error)}` });
    states.push({ comet, totals: totals.status === 'success' ? (totals.result as Totals) : null, prices });
  }
  keepTokens(newTokens, reads.slice(k), cache.tokens);
  k += newTokens.length * TOKEN_CALLS;
  for (const [key, a] of toRead) {
    const n = cache.configs.get(a.comet)!.assets.length;
    const r = reads.slice(k, k + 1 + n);
    k += 1 + n;
    const bad = r.find((x) => x.status !== 'success');
    if (bad) {
      failures.push({ id: key, error: `account ${key}: ${first(bad.error)}` });
      continue;
    }
    const principal = (r[0]!.result as readonly unknown[])[0] as bigint;
    const collateral = r.slice(1).map((x) => x.result as bigint);
    const empty = principal === 0n && collateral.every((c) => c === 0n);
    cache.accounts.set(key, empty ? null : { principal, collateral });
  }

  // 4. Each comet at the block, by Comet's arithmetic.
  const out: CometRead[] = [];
  for (const { comet, totals, prices } of states) {
    if (!totals) continue;
    const config = cache.configs.get(comet)!;
    const base = cache.tokens.get(config.baseToken);
    if (!base) {
      failures.push({
        id: comet,
        error: `comet ${comet}: base token ${config.baseToken} does not answer decimals()`,
      });
      continue;
    }
    const [basePrice, ...assetPrices] = prices;
    if (!basePrice) {
      failures.push({
        id: comet,
        error: `comet ${comet}: getPrice of the base feed ${config.baseTokenPriceFeed} did not answer`,
      });
      continue;
    }
    const { baseSupplyIndex, baseBorrowIndex, totalSupplyBase, totalBorrowBase } = totals;
    const storedSupply = (totalSupplyBase * baseSupplyIndex) / BASE_INDEX_SCALE;
    const storedBorrow = (totalBorrowBase * baseBorrowIndex) / BASE_INDEX_SCALE;
    const u = storedSupply === 0n ? 0n : (storedBorrow * FACTOR_SCALE) / storedSupply;
    const supplyRate = rateAt(config.supplyCurve, u);
    const borrowRate = rateAt(config.borrowCurve, u);
    const last = BigInt(totals.lastAccrualTime);
    const elapsed = range.timestamp > last ? range.timestamp - last : 0n;
    const supplyIndex = baseSupplyIndex + (baseSupplyIndex * supplyRate * elapsed) / FACTOR_SCALE;
    const borrowIndex = baseBorrowIndex + (baseBorrowIndex * borrowRate * elapsed) / FACTOR_SCALE;
    const held: CometRead['accounts'] = [];
    for (const [key, a] of accounts) {
      if (a.comet !== comet) continue;
      const account = cache.accounts.get(key);
      if (account && (account.principal < 0n || account.collateral.some((c) => c > 0n)))
        held.push({ user: a.user, account });
    }
    out.push({
      comet,
      config,
      base,
      tokens: config.assets.map((a) => cache.tokens.get(a.asset) ?? null),
      supplyIndex,
      borrowIndex,
      totalSupply: (totalSupplyBase * supplyIndex) / BASE_INDEX_SCALE,
      totalBorrow: (totalBorrowBase * borrowIndex) / BASE_INDEX_SCALE,
      supplyRate,
      borrowRate,
      basePrice,
      prices: assetPrices,
      accounts: held,
    });
  }
  return {
    comets: out,
    absorbs: [...absorbs.values()],
    failures,
    accountsRead: toRead.length,
    accounts: [...accounts.values()],
  };
}

/**
 * An account's health as Comet judges it (`isLiquidatable`): the collateral's value at the
 * liquidation factors over the debt's value, each in the comet's price units with Comet's
 * rounding; Infinity without debt. Also each asset's weighted value (the debt's share of each
 * market follows it).
 */
export function accountHealth(
  read: Pick<CometRead, 'config' | 'basePrice' | 'prices' | 'borrowIndex'> & { baseScale: bigint },
  account: CometAccount,
): { healthFactor: number; weighted: bigint[]; debt: bigint } {
  const weighted = read.config.assets.map((a, i) => {
    const price = read.prices[i];
    const balance = account.collateral[i] ?? 0n;
    if (!price || balance === 0n) return 0n;
    return (((balance * price) / a.scale) * a.liquidateCollateralFactor) / FACTOR_SCALE;
  });
  const debt = debtOf(account.principal, read.borrowIndex);
  const debtValue = (debt * read.basePrice) / read.baseScale;
  const total = weighted.reduce((s, w) => s + w, 0n);
  const healthFactor = debtValue === 0n ? Number.POSITIVE_INFINITY : ratio(total, debtValue);
  return { healthFactor, weighted, debt };
}

/** a / b as a number, exact to a double's precision whatever their size. */
function ratio(a: bigint, b: bigint): number {
  const scale = 10n ** 18n;
  return Number((a * scale) / b) / 1e18;
}
