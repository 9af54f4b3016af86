/**
 * Fluid's part of a chain source's pass: its T1 vaults read at the pass's block through its
 * resolvers (fluid.ts), each served as one market at its borrow token's USD price (the file's
 * feeds) and its supply token's (the file's feeds, else the vault's oracle), and their
 * liquidations at their block's feed prices.
 */
import {
  isPriced,
  type MarketRecord,
  type PositionRecord,
  type PricedMarketRecord,
} from '../../domain/types.ts';
import { UNPRICED_NOTE } from '../records.ts';
import type { ChainConfig } from '../sources-file.ts';
import { type Checkpoint, strings } from './checkpoint.ts';
import {
  FLUID_FACTORY_EVENTS,
  FLUID_VAULT_EVENTS,
  FluidCache,
  type FluidVaultRead,
  readFluid,
} from './fluid.ts';
import {
  fluidKey,
  fluidLiquidation,
  fluidPrices,
  fluidRecords,
  oracleCollateralUsd,
} from './fluid-records.ts';
import { feedPricesAtBlocks, pricesAt, unpricedBlocks } from './prices-at-blocks.ts';
import { customOracle } from './pricing.ts';
import {
  type Assembly,
  implausible,
  ORACLE_DRIFT,
  type PassContext,
  type ProtocolAdapter,
  type ProtocolPass,
  servedItem,
} from './protocol.ts';

/**
 * Fluid's part of the checkpoint: Fluid as read, `${vaultResolver}:${positionsResolver}:${fromBlock}`
 * (other resolvers or another start block read its vaults from their start); its T1 vaults whose
 * logs are read; vaults some of whose positions held the checkpoint could not name (read from
 * their start by a process that does not hold them: a new one, or one after another's passes);
 * their factories; the positions held that the store does not
 * (`${vault}:${nftId}`: of vaults not served priced, and those to read again). The store's are
 * found by a new process from their owners.
 */
interface FluidCheckpoint {
  fluid: string | null;
  fluidVaults: string[];
  fluidTruncated: string[];
  fluidFactories: string[];
  fluidHeld: string[];
  /** Positions moved whose vault could not be looked up (ids): looked up by a new process. */
  fluidUnplaced: string[];
}

function readFluidCheckpoint(c: Checkpoint): FluidCheckpoint {
  const { fluid, fluidVaults, fluidTruncated, fluidFactories, fluidHeld, fluidUnplaced } = c.parts;
  return {
    fluid: typeof fluid === 'string' ? fluid : null,
    fluidVaults: strings(fluidVaults),
    fluidTruncated: strings(fluidTruncated),
    fluidFactories: strings(fluidFactories),
    fluidHeld: strings(fluidHeld),
    fluidUnplaced: strings(fluidUnplaced),
  };
}

/**
 * Per vault the last pass handed priced: its oracle's collateral price over its record's, and
 * what else its positions' health is of (its oracle, threshold and tokens' decimals), when it
 * was last handed whole. A pass makes the next of these, which its success makes current.
 */
type Handed = ReadonlyMap<string, { ratio: number; shape: string }>;

export function fluidAdapter(chain: ChainConfig): ProtocolAdapter {
  const fluid = new FluidCache();
  // Positions to read again after a reorganization, kept until a pass succeeds.
  const reread = new Set<string>();
  let handed: Handed = new Map();
  const next: { handed: Handed | null } = { handed: null };
  const config = chain.fluid
    ? `${chain.fluid.vaultResolver}:${chain.fluid.positionsResolver}:${chain.fluid.fromBlock ?? 'deployment'}`
    : null;
  return {
    events: [...FLUID_VAULT_EVENTS, ...FLUID_FACTORY_EVENTS],
    // (Its factories, and so their deployments, are found by its resolver as it reads.)
    starts: chain.fluid ? [{ fromBlock: chain.fluid.fromBlock, address: null }] : [],
    sameConfig: () => true,
    forget(rereadAccounts) {
      if (rereadAccounts) for (const key of [...fluid.positions.keys(), ...fluid.retry]) reread.add(key);
      fluid.clear();
      handed = new Map();
      next.handed = null;
    },
    begin: (ctx) => fluidPass(ctx, fluid, reread, config, handed, next),
    settle(block) {
      fluid.positions.settle(block);
      fluid.ownersRead.clear();
      reread.clear();
      if (next.handed) handed = next.handed;
      next.handed = null;
    },
    accountsKept: () => fluid.positions.size,
  };
}

function fluidPass(
  ctx: PassContext,
  fluid: FluidCache,
  reread: ReadonlySet<string>,
  config: string | null,
  handed: Handed,
  next: { handed: Handed | null },
): ProtocolPass {
  const { chain, rpc, previous, items, resume, target } = ctx;
  const chainId = chain.chainId;
  const saved = readFluidCheckpoint(ctx.checkpoint);
  const resumes = resume !== null && config !== null && saved.fluid === config;
  // Vaults whose positions did not all fit in the checkpoint are read from their start by a
  // process that does not hold them (a new one, or after another process's passes).
  const truncated = new Set(ctx.ownCheckpoint ? [] : saved.fluidTruncated);
  const logged = resumes ? saved.fluidVaults.filter((v) => !truncated.has(v)) : [];
  let fluidRead: Awaited<ReturnType<typeof readFluid>> | null = null;
  // The vaults whose positions this pass hands from what it read (by market key, priced): their
  // positions are in the store once it is written (not those of a vault kept as it was).
  const built = new Set<string>();
  return {
    logAddresses: logged.length > 0 ? [...logged, ...saved.fluidFactories] : [],

    async read(shared) {
      const fluidConf = chain.fluid;
      if (!fluidConf) return;
      if (resumes && !fluid.warm) for (const id of saved.fluidUnplaced) fluid.unplaced.add(id);
      fluidRead = await readFluid(
        rpc,
        fluidConf,
        {
          start: async (factory, vault) => {
            const floor = await ctx.startOf(fluidConf.fromBlock, factory);
            // (A vault the checkpoint could not hold every position of: its whole history.)
            if (vault === null || truncated.has(vault)) return floor;
            // (Not before the file's block or the factory: a node without old state answers 0.)
            const deployed = await ctx.deployedAt(vault);
            return deployed > floor ? deployed : floor;
          },
          resume: resumes ? resume : null,
          block: target,
          logsTo: ctx.logsTo,
        },
        {
          logged,
          factories: resumes ? saved.fluidFactories : [],
          positions: [...(resumes ? saved.fluidHeld : []), ...reread].map((key) => {
            const split = key.lastIndexOf(':');
            return { vault: key.slice(0, split), nftId: key.slice(split + 1) };
          }),
          owners: resumes && !fluid.warm ? storedOwners(chainId, previous) : [],
        },
        fluid,
        shared,
      );
      for (const f of fluidRead.failures) items.push({ id: `fluid:${f.id}`, ok: false, error: f.error });
    },

    namedFeeds: () => [],

    // A T1 vault is served at its borrow token's USD price (the file's feeds) and its supply
    // token's (the file's feeds, else the vault's oracle); one never priced without them is
    // served with what is known ("Real sources" (docs/decisions.md): no position); one priced before, or that cannot be read,
    // keeps what the last pass served of it.
    //
    // A vault this process handed priced in its last pass, the same since, is handed in part: the
    // owners whose positions were read (one left with none at zero). Another owner's positions
    // hold the same raw amounts: their collateral and debt move with the vault's exchange prices
    // (the record's collateral and borrow indexes) and prices, and their health with the oracle's
    // price, as long as that follows the record's collateral price. Any other vault is handed
    // whole (priced again, its oracle moved apart from the collateral's feed, another oracle,
    // threshold or token decimals, a process's first pass).
    async assemble(out: Assembly) {
      const { usdOf, noPriceHint, feedSymbolOf } = out.prices;
      const fluidMarkets = new Map<string, PricedMarketRecord>();
      const fluidUnpriced = new Map<string, MarketRecord>();
      const handing = new Map<string, { ratio: number; shape: string }>();
      for (const v of fluidRead?.vaults ?? []) {
        const prices = fluidPrices(v, usdOf);
        const unpriced =
          prices.loanUsd === null ? v.borrowToken : prices.collateralUsd === null ? v.supplyToken : null;
        const why =
          unpriced && `no USD price for ${unpriced.symbol} ${unpriced.address} (${noPriceHint(unpriced)})`;
        const last = out.previousMarkets.get(fluidKey(chainId, v.vault));
        if (why && last && isPriced(last)) {
          items.push({ id: `fluid:${v.vault}`, ok: false, error: `vault ${v.vault}: ${why}` });
          continue;
        }
        const key = fluidKey(chainId, v.vault);
        const ratio = oracleRatio(v, prices);
        const shape = `${v.oracle}:${v.thresholdPercent}:${v.supplyToken.decimals}:${v.borrowToken.decimals}`;
        const was = handed.get(v.vault);
        const inPart =
          resume !== null &&
          ratio !== null &&
          last !== undefined &&
          isPriced(last) &&
          was?.shape === shape &&
          Math.abs(ratio / was.ratio - 1) <= ORACLE_DRIFT;
        const ex = { supply: v.supplyExchangePrice, borrow: v.borrowExchangePrice };
        const owners = inPart ? [...(fluid.ownersRead.get(v.vault) ?? [])] : undefined;
        const records = fluidRecords(
          chainId,
          v,
          prices,
          customOracle(
            v.oracle,
            'Fluid oracle: prices are its liquidation rate (getExchangeRateLiquidate); the sources behind it are not resolved',
          ),
          fluid.positionsOf(v.vault, ex, owners),
        );
        const wrong = implausible(records);
        if (wrong) {
          items.push({ id: `fluid:${v.vault}`, ok: false, error: `vault ${v.vault}: ${wrong}` });
          continue;
        }
        for (const m of records.markets)
          if (isPriced(m)) fluidMarkets.set(m.uniqueKey, m);
          else fluidUnpriced.set(m.uniqueKey, m);
        const market = records.markets[0];
        if (market && isPriced(market)) built.add(key);
        if (ratio !== null && market && isPriced(market))
          handing.set(v.vault, inPart && was ? was : { ratio, shape });
        if (owners) {
          out.partial.add(key);
          const held = new Set(records.positions.map((p) => p.user));
          for (const owner of owners) if (!held.has(owner)) records.positions.push(emptyPosition(key, owner));
        }
        out.serve(records);
        items.push(
          servedItem(
            `fluid:${v.vault}`,
            why &&
              `vault ${v.vault}: ${why}: ${UNPRICED_NOTE[prices.loanUsd === null ? 'loan' : 'collateral']}`,
          ),
        );
      }
      // Vaults not served keep their last records: every one when the resolver did not answer.
      const fluidConf = chain.fluid;
      const resolverFailed =
        fluidConf !== null && items.some((i) => !i.ok && i.id === `fluid:${fluidConf.vaultResolver}`);
      const fluidFailed = new Set(
        items.flatMap((i) =>
          !i.ok && i.id.startsWith('fluid:0x') && !i.id.slice(6).includes(':')
            ? [fluidKey(chainId, i.id.slice(6))]
            : [],
        ),
      );
      // (Priced or served without a price, as the last pass served it.)
      const keptFluid = (previous?.markets ?? []).filter(
        (m) =>
          m.protocol === 'fluid' &&
          !fluidMarkets.has(m.uniqueKey) &&
          !fluidUnpriced.has(m.uniqueKey) &&
          (resolverFailed || fluidFailed.has(m.uniqueKey)) &&
          implausible({ markets: [m], positions: [] }) === null,
      );
      for (const m of keptFluid)
        if (isPriced(m)) fluidMarkets.set(m.uniqueKey, m);
        else fluidUnpriced.set(m.uniqueKey, m);
      out.keep(keptFluid);
      next.handed = handing;
      const fluidFound = (fluidRead?.liquidations ?? []).flatMap((l) => {
        const key = fluidKey(chainId, l.vault);
        const record = fluidMarkets.get(key) ?? fluidUnpriced.get(key);
        if (!record)
          items.push({
            id: `fluid:${l.vault}:liquidation:${l.txHash}:${l.logIndex}`,
            ok: false,
            error: `liquidation in ${l.txHash} of vault ${l.vault} not recorded: the vault is not served`,
          });
        return record ? [{ l, record }] : [];
      });
      const fluidThen = await feedPricesAtBlocks(
        rpc,
        chain.chainlink,
        fluidFound
          .filter(({ l }) => BigInt(l.block) < target)
          .map(({ l, record }) => ({ block: l.block, record })),
        feedSymbolOf,
      );
      items.push(...unpricedBlocks('fluid', 'liquidation', fluidThen));
      for (const { l, record } of fluidFound)
        out.liquidations.push(
          fluidLiquidation(
            chainId,
            l,
            record,
            pricesAt(fluidThen.at.get(`${l.block}:${record.uniqueKey}`), record),
          ),
        );
    },

    checkpoint() {
      // The positions held that the store does not (of vaults not handed from this pass's reads,
      // priced, or to read again), at most `maxPending` in the checkpoint: the vaults of those
      // left out are read from their start by a process that does not hold them (their logs
      // name their positions again). A new process finds the others from their owners, the
      // store's positions.
      const held = (fluidRead?.held ?? []).filter(
        (key) => fluid.retry.has(key) || !built.has(fluidKey(chainId, key.slice(0, key.lastIndexOf(':')))),
      );
      const fluidTruncated = [
        ...new Set(held.slice(ctx.maxPending).map((key) => key.slice(0, key.lastIndexOf(':')))),
      ];
      if (fluidTruncated.length > 0)
        items.push({
          id: 'fluid:held',
          ok: false,
          error: `${held.length} positions held: the checkpoint names ${ctx.maxPending}; a process that does not hold them reads the ${fluidTruncated.length} vaults of the others from their start`,
        });
      return {
        fluid: fluidRead ? config : null,
        fluidVaults: fluidRead?.logged ?? [],
        fluidTruncated,
        fluidFactories: fluidRead?.factories ?? [],
        fluidHeld: held.slice(0, ctx.maxPending),
        fluidUnplaced: [...fluid.unplaced].slice(0, ctx.maxPending),
      } satisfies FluidCheckpoint;
    },

    positionsRead: () => fluidRead?.accountsRead ?? 0,
  };
}

/**
 * The vault oracle's collateral price over the record's (1 when the record's is the oracle's: no
 * feed for the collateral; 0 when the oracle answers 0); null when the vault is not priced.
 */
function oracleRatio(
  v: FluidVaultRead,
  prices: { loanUsd: number | null; collateralUsd: number | null },
): number | null {
  const { loanUsd, collateralUsd } = prices;
  if (loanUsd === null || collateralUsd === null || !(collateralUsd > 0)) return null;
  return oracleCollateralUsd(v, loanUsd) / collateralUsd;
}

/** An owner left with no position in a vault handed in part: its figures at zero (the store forgets it). */
function emptyPosition(marketKey: string, user: string): PositionRecord {
  return {
    marketKey,
    user,
    collateralUsd: 0,
    borrowUsd: 0,
    supplyUsd: 0,
    healthFactor: Number.POSITIVE_INFINITY,
  };
}

/** The owners of the store's Fluid positions on the chain, by vault (`previous`: what it holds). */
function storedOwners(
  chainId: number,
  previous: PassContext['previous'],
): { vault: string; owner: string }[] {
  const prefix = `fluid-${chainId}-`;
  const out: { vault: string; owner: string }[] = [];
  for (const m of previous?.markets ?? []) {
    if (!m.uniqueKey.startsWith(prefix)) continue;
    const vault = m.uniqueKey.slice(prefix.length);
    const held =
      previous?.positionsIn?.(m.uniqueKey) ??
      previous?.positions.filter((p) => p.marketKey === m.uniqueKey) ??
      [];
    for (const p of held) out.push({ vault, owner: p.user });
  }
  return out;
}
