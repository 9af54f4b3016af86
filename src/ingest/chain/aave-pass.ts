/**
 * Aave v3's and Spark's part of a chain source's pass: the pools of the sources file read at the
 * pass's block (aave.ts), each reserve pair served as a market at the USD prices of the file's
 * feeds (else the pool's oracle in USD), and their liquidations in their pair's market at their
 * block's prices. A pool's items are named by its protocol (`aave:0x…`, `spark:0x…`).
 */
import { IAaveOracle_ABI } from '@aave-dao/aave-address-book/abis/IAaveOracle';
import { must } from '../../domain/must.ts';
import type { MarketRecord } from '../../domain/types.ts';
import type { ChainConfig, FeedConfig } from '../sources-file.ts';
import { aaveLogAddresses, readAave } from './aave.ts';
import { aaveKey, aaveLiquidation, aavePair, aavePrices, aaveRecords } from './aave-records.ts';
import { AAVE_EVENTS, AaveCache, type AavePoolRead, ATOKEN_EVENTS } from './aave-types.ts';
import { groupOf } from './account-reads.ts';
import { blocksByKey, knownHolders, pending, strings } from './checkpoint.ts';
import type { LiquidationPrices } from './liquidation.ts';
import { HandedPools } from './pooled-pairs.ts';
import { atPricedBlocks, type PricedBlocks, pricesAt, unpricedBlocks } from './prices-at-blocks.ts';
import { oracleRecord, type Token } from './pricing.ts';
import {
  type Assembly,
  type ContractWalk,
  type PassContext,
  type ProtocolAdapter,
  type ProtocolPass,
  servedItem,
} from './protocol.ts';
import { type ChainRpc, throwIfUnread } from './rpc.ts';

/**
 * Aave's part of the checkpoint: the Aave and Spark pools read, as `${protocol}:${pool}:${fromBlock}`
 * (`deployment` when found by the source: a pool not named there is read from its start,
 * `syncBlocks` of its logs a pass: its walk, which the source keeps); pools read before, or
 * walking their logs, whose reserves a pass could not list, each with the first block of the
 * logs it did not read (its walk starts there, not at its start); and the accounts of pools not served, or served without
 * every price.
 */
interface AaveCheckpoint {
  aave: string[];
  aaveFrom: Record<string, number>;
  aavePending: string[];
}

/** Each Aave or Spark pool as the checkpoint names it. */
const aaveConfig = (p: ChainConfig['aave'][number]) =>
  `${p.protocol}:${p.pool}:${p.fromBlock ?? 'deployment'}`;

export function aaveAdapter(chain: ChainConfig): ProtocolAdapter {
  const aave = new AaveCache();
  // Accounts to read again after a reorganization, kept until a pass succeeds.
  const reread = new Set<string>();
  const handed = new HandedPools();
  return {
    events: [...AAVE_EVENTS, ...ATOKEN_EVENTS],
    starts: chain.aave.map((p) => ({ fromBlock: p.fromBlock, address: p.pool })),
    sameConfig: () => true,
    forget(rereadAccounts) {
      if (rereadAccounts) for (const key of [...aave.accounts.keys(), ...aave.retry]) reread.add(key);
      aave.clear();
      handed.forget();
    },
    begin: (ctx) => {
      handed.begin();
      return aavePass(ctx, aave, reread, handed);
    },
    settle(block) {
      aave.accounts.settle(block);
      reread.clear();
      handed.settle();
    },
    accountsKept: () => aave.accounts.size,
  };
}

/** What a pool's health factors follow besides prices and indexes: its reserves' settings, e-modes and code. */
function poolShape(read: AavePoolRead): string {
  const { code } = read;
  return [
    read.oracle,
    read.baseCurrency,
    read.baseUnit,
    code.bitmaps,
    code.rounding,
    code.flagged,
    ...read.reserves.map(
      (r) =>
        `${r.asset}:${r.id}:${r.config.liquidationThreshold}:${r.config.decimals}:${r.config.active}:${r.config.borrowing}:${r.config.paused}:${r.config.eModeCategory}`,
    ),
    ...[...read.eModes].map(
      ([id, e]) => `e${id}:${e.liquidationThreshold}:${e.priceSource}:${e.collateralBitmap}:${e.price}`,
    ),
  ].join(',');
}

function aavePass(
  ctx: PassContext,
  aave: AaveCache,
  reread: ReadonlySet<string>,
  handed: HandedPools,
): ProtocolPass {
  const { chain, rpc, previous, items, resume, target } = ctx;
  const chainId = chain.chainId;
  const protocolOf = new Map(chain.aave.map((p) => [p.pool, p.protocol]));
  const poolKind = (pool: string) => protocolOf.get(pool) ?? 'aave';
  // After the first pass the pools already read resume at the pass's first block.
  const readPools = new Set(resume === null ? [] : strings(ctx.checkpoint.parts['aave']));
  const resumedPools = chain.aave.filter((p) => readPools.has(aaveConfig(p))).map((p) => p.pool);
  // (Not past the pass's first block: a reorganization may have moved it back.)
  const unread = new Map<string, bigint>();
  if (resume !== null)
    for (const [key, block] of blocksByKey(ctx.checkpoint.parts['aaveFrom']))
      unread.set(key, BigInt(Math.min(block, Number(resume))));
  let aaveRead: Awaited<ReturnType<typeof readAave>> | null = null;
  // Pools added while the chain resumes, walking their logs from their start.
  const walks = new Map<string, ContractWalk>();
  // Each pool served, its reserves' prices; `whole` when every reserve has one.
  const aaveServed = new Map<string, { prices: Map<string, number | null>; whole: boolean }>();
  return {
    logAddresses: aaveLogAddresses(resumedPools, aave),

    async read(shared) {
      if (chain.aave.length === 0) return;
      aaveRead = await readAave(
        rpc,
        await Promise.all(
          chain.aave.map(async (p) => {
            if (resume !== null && resumedPools.includes(p.pool)) return { pool: p.pool, from: resume };
            const left = unread.get(aaveConfig(p));
            const start = () =>
              left !== undefined ? Promise.resolve(left) : ctx.startOf(p.fromBlock, p.pool);
            if (resume === null) return { pool: p.pool, from: await start() };
            // Added while the chain resumes (or not listed by a pass: from the logs it left): its
            // logs from its start, `syncBlocks` a pass.
            const walk = await ctx.walk(`aave:${aaveConfig(p)}`, start);
            walks.set(p.pool, walk);
            return { pool: p.pool, from: walk.fromBlock, to: walk.toBlock };
          }),
        ),
        { block: target, logsTo: ctx.logsTo },
        // The holders the store knows of, until a pass of this process has read them all (it
        // keeps them since); those pending and those a reorganization left to read.
        resume === null
          ? []
          : [
              ...(handed.holdersKept ? [] : knownHolders(`aave-${chainId}-`, previous)),
              ...knownHolders(`spark-${chainId}-`, handed.holdersKept ? undefined : previous, [
                ...strings(ctx.checkpoint.parts['aavePending']),
                ...reread,
              ]),
            ].map(({ group, user }) => ({ pool: group, user })),
        aave,
        shared,
      );
      // (The logs of a pool not listed were not read: its walk ends, and it starts again from
      // its first block unread, kept in aaveFrom.)
      for (const [pool, walk] of walks) {
        if (aaveRead.listed.includes(pool)) walk.read();
        else walk.end();
      }
      handed.read(aaveRead.read);
      for (const f of aaveRead.failures)
        items.push({ id: `${poolKind(groupOf(f.id))}:${f.id}`, ok: false, error: f.error });
    },

    namedFeeds: () =>
      (aaveRead?.pools ?? []).flatMap((p) => p.reserves.flatMap((r) => (r.source ? [r.source] : []))),

    // A pool whose every reserve has a USD price (the file's feeds, else the pool's oracle in USD)
    // is served; one never priced whole is served with what is known ("Real sources" (docs/decisions.md): the markets of an
    // unpriced reserve without its USD figures, and their positions unserved, its accounts
    // followed); one priced before keeps what the last pass served of it.
    async assemble(out: Assembly) {
      const { usdOf, byFeed, feedSymbolOf } = out.prices;
      handed.assembling();
      const aaveMarkets = new Map<string, MarketRecord>();
      for (const p of aaveRead?.pools ?? []) {
        const kind = poolKind(p.pool);
        const prices = aavePrices(p, usdOf);
        const unpriced = p.reserves.filter((r) => prices.get(r.asset) == null);
        const why =
          unpriced.length > 0
            ? `no USD price for ${unpriced.map((r) => `${r.token.symbol} ${r.asset}`).join(', ')} (its oracle's base currency is not USD: add ${unpriced.map((r) => `${r.token.symbol}/USD`).join(', ')} to the sources file)`
            : null;
        // A pool this process handed priced whole, the same since, is handed in part: the
        // accounts read this pass; the others hold the same balances, their figures moving with
        // the markets' prices and indexes, which the records carry. (Not while a reserve holds
        // stable debt: it accrues at each account's own rate, not by an index; nor while an e-mode
        // category has a price source (v3.0-3.1): its accounts' assets are priced by it, not by
        // the prices their records carry.)
        const shape = poolShape(p);
        const ratios = new Map(
          p.reserves.map((r) => [r.asset, Number(r.price) / (prices.get(r.asset) ?? 0)]),
        );
        const stable = p.reserves.some((r) => r.totalDebt !== r.variableDebtTotal);
        const categoryPriced = [...p.eModes.values()].some((e) => e.price !== 0n);
        const was =
          resume !== null && !why && !stable && !categoryPriced ? handed.partOf(p.pool, shape, ratios) : null;
        const records = aaveRecords(
          kind,
          chainId,
          p,
          prices,
          (c, d) => {
            const sources = [c.source, d.source].filter((x) => x !== null);
            return oracleRecord(p.oracle, sources.length > 0 ? sources : null, byFeed, 'ChainlinkOracle');
          },
          { now: Number(ctx.timestamp), usdOf },
          was ? { accounts: handed.readIn(p.pool, aave.accounts), ...was } : undefined,
        );
        const wrong = out.refusal(records, why);
        if (wrong) {
          items.push({ id: `${kind}:${p.pool}`, ok: false, error: `pool ${p.pool}: ${wrong}` });
          continue;
        }
        for (const m of records.markets) aaveMarkets.set(m.uniqueKey, m);
        aaveServed.set(p.pool, { prices, whole: !why });
        out.serve(records);
        handed.hand(
          p.pool,
          was,
          { markets: records.markets, partial: out.partial },
          why ? null : { shape, ratios, owed: records.owed, pairs: records.pairs },
        );
        items.push(
          servedItem(
            `${kind}:${p.pool}`,
            why &&
              `pool ${p.pool}: ${why}: the markets of those tokens served without their USD price and without positions`,
          ),
        );
      }
      out.keepFailedPools('aave', aaveMarkets);
      out.keepFailedPools('spark', aaveMarkets);
      // Liquidations in their pair's market at their block's prices (the newest MAX_PRICED_BLOCKS
      // blocks of the pass; the others at the pass's, named).
      const aavePools = new Map((aaveRead?.pools ?? []).map((p) => [p.pool, p]));
      const aaveFound = (aaveRead?.liquidations ?? []).flatMap((l) => {
        const kind = poolKind(l.pool);
        // Its pair's market; else (the pair lends no more and the liquidation closed its last
        // position) the pair as the pool's reserves state it.
        const read = aavePools.get(l.pool);
        const prices = aaveServed.get(l.pool)?.prices;
        const record =
          aaveMarkets.get(aaveKey(kind, chainId, l.pool, l.collateral, l.debt)) ??
          (read && prices ? aavePair(kind, chainId, read, prices, l.collateral, l.debt) : null);
        if (!record)
          items.push({
            id: `${kind}:${l.pool}:liquidation:${l.txHash}:${l.logIndex}`,
            ok: false,
            error: `liquidation in ${l.txHash} of ${l.collateral} for ${l.debt} in pool ${l.pool} not recorded: the pool is not served, or no longer lists one of them`,
          });
        return record ? [{ l, record }] : [];
      });
      const aaveThen = await aavePricesAtBlocks(
        rpc,
        chain.chainlink,
        aaveFound.flatMap(({ l }) => {
          const read = aavePools.get(l.pool);
          return read && BigInt(l.block) < target ? [{ block: l.block, read, l }] : [];
        }),
        feedSymbolOf,
      );
      items.push(...unpricedBlocks('aave', 'liquidation', aaveThen));
      for (const { l, record } of aaveFound) {
        const at = aaveThen.at.get(`${l.block}:${l.pool}:${l.collateral}:${l.debt}`);
        out.liquidations.push(aaveLiquidation(chainId, l, record, pricesAt(at, record)));
      }
    },

    checkpoint: () =>
      ({
        // A pool not listed this pass (its reserves refused): its logs were not read; it walks
        // them from the first it did not read. One still walking its logs goes on with its walk.
        aave: chain.aave.filter((p) => caughtUp(p)).map(aaveConfig),
        aaveFrom: Object.fromEntries(
          chain.aave.flatMap((p) => {
            if (resume === null || caughtUp(p)) return [];
            // (A pool walking its logs keeps its place in its walk; one whose walk ended unread,
            // in aaveFrom.)
            const listed = aaveRead?.listed.includes(p.pool) ?? false;
            const from = resumedPools.includes(p.pool)
              ? resume
              : ((listed ? undefined : walks.get(p.pool)?.fromBlock) ?? unread.get(aaveConfig(p)));
            return from === undefined ? [] : [[aaveConfig(p), Number(from)]];
          }),
        ),
        aavePending: pending(
          ctx,
          'aave',
          'accounts of pools not served, or served without every price',
          chain.aave.flatMap((p) =>
            aaveServed.get(p.pool)?.whole
              ? []
              : (aaveRead?.holders(p.pool) ?? []).map((a) => `${a.pool}:${a.user}`),
          ),
        ),
      }) satisfies AaveCheckpoint,

    positionsRead: () => aaveRead?.accountsRead ?? 0,
  };

  /** Whether the pool's logs are read through the pass's last block (it resumes with the others). */
  function caughtUp(p: ChainConfig['aave'][number]): boolean {
    return (aaveRead?.listed.includes(p.pool) ?? false) && walks.get(p.pool)?.caughtUp !== false;
  }
}

/**
 * For Aave and Spark liquidations: at each liquidation's block, the file's feeds and the pool's
 * oracle (`getAssetPrice` of the collateral and the debt) read there, priced as the pass prices
 * (`aavePrices`), by `${block}:${pool}:${collateral}:${debt}`; the newest MAX_PRICED_BLOCKS blocks.
 */
async function aavePricesAtBlocks(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  wanted: readonly { block: number; read: AavePoolRead; l: { collateral: string; debt: string } }[],
  feedSymbolOf: (t: Token) => string | null,
): Promise<{ at: Map<string, LiquidationPrices> } & PricedBlocks> {
  const at = new Map<string, LiquidationPrices>();
  const walked = await atPricedBlocks(rpc, feeds, wanted, feedSymbolOf, async (block, all, usdOf) => {
    // Each pool and pair once.
    const here = [...new Map(all.map((w) => [`${w.read.pool}:${w.l.collateral}:${w.l.debt}`, w])).values()];
    const reads = await rpc.multicall({
      blockNumber: BigInt(block),
      allowFailure: true,
      ...(await rpc.multicallOptions()),
      contracts: here.flatMap(({ read, l }) =>
        [l.collateral, l.debt].map(
          (asset) =>
            ({
              address: read.oracle as `0x${string}`,
              abi: IAaveOracle_ABI,
              functionName: 'getAssetPrice',
              args: [asset as `0x${string}`],
            }) as const,
        ),
      ),
    });
    throwIfUnread(reads);
    here.forEach(({ read, l }, i) => {
      // An asset at the block: by the file's feeds, else by the oracle's price read there.
      const usdAt = (asset: string, j: number) => {
        const reserve = read.reserves.find((r) => r.asset === asset);
        const r = must(reads[i * 2 + j], `price answer of ${asset}`);
        if (!reserve) return null;
        const price = r.status === 'success' ? (r.result as bigint) : 0n;
        return (
          usdOf(reserve.token) ??
          (price > 0n
            ? (aavePrices({ ...read, reserves: [{ ...reserve, price }] }, usdOf).get(asset) ?? null)
            : null)
        );
      };
      at.set(`${block}:${read.pool}:${l.collateral}:${l.debt}`, {
        collateralUsd: usdAt(l.collateral, 0),
        loanUsd: usdAt(l.debt, 1),
      });
    });
  });
  return { at, ...walked };
}
