/**
 * Euler v2's part of a chain source's pass: the controller vaults of its EVC read at the pass's
 * block (euler.ts), each served as one market per collateral at the USD prices of the file's
 * feeds (a collateral without a feed at the vault's oracle against its asset), and their
 * liquidations at their block's prices and share price.
 */
import type { MarketRecord } from '../../domain/types.ts';
import { UNPRICED_NOTE } from '../records.ts';
import type { ChainConfig, FeedConfig } from '../sources-file.ts';
import { scaled } from './chainlink.ts';
import { type Checkpoint, knownHolders, knownMarkets, pending, strings } from './checkpoint.ts';
import {
  collateralQuoteCalls,
  EulerCache,
  type EulerCollateral,
  type EulerVaultRead,
  EVAULT_EVENTS,
  EVC_EVENTS,
  eulerLogAddresses,
  readEuler,
} from './euler.ts';
import { eulerKey, eulerLiquidation, eulerPrices, eulerRecords } from './euler-records.ts';
import type { LiquidationPrices } from './liquidation.ts';
import { HandedPools } from './pooled-pairs.ts';
import { atPricedBlocks, type PricedBlocks, pricesAt, unpricedBlocks } from './prices-at-blocks.ts';
import { customOracle, type Token } from './pricing.ts';
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
 * Euler's part of the checkpoint: Euler as read, `${evc}:${fromBlock}` (another EVC or start block
 * is read from its start); the last Euler configuration ever read on this chain (another one
 * reads the chain again); its controller vaults found; accounts of vaults not served, or
 * without a position.
 */
interface EulerCheckpoint {
  euler: string | null;
  eulerWas: string | null;
  /** Euler added while the chain resumes, walking its logs from its start: its configuration. */
  eulerWalking: string | null;
  eulerVaults: string[];
  eulerPending: string[];
}

function readEulerCheckpoint(c: Checkpoint): EulerCheckpoint {
  const { euler, eulerWas, eulerWalking, eulerVaults, eulerPending } = c.parts;
  return {
    euler: typeof euler === 'string' ? euler : null,
    eulerWas: typeof eulerWas === 'string' ? eulerWas : typeof euler === 'string' ? euler : null,
    eulerWalking: typeof eulerWalking === 'string' ? eulerWalking : null,
    eulerVaults: strings(eulerVaults),
    eulerPending: strings(eulerPending),
  };
}

export function eulerAdapter(chain: ChainConfig): ProtocolAdapter {
  const euler = new EulerCache();
  const handed = new HandedPools();
  // Accounts to read again after a reorganization, kept until a pass succeeds.
  const reread = new Set<string>();
  const config = chain.euler ? `${chain.euler.evc}:${chain.euler.fromBlock ?? 'deployment'}` : null;
  return {
    events: [...EVC_EVENTS, ...EVAULT_EVENTS],
    starts: chain.euler ? [{ fromBlock: chain.euler.fromBlock, address: chain.euler.evc }] : [],
    // Another EVC or start block than the last ever read reads the chain again (adding Euler, or
    // leaving it out, is not a change; leaving it out and adding another is).
    sameConfig(c) {
      const was = readEulerCheckpoint(c).eulerWas;
      return !was || config === null || was === config;
    },
    forget(rereadAccounts) {
      if (rereadAccounts) for (const key of [...euler.accounts.keys(), ...euler.retry]) reread.add(key);
      euler.clear();
      handed.forget();
    },
    begin: (ctx) => {
      handed.begin();
      return eulerPass(ctx, euler, reread, config, handed);
    },
    settle(block) {
      euler.accounts.settle(block);
      reread.clear();
      handed.settle();
    },
    accountsKept: () => euler.accounts.size,
  };
}

/**
 * What a vault's accounts' health follows besides prices, share prices and the interest
 * accumulator: its asset, unit of account and oracle, and its collaterals with their
 * liquidation LTVs (one ramping moves each pass: the vault is handed whole meanwhile).
 */
function eulerShape(v: EulerVaultRead): string {
  return [
    v.asset.address,
    v.unitOfAccount,
    v.oracle,
    ...v.collaterals.map((c) => `${c.vault}:${c.liquidationLTV}:${c.share.decimals}:${c.asset.decimals}`),
  ].join(',');
}

function eulerPass(
  ctx: PassContext,
  euler: EulerCache,
  reread: ReadonlySet<string>,
  config: string | null,
  handed: HandedPools,
): ProtocolPass {
  const { chain, rpc, previous, items, resume, target } = ctx;
  const chainId = chain.chainId;
  const saved = readEulerCheckpoint(ctx.checkpoint);
  const resumes = resume !== null && config !== null && saved.euler === config;
  // Added while the chain resumes: its logs walked from its start, `syncBlocks` a pass, what the
  // last passes found kept meanwhile.
  const walks = resume !== null && config !== null && !resumes;
  const known =
    resumes || (walks && saved.eulerWalking === config)
      ? {
          controllers: saved.eulerVaults,
          served: knownMarkets(`euler-${chainId}-`, previous).map((k) => {
            const [vault = ''] = k.split('_');
            return vault;
          }),
          // The holders the store knows of, until a pass of this process has read them all (it
          // keeps them since); those pending and those a reorganization left to read.
          accounts: knownHolders(`euler-${chainId}-`, handed.holdersKept ? undefined : previous, [
            ...saved.eulerPending,
            ...reread,
          ]).map(({ group, user }) => ({ vault: group, user })),
        }
      : { controllers: [], accounts: [] };
  let eulerRead: Awaited<ReturnType<typeof readEuler>> | null = null;
  let walk: ContractWalk | null = null;
  // The vaults served with their positions.
  const eulerServed = new Set<string>();
  return {
    logAddresses: chain.euler && resumes ? eulerLogAddresses(chain.euler.evc, known, euler) : [],

    async read(shared) {
      const on = chain.euler;
      if (!on) return;
      const start = () => ctx.startOf(on.fromBlock, on.evc);
      walk = walks ? await ctx.walk(`euler:${config}`, start) : null;
      eulerRead = await readEuler(
        rpc,
        on.evc,
        {
          fromBlock: resumes && resume !== null ? resume : (walk?.fromBlock ?? (await start())),
          block: target,
          logsTo: walk?.toBlock ?? ctx.logsTo,
        },
        known,
        euler,
        shared,
        on.factory,
      );
      walk?.read();
      handed.read(eulerRead.read);
      for (const f of eulerRead.failures) items.push({ id: `euler:${f.id}`, ok: false, error: f.error });
    },

    namedFeeds: () => [],

    // A vault whose asset has a USD price (the file's feeds) and whose collaterals have one (the
    // file's feeds, else the vault's oracle against the asset) is served; one whose asset never
    // had one is served with what is known ("Real sources" (docs/decisions.md): no position, its accounts followed); one priced
    // before, or whose collateral the oracle cannot price against its asset (or whose quotes
    // cannot be read), keeps what the last pass served of it.
    async assemble(out: Assembly) {
      const { usdOf, noPriceHint, feedSymbolOf } = out.prices;
      handed.assembling();
      const eulerMarkets = new Map<string, MarketRecord>();
      for (const v of eulerRead?.vaults ?? []) {
        const prices = eulerPrices(v, usdOf);
        const unpriced = [
          prices.loanUsd === null ? v.asset : null,
          ...v.collaterals.map((c, i) => (prices.collateralUsd[i] === null ? c.asset : null)),
        ].find((t) => t !== null);
        const why = unpriced
          ? `no USD price for ${unpriced.symbol} ${unpriced.address} (${noPriceHint(unpriced)})`
          : null;
        // (A collateral the oracle cannot price against a priced asset: the vault is not served.)
        if (why && prices.loanUsd !== null) {
          items.push({ id: `euler:${v.vault}`, ok: false, error: `vault ${v.vault}: ${why}` });
          continue;
        }
        // A vault this process handed priced whole, the same since, is handed in part: the
        // accounts read this pass; the others hold the same shares and debt, their figures moving
        // with the markets' prices, share prices (collateral index) and interest accumulator
        // (borrow index), which the records carry, and their health (EVault's, by the oracle's
        // quotes) with them while the quotes keep to the records' prices.
        const shape = eulerShape(v);
        const ratios = new Map<string, number>(
          why || prices.loanUsd === null
            ? []
            : [
                ['asset', Number(v.assetQuote) / prices.loanUsd],
                ...v.collaterals.map(
                  (c, i) =>
                    [
                      c.vault,
                      Number(c.quote) /
                        ((prices.collateralUsd[i] ?? 0) * scaled(c.assetsPerShare, c.asset.decimals ?? 18)),
                    ] as [string, number],
                ),
              ],
        );
        const was = resume !== null && !why ? handed.partOf(v.vault, shape, ratios) : null;
        const records = eulerRecords(
          chainId,
          v,
          prices,
          // An EulerRouter: its quotes are what the vault values liquidity with.
          customOracle(
            v.oracle,
            'Euler price oracle router: prices are its mid-point quotes; the adapters behind it are not resolved',
          ),
          was ? { accounts: handed.readIn(v.vault, euler.accounts), ...was } : undefined,
        );
        const wrong = out.refusal(records, why);
        if (wrong) {
          items.push({ id: `euler:${v.vault}`, ok: false, error: `vault ${v.vault}: ${wrong}` });
          continue;
        }
        for (const m of records.markets) eulerMarkets.set(m.uniqueKey, m);
        if (!why) eulerServed.add(v.vault);
        out.vaults.push(records.vault);
        out.serve(records);
        handed.hand(
          v.vault,
          was,
          { markets: records.markets, partial: out.partial },
          why ? null : { shape, ratios, owed: records.owed, pairs: records.pairs },
        );
        items.push(servedItem(`euler:${v.vault}`, why && `vault ${v.vault}: ${why}: ${UNPRICED_NOTE.loan}`));
      }
      out.keepFailedPools('euler', eulerMarkets);
      // Liquidations at their block's prices and share price (the newest MAX_PRICED_BLOCKS blocks
      // of the pass; the others at the pass's, named).
      const eulerVaults = new Map((eulerRead?.vaults ?? []).map((v) => [v.vault, v]));
      const eulerFound = (eulerRead?.liquidations ?? []).flatMap((l) => {
        const record = eulerMarkets.get(eulerKey(chainId, l.vault, l.collateral));
        const vault = eulerVaults.get(l.vault);
        const c = vault?.collaterals.find((x) => x.vault === l.collateral);
        if (!record)
          // Its market is not served: a collateral the vault no longer values (LTV 0), or a vault
          // not served. Named, not recorded (no market to record it in).
          items.push({
            id: `euler:${l.vault}:liquidation:${l.txHash}:${l.logIndex}`,
            ok: false,
            error: `liquidation in ${l.txHash} of collateral ${l.collateral} of vault ${l.vault} not recorded: no market of that vault and collateral is served`,
          });
        return record ? [{ l, record, vault, c }] : [];
      });
      const eulerThen = await eulerPricesAtBlocks(
        rpc,
        chain.chainlink,
        eulerFound.flatMap(({ l, vault, c }) => (vault && c ? [{ block: l.block, vault, c }] : [])),
        feedSymbolOf,
      );
      items.push(...unpricedBlocks('euler', 'liquidation', eulerThen));
      for (const { l, record, c } of eulerFound) {
        const then = c && eulerThen.at.get(`${l.block}:${l.vault}:${c.vault}`);
        const perShare = then?.perShare ?? c?.assetsPerShare;
        const usd = pricesAt(then?.usd, record);
        out.liquidations.push(
          eulerLiquidation(
            chainId,
            l,
            record,
            c && perShare !== undefined ? { perShare, shareDecimals: c.share.decimals ?? 18 } : null,
            usd,
          ),
        );
      }
    },

    checkpoint: () =>
      ({
        euler: eulerRead && walk?.caughtUp !== false ? config : null,
        eulerWas: config ?? saved.eulerWas,
        eulerWalking: eulerRead && walk?.caughtUp === false ? config : null,
        eulerVaults: eulerRead?.controllers ?? [],
        // Accounts a vault controls without a position are kept too: no log names them when they
        // deposit collateral.
        eulerPending: pending(
          ctx,
          'euler',
          'accounts of vaults not served or without a position',
          (eulerRead?.controllers ?? []).flatMap((vault) =>
            eulerRead ? eulerRead.pendingOf(vault, !eulerServed.has(vault)) : [],
          ),
        ),
      }) satisfies EulerCheckpoint,

    positionsRead: () => eulerRead?.accountsRead ?? 0,
  };
}

/** A collateral at a liquidation's block: its share price, and the USD prices when they could be read. */
type AtBlock = { perShare: bigint; usd: LiquidationPrices };

/**
 * For Euler liquidations: at each liquidation's block, the file's feeds and the vault's oracle
 * and share price read there (one multicall per block), priced as the pass prices (`eulerPrices`),
 * by `${block}:${vault}:${collateral}`; the newest MAX_PRICED_BLOCKS blocks. Blocks that cannot
 * be read (a pruned node) are named: their liquidations are priced at the pass's prices.
 */
async function eulerPricesAtBlocks(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  wanted: readonly { block: number; vault: EulerVaultRead; c: EulerCollateral }[],
  feedSymbolOf: (t: Token) => string | null,
): Promise<{ at: Map<string, AtBlock> } & PricedBlocks> {
  const at = new Map<string, AtBlock>();
  const walked = await atPricedBlocks(rpc, feeds, wanted, feedSymbolOf, async (block, all, usdOf) => {
    // Each vault and collateral once.
    const here = [...new Map(all.map((w) => [`${w.vault.vault}:${w.c.vault}`, w])).values()];
    const reads = await rpc.multicall({
      blockNumber: BigInt(block),
      allowFailure: true,
      ...(await rpc.multicallOptions()),
      contracts: here.flatMap(({ vault, c }) => collateralQuoteCalls(vault, c)),
    });
    throwIfUnread(reads);
    here.forEach(({ vault, c }, i) => {
      const [assetQuote, quote, perShare] = reads.slice(i * 3, i * 3 + 3);
      if (perShare?.status !== 'success') return;
      const assetsPerShare = perShare.result as bigint;
      // A vault whose asset is its unit of account asks no quote of it.
      const sameUnit = vault.asset.address === vault.unitOfAccount;
      const quoted = quote?.status === 'success' ? (quote.result as bigint) : null;
      const then = {
        ...vault,
        assetQuote: sameUnit
          ? vault.assetQuote
          : assetQuote?.status === 'success'
            ? (assetQuote.result as bigint)
            : 0n,
        collaterals: [{ ...c, quote: quoted ?? 0n, assetsPerShare }],
      };
      const prices = eulerPrices(then, usdOf);
      // Without the oracle's quote there, only a feed of the file prices the collateral.
      const collateralUsd = quoted === null ? usdOf(c.asset) : prices.collateralUsd[0];
      at.set(`${block}:${vault.vault}:${c.vault}`, {
        perShare: assetsPerShare,
        usd: { loanUsd: prices.loanUsd, collateralUsd: collateralUsd ?? null },
      });
    });
  });
  return { at, ...walked };
}
