/**
 * Morpho Blue's part of a chain source's pass: its markets and borrowers read at the pass's block
 * (morpho-blue.ts), served at the USD prices of the file's feeds, a collateral without a feed at
 * the market's oracle. A market without a USD price of a token is served with what is known (its
 * USD figures null, no position) and its item says why; once priced, a market without a price
 * keeps its last records.
 */
import { blueOracleAbi } from '@morpho-org/blue-sdk-viem';
import { must } from '../../domain/must.ts';
import {
  isPriced,
  type MarketRecord,
  type PositionRecord,
  type PricedMarketRecord,
} from '../../domain/types.ts';
import type { PreviousRun } from '../contract.ts';
import { morphoKey, UNPRICED_NOTE } from '../records.ts';
import type { ChainConfig, FeedConfig } from '../sources-file.ts';
import { type Checkpoint, knownHolders, knownMarkets, pending, strings } from './checkpoint.ts';
import { type LiquidationPrices, liquidationRecord } from './liquidation.ts';
import {
  CREATE_METAMORPHO,
  MAX_VAULTS,
  METAMORPHO_EVENTS,
  MetaMorphoCache,
  readMetaMorpho,
} from './metamorpho.ts';
import { metaMorphoRecord } from './metamorpho-records.ts';
import { MORPHO_EVENTS, MorphoCache, type MorphoMarketRead, readMorphoBlue } from './morpho-blue.ts';
import { collateralUsdFromOracle, marketRecord, oracleUsd, positionRecord } from './morpho-records.ts';
import { atPricedBlocks, pricesAt } from './prices-at-blocks.ts';
import { oracleRecord, type Token } from './pricing.ts';
import {
  type Assembly,
  type ContractWalk,
  ORACLE_DRIFT,
  type PassContext,
  type ProtocolAdapter,
  type ProtocolPass,
  servedItem,
} from './protocol.ts';
import { type ChainRpc, throwIfUnread } from './rpc.ts';

/**
 * Morpho's part of the checkpoint: the configuration it was read with (`${blue}:${fromBlock}`;
 * null while none is, or while Morpho added to a chain read without it walks its logs), every
 * market id found (served or not: one that could not be read this pass is read again the next),
 * and the accounts of markets not served this pass (read once their market is); the MetaMorpho
 * factories read (`${address}:${fromBlock}`, comma-separated) and the vaults they made.
 */
interface MorphoCheckpoint {
  morpho: string | null;
  /** Morpho added to a chain read without it, walking its logs: its configuration. */
  morphoWalking: string | null;
  markets: string[];
  pending: string[];
  vaultFactories: string;
  vaults: string[];
  /** Vaults found past MAX_VAULTS (not read). */
  vaultsBeyondLimit: number;
  /** Per vault, the markets outside its queues whose submitted cap is pending. */
  vaultCaps: Record<string, string[]>;
}

/**
 * What a Morpho adapter keeps of the positions it handed, between passes: per market the last
 * pass handed priced, its oracle's collateral price over its record's when it was last handed
 * whole. A pass makes the next of these (`next.ratios`), which its success makes current.
 */
type Ratios = ReadonlyMap<string, number>;

export function morphoAdapter(chain: ChainConfig): ProtocolAdapter {
  const cache = new MorphoCache();
  const vaults = new MetaMorphoCache();
  // Accounts to read again after a reorganization, kept until a pass succeeds.
  const reread = new Set<string>();
  let ratios: Ratios = new Map();
  const next: { ratios: Ratios | null } = { ratios: null };
  const config = chain.morpho ? `${chain.morpho.blue}:${chain.morpho.fromBlock}` : null;
  const readsVaults = (chain.morpho?.vaultFactories.length ?? 0) > 0;
  return {
    events: readsVaults ? [...MORPHO_EVENTS, CREATE_METAMORPHO, ...METAMORPHO_EVENTS] : MORPHO_EVENTS,
    starts: chain.morpho ? [{ fromBlock: chain.morpho.fromBlock, address: chain.morpho.blue }] : [],
    // A checkpoint of another Morpho address or start block is not this source's: read again.
    // (One of a chain read without Morpho is: Morpho added walks its own logs; one whose walk is
    // of another address or start block, or of Morpho taken out of the file, is not.)
    sameConfig: (c: Checkpoint) => {
      const walking = c.parts['morphoWalking'];
      if (typeof walking === 'string' && walking !== config) return false;
      return c.parts['morpho'] === undefined || c.parts['morpho'] === null || c.parts['morpho'] === config;
    },
    forget(rereadAccounts) {
      if (rereadAccounts) for (const key of cache.positions.keys()) reread.add(key);
      cache.clear();
      vaults.clear();
      ratios = new Map();
      next.ratios = null;
    },
    begin: (ctx) => morphoPass(ctx, cache, vaults, reread, config, ratios, next),
    settle(block) {
      cache.positions.settle(block);
      vaults.settle(block);
      reread.clear();
      if (next.ratios) ratios = next.ratios;
      next.ratios = null;
    },
    accountsKept: () => cache.positions.size,
  };
}

function morphoPass(
  ctx: PassContext,
  cache: MorphoCache,
  vaults: MetaMorphoCache,
  reread: ReadonlySet<string>,
  config: string | null,
  handed: Ratios,
  next: { ratios: Ratios | null },
): ProtocolPass {
  const { chain, rpc, previous, items, resume, target } = ctx;
  const chainId = chain.chainId;
  const saved = ctx.checkpoint.parts;
  const factories = chain.morpho?.vaultFactories ?? [];
  const factoriesConfig = factories.map((f) => `${f.address}:${f.fromBlock ?? 'deployment'}`).join(',');
  // Other factories than the checkpoint's: their vaults are found again from the factories' start.
  const sameFactories = saved['vaultFactories'] === factoriesConfig;
  // Morpho added while the chain resumes: its logs walked from its start, `syncBlocks` a pass
  // (the markets and accounts found kept in the checkpoint meanwhile); its vaults once it has
  // caught up.
  const walks = resume !== null && config !== null && saved['morpho'] === null;
  let walk: ContractWalk | null = null;
  if (!sameFactories) vaults.clear();
  let morpho: Awaited<ReturnType<typeof readMorphoBlue>> | null = null;
  let vaultsRead = 0;
  // The markets served priced this pass (their accounts are read; the others' wait in the checkpoint).
  const priced = new Map<string, { record: PricedMarketRecord; read: MorphoMarketRead }>();
  return {
    logAddresses:
      chain.morpho && !walks
        ? [
            chain.morpho.blue,
            ...factories.map((f) => f.address),
            // The vaults read before: a pass reads again those whose logs its blocks hold.
            ...[...vaults.vaults].flatMap(([v, r]) => (r ? [v] : [])),
          ]
        : [],

    async read(shared) {
      if (!chain.morpho) return;
      // The accounts the last pass served are listed from its records only for a process that
      // has read none (started anew, or forgot them): one that has keeps them all.
      const known =
        resume === null
          ? { marketIds: [], accounts: [] }
          : knownMorpho(
              chainId,
              cache.positions.size === 0 ? previous : undefined,
              strings(saved['markets']),
              [...strings(saved['pending']), ...reread],
              previous,
            );
      const start = BigInt(chain.morpho.fromBlock);
      walk = walks ? await ctx.walk(`morpho:${config}`, async () => start) : null;
      morpho = await readMorphoBlue(
        rpc,
        chain.morpho.blue as `0x${string}`,
        {
          fromBlock: walk?.fromBlock ?? resume ?? start,
          block: target,
          timestamp: ctx.timestamp,
          logsTo: walk?.toBlock ?? ctx.logsTo,
        },
        known,
        cache,
        shared,
      );
      walk?.read();
      for (const f of morpho.failures) items.push({ id: `morpho:${f.id}`, ok: false, error: f.error });
      if (factories.length === 0 || walk?.caughtUp === false) return;
      const found = await readMetaMorpho(
        rpc,
        chain.morpho.blue,
        factories,
        {
          fromBlock: sameFactories ? resume : null,
          block: target,
          logsTo: ctx.logsTo,
          blueFromBlock: BigInt(chain.morpho.fromBlock),
        },
        sameFactories && resume !== null
          ? {
              vaults: strings(saved['vaults']),
              submitted: submittedOf(saved['vaultCaps']),
              beyondLimit: typeof saved['vaultsBeyondLimit'] === 'number' ? saved['vaultsBeyondLimit'] : 0,
            }
          : { vaults: [], submitted: {} },
        vaults,
        ctx.deployedAt,
        shared,
      );
      vaultsRead = found.read;
      for (const f of found.failures)
        items.push({ id: `morpho-vault:${f.address}`, ok: false, error: f.error });
    },

    namedFeeds: () => (morpho?.markets ?? []).flatMap((m) => m.oracleFeeds ?? []),

    async assemble(out: Assembly) {
      const { usdOf, byFeed, noPriceHint, feedSymbolOf } = out.prices;
      const { markets, positions, previousMarkets } = out;
      // A market that cannot be served this pass keeps what the last pass served of it.
      const kept = new Map<string, MarketRecord>();
      // Markets never priced, served with what is known (docs/decisions.md "Real sources").
      const unpricedMarkets = new Map<string, MarketRecord>();
      // (Its positions stay as stored: the market is handed in part, none of them read.)
      const keep = (id: string) => {
        const record = previousMarkets.get(morphoKey(chainId, id));
        if (!record || kept.has(id)) return;
        kept.set(id, record);
        markets.push(record);
        out.partial.add(record.uniqueKey);
      };
      for (const f of morpho?.failures ?? []) if (!f.id.includes(':')) keep(f.id);
      for (const m of morpho?.markets ?? []) {
        const key = morphoKey(chainId, m.id);
        const loanUsd = usdOf(m.loan);
        const collateralUsd = usdOf(m.collateral) ?? (loanUsd === null ? null : oracleUsd(m, loanUsd));
        const record = marketRecord(
          chainId,
          m,
          loanUsd,
          collateralUsd,
          oracleRecord(m.params.oracle, m.oracleFeeds, byFeed, 'ChainlinkOracleV2'),
        );
        if (isPriced(record)) {
          markets.push(record);
          priced.set(m.id, { record, read: m });
          items.push({ id: `morpho:${m.id}`, ok: true });
          continue;
        }
        const why =
          loanUsd === null
            ? `no USD price for its loan token ${m.loan.symbol} ${m.loan.address} (${noPriceHint(m.loan)})`
            : `no USD price for its collateral ${m.collateral.symbol} (no feed, and the oracle did not answer)`;
        const last = previousMarkets.get(key);
        if (last && isPriced(last)) {
          // Once priced, a market keeps its last priced records (which age) until it is again.
          items.push({ id: `morpho:${m.id}`, ok: false, error: `market ${key}: ${why}` });
          keep(m.id);
          continue;
        }
        // Never priced: served with what is known (docs/decisions.md "Real sources"), its borrowers kept for when it is.
        markets.push(record);
        unpricedMarkets.set(m.id, record);
        items.push(
          servedItem(
            `morpho:${m.id}`,
            `market ${key}: ${why}: ${UNPRICED_NOTE[loanUsd === null ? 'loan' : 'collateral']}`,
          ),
        );
      }
      // A market this process handed priced in its last pass is handed in part: the positions
      // read this pass (an emptied one at zero), and those supplying (their supply earns interest
      // the record's prices and index do not carry). Another position holds the same shares and
      // collateral: its figures move with the market's prices and borrow index, which its record
      // carries, and its health factor with the oracle's price, as long as that follows the
      // record's collateral price. Any other market is handed whole (a market priced again, or
      // whose oracle moved apart from its collateral's feed).
      const inPart = new Set<string>();
      const ratios = new Map<string, number>();
      for (const [id, { record, read }] of priced) {
        const last = previousMarkets.get(record.uniqueKey);
        // (An oracle that does not answer: the health factor is by the USD figures, 1; one that
        // answers 0: Morpho's is 0, and the market is handed whole.)
        const byOracle = read.market.price === 0n ? 0 : oracleUsd(read, record.loanPrice);
        const ratio = byOracle === null ? 1 : byOracle / record.collateralPrice;
        const was = handed.get(id);
        const same = was !== undefined && Math.abs(ratio / was - 1) <= ORACLE_DRIFT;
        if (resume !== null && last !== undefined && isPriced(last) && same) inPart.add(id);
        ratios.set(id, inPart.has(id) ? (was as number) : ratio);
      }
      // (Every position of a market served is in the cache, as last read.)
      for (const [id, { record, read: m }] of priced) {
        const read = morpho?.read.get(id);
        if (!inPart.has(id)) {
          for (const p of cache.positions.of(id).values())
            if (p) positions.push(positionRecord(record, m.market, p));
          continue;
        }
        out.partial.add(record.uniqueKey);
        for (const [user, p] of read ?? [])
          positions.push(p ? positionRecord(record, m.market, p) : emptyPosition(record, user));
        for (const user of cache.positions.markedIn(id)) {
          const p = read?.has(user) ? null : cache.positions.get(id, user);
          if (p) positions.push(positionRecord(record, m.market, p));
        }
      }
      next.ratios = ratios;
      const found = (morpho?.liquidations ?? []).flatMap((l) => {
        // A kept market's liquidations are priced at its kept prices, a never-priced one's
        // amounts have no USD value; an unserved one's are not recorded (named).
        const record = priced.get(l.id)?.record ?? kept.get(l.id) ?? unpricedMarkets.get(l.id);
        if (!record)
          items.push({
            id: `morpho:${l.id}:liquidation:${l.txHash}:${l.logIndex}`,
            ok: false,
            error: `liquidation in ${l.txHash} of market ${morphoKey(chainId, l.id)} not recorded: the market is not served`,
          });
        return record ? [{ l, record }] : [];
      });
      const atBlock = await pricesAtBlocks(
        rpc,
        chain.chainlink,
        found
          .filter(({ l }) => BigInt(l.block) < target)
          .map(({ l, record }) => ({ block: l.block, record })),
        feedSymbolOf,
      );
      for (const { l, record } of found) {
        // At the prices of the liquidation's block where they could be read; else the pass's.
        out.liquidations.push(
          liquidationRecord(
            { ...l, protocol: 'morpho', chainId },
            record,
            { seized: l.seizedAssets, repaid: l.repaidAssets, badDebt: l.badDebtAssets },
            pricesAt(atBlock.get(`${l.block}:${record.uniqueKey}`), record),
          ),
        );
      }
      assembleVaults(out);
    },

    checkpoint: () =>
      ({
        morpho: walk?.caughtUp === false ? null : config,
        morphoWalking: walk?.caughtUp === false ? config : null,
        markets: morpho?.marketIds ?? [],
        pending: pending(ctx, 'morpho', 'accounts of markets not served', [
          ...(morpho?.accounts ?? []).filter((a) => !priced.has(a.id)).map((a) => `${a.id}:${a.user}`),
          // positions whose read failed
          ...(morpho?.failures ?? []).flatMap((f) => (f.id.includes(':') ? [f.id] : [])),
        ]),
        // (While Morpho walks no vault is read: none of its factories is.)
        vaultFactories: walk?.caughtUp === false ? '' : factoriesConfig,
        vaults: [...vaults.vaults.keys()],
        vaultsBeyondLimit: vaults.beyondLimit,
        vaultCaps: Object.fromEntries(
          [...vaults.submitted].flatMap(([v, ids]) =>
            ids.size > 0 && vaults.vaults.has(v) && !vaults.refused.has(v) ? [[v, [...ids]]] : [],
          ),
        ),
      }) satisfies MorphoCheckpoint,

    positionsRead: () => morpho?.positionsRead ?? 0,
    vaultsRead: () => vaultsRead,
  };

  /**
   * The vaults' records at this pass's market states; a vault that cannot be stated this pass
   * keeps its last record (its failure named).
   */
  function assembleVaults(out: Assembly): void {
    if (factories.length === 0) return;
    const read = new Map((morpho?.markets ?? []).map((m) => [m.id, m.market]));
    const failed = new Set((morpho?.failures ?? []).flatMap((f) => (f.id.includes(':') ? [] : [f.id])));
    const last = new Map(
      (previous?.vaults ?? []).filter((v) => v.protocol === 'morpho').map((v) => [v.address, v]),
    );
    const keep = (address: string) => {
      const v = last.get(address);
      if (v) out.vaults.push(v);
    };
    // While Morpho walks its logs no vault is read: those served before (the Morpho API's) keep
    // their last records.
    if (walk?.caughtUp === false) {
      for (const address of last.keys()) keep(address);
      return;
    }
    if (vaults.beyondLimit > 0)
      items.push(
        servedItem(
          'morpho-vault:limit',
          `${vaults.beyondLimit} MetaMorpho vaults found past the first ${MAX_VAULTS.toLocaleString('en-US')} of this chain are not read`,
        ),
      );
    for (const [address, v] of vaults.vaults) {
      const refused = vaults.refused.get(address);
      if (refused) {
        items.push({
          id: `morpho-vault:${address}`,
          ok: false,
          error: `vault ${address}: ${refused}: not served`,
        });
        continue;
      }
      if (!v) {
        keep(address);
        continue;
      }
      // While a sync's logs are behind, a market not read may be one they have not reached yet;
      // once synced, every market a queue names was created within the logs read (a market not
      // read is idle, or one a process started anew has not met again).
      const syncing = ctx.logsTo < ctx.target;
      const record = metaMorphoRecord(chainId, v, read, failed, (id) => !syncing || cache.params.has(id));
      if (typeof record === 'string') {
        items.push({ id: `morpho-vault:${address}`, ok: false, error: `vault ${address}: ${record}` });
        keep(address);
        continue;
      }
      out.vaults.push(record);
      items.push({ id: `morpho-vault:${address}`, ok: true });
    }
  }
}

/** The checkpoint's submitted caps per vault (anything else in their place: none). */
function submittedOf(x: unknown): Record<string, string[]> {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return {};
  return Object.fromEntries(Object.entries(x).map(([v, ids]) => [v, strings(ids)]));
}

/**
 * The markets the last run served on this chain, and the accounts it served (of `holders`: none
 * when left out) with those `pending` names (read again at the new block).
 */
function knownMorpho(
  chainId: number,
  holders: PreviousRun | undefined,
  found: readonly string[],
  pending: readonly string[],
  previous: PreviousRun | undefined,
) {
  const prefix = `morpho-${chainId}-`;
  return {
    marketIds: [...found, ...knownMarkets(prefix, previous)],
    accounts: knownHolders(prefix, holders, pending).map(({ group, user }) => ({ id: group, user })),
  };
}

/** An account read empty in a market handed in part: its figures at zero (the store forgets it). */
function emptyPosition(market: MarketRecord, user: string): PositionRecord {
  return {
    marketKey: market.uniqueKey,
    user,
    collateralUsd: 0,
    borrowUsd: 0,
    supplyUsd: 0,
    healthFactor: Number.POSITIVE_INFINITY,
  };
}

/**
 * The USD prices of markets' tokens at past blocks (liquidations read after their block: a first
 * sync, a catch-up), by `${block}:${uniqueKey}`: the file's feeds and the market's oracle, read
 * at the block (one multicall each; the RPC must keep that state: an archive node for old
 * blocks). A block that cannot be read is left out (the pass's prices serve).
 */
async function pricesAtBlocks(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  wanted: readonly { block: number; record: MarketRecord }[],
  feedSymbolOf: (t: Token) => string | null,
): Promise<Map<string, LiquidationPrices>> {
  const out = new Map<string, LiquidationPrices>();
  await atPricedBlocks(rpc, feeds, wanted, feedSymbolOf, async (block, here, usdOf) => {
    // Each market once.
    const records = [...new Map(here.map((w) => [w.record.uniqueKey, w.record])).values()];
    const oracles = await rpc.multicall({
      blockNumber: BigInt(block),
      allowFailure: true,
      ...(await rpc.multicallOptions()),
      contracts: records.map(
        (r) =>
          ({
            address: must(r.oracle, `oracle of market ${r.uniqueKey}`).address as `0x${string}`,
            abi: blueOracleAbi,
            functionName: 'price',
          }) as const,
      ),
    });
    throwIfUnread(oracles);
    records.forEach((r, i) => {
      const loanUsd = usdOf({ address: r.loanAddress, symbol: r.loan });
      const o = must(oracles[i], `price answer of ${r.uniqueKey}`);
      const collateralUsd =
        usdOf({ address: r.collateralAddress, symbol: r.collateral }) ??
        (loanUsd === null
          ? null
          : collateralUsdFromOracle(
              o.status === 'success' ? (o.result as bigint) : undefined,
              r.loanDecimals ?? 18,
              r.collateralDecimals ?? 18,
              loanUsd,
            ));
      out.set(`${block}:${r.uniqueKey}`, { loanUsd, collateralUsd });
    });
  });
  return out;
}
