/**
 * Compound v3's part of a chain source's pass: the comets of the sources file read at the pass's
 * block (compound.ts), served at the USD prices of the file's feeds, and their absorbs recorded as
 * liquidations at their block's prices.
 */
import type { MarketRecord } from '../../domain/types.ts';
import { UNPRICED_NOTE } from '../records.ts';
import type { ChainConfig, FeedConfig } from '../sources-file.ts';
import { groupOf } from './account-reads.ts';
import { knownHolders, pending, strings } from './checkpoint.ts';
import { COMET_EVENTS, type CometAbsorb, CometCache, type CometRead, readCompound } from './compound.ts';
import { absorbLiquidations, cometAssets, cometRecords } from './compound-records.ts';
import { HandedPools } from './pooled-pairs.ts';
import { atPricedBlocks, type PricedBlocks, unpricedBlocks } from './prices-at-blocks.ts';
import { oracleRecord, type Token } from './pricing.ts';
import {
  type Assembly,
  type ContractWalk,
  type PassContext,
  type ProtocolAdapter,
  type ProtocolPass,
  servedItem,
} from './protocol.ts';
import type { ChainRpc } from './rpc.ts';

/**
 * Compound's part of the checkpoint: the holders of comets not served this pass (an unpriced base
 * token's borrowers, a comet whose configuration was refused), and the comets whose logs are read,
 * as `${comet}:${fromBlock}` (`deployment` when found by the source): one not named there (added
 * to the file, or given another start block) is read from its start, `syncBlocks` of its logs a
 * pass (its walk: the source keeps it), the others from the last block read.
 */
interface CompoundCheckpoint {
  cometPending: string[];
  comets: string[];
  /**
   * Comets whose holders did not all fit in cometPending: a process that does not hold them (a new
   * one, or one after another's passes) reads them from their start.
   */
  cometsTruncated: string[];
}

/** Each comet as the checkpoint names it. */
const cometConfig = (c: ChainConfig['compound'][number]) => `${c.comet}:${c.fromBlock ?? 'deployment'}`;

export function compoundAdapter(chain: ChainConfig): ProtocolAdapter {
  const comets = new CometCache();
  // Accounts to read again after a reorganization, kept until a pass succeeds.
  const reread = new Set<string>();
  const handed = new HandedPools();
  return {
    events: COMET_EVENTS,
    starts: chain.compound.map((c) => ({ fromBlock: c.fromBlock, address: c.comet })),
    sameConfig: () => true,
    forget(rereadAccounts) {
      if (rereadAccounts) for (const key of [...comets.accounts.keys(), ...comets.retry]) reread.add(key);
      comets.clear();
      handed.forget();
    },
    begin: (ctx) => {
      handed.begin();
      return compoundPass(ctx, comets, reread, handed);
    },
    settle(block) {
      comets.accounts.settle(block);
      reread.clear();
      handed.settle();
    },
    accountsKept: () => comets.accounts.size,
  };
}

/**
 * What a comet's accounts' health follows besides prices and the borrow index: its configuration
 * (assets, their factors and scales, price feeds, base) as read.
 */
function cometShape(c: CometRead): string {
  const { config } = c;
  return [
    config.baseToken,
    config.baseTokenPriceFeed,
    ...config.assets.map((a) => `${a.asset}:${a.priceFeed}:${a.scale}:${a.liquidateCollateralFactor}`),
  ].join(',');
}

function compoundPass(
  ctx: PassContext,
  comets: CometCache,
  reread: ReadonlySet<string>,
  handed: HandedPools,
): ProtocolPass {
  const { chain, rpc, previous, items, resume, target } = ctx;
  const chainId = chain.chainId;
  // After the first pass the comets already read resume at the pass's first block; those whose
  // holders did not all fit in the checkpoint are read from their start again, their walk too,
  // by a process that does not hold them (a new one, or after another process's passes).
  const truncated = new Set(ctx.ownCheckpoint ? [] : strings(ctx.checkpoint.parts['cometsTruncated']));
  const readComets = new Set(
    resume === null ? [] : strings(ctx.checkpoint.parts['comets']).filter((k) => !truncated.has(k)),
  );
  let compound: Awaited<ReturnType<typeof readCompound>> | null = null;
  // The comets served with their positions this pass.
  const served = new Set<string>();
  // Comets added while the chain resumes whose own walk of their logs goes on at the next pass.
  const walking = new Set<string>();
  const walks: ContractWalk[] = [];
  return {
    logAddresses: chain.compound.filter((c) => readComets.has(cometConfig(c))).map((c) => c.comet),

    async read(shared) {
      if (chain.compound.length === 0) return;
      compound = await readCompound(
        rpc,
        await Promise.all(
          chain.compound.map(async (c) => {
            const at = { comet: c.comet, rewards: c.rewards };
            if (resume !== null && readComets.has(cometConfig(c))) return { ...at, from: resume };
            const start = () => ctx.startOf(c.fromBlock, c.comet);
            if (resume === null) return { ...at, from: await start() };
            // Added while the chain resumes: its logs from its start, `syncBlocks` a pass.
            const walk = await ctx.walk(`compound:${cometConfig(c)}`, start, truncated.has(cometConfig(c)));
            walks.push(walk);
            if (!walk.caughtUp) walking.add(c.comet);
            return { ...at, from: walk.fromBlock, to: walk.toBlock };
          }),
        ),
        { block: target, timestamp: ctx.timestamp, logsTo: ctx.logsTo },
        // The holders the store knows of, until a pass of this process has read them all (it
        // keeps them since); those pending and those a reorganization left to read.
        resume === null
          ? []
          : knownHolders(`compound-${chainId}-`, handed.holdersKept ? undefined : previous, [
              ...strings(ctx.checkpoint.parts['cometPending']),
              ...reread,
            ]).map(({ group, user }) => ({ comet: group, user })),
        comets,
        shared,
      );
      // (Every comet's logs are read, its configuration refused or not.)
      for (const walk of walks) walk.read();
      handed.read(compound.read);
      for (const f of compound.failures) items.push({ id: `compound:${f.id}`, ok: false, error: f.error });
    },

    namedFeeds: () =>
      (compound?.comets ?? []).flatMap((c) => [
        c.config.baseTokenPriceFeed,
        ...c.config.assets.map((a) => a.priceFeed),
      ]),

    // A comet whose base token has a USD price is served; one never priced is served with what
    // is known ("Real sources" (docs/decisions.md): no position, its holders followed); one priced before that no longer is (or
    // an asset that cannot be read) keeps what the last pass served of it.
    async assemble(out: Assembly) {
      const { usdOf, byFeed, noPriceHint, feedSymbolOf } = out.prices;
      handed.assembling();
      const cometMarkets = new Map<string, MarketRecord>();
      // One market of each comet served (its base price, for its absorbs).
      const marketOfComet = new Map<string, MarketRecord>();
      for (const c of compound?.comets ?? []) {
        const baseUsd = usdOf(c.base);
        const why =
          baseUsd === null
            ? `no USD price for its base token ${c.base.symbol} ${c.base.address} (${noPriceHint(c.base)})`
            : null;
        // A comet this process handed priced whole, the same since, is handed in part: the
        // accounts read this pass; the others hold the same principal and collateral, their
        // figures moving with the markets' prices and borrow index, which the records carry, and
        // their health (Comet's, by its price feeds) with them while the comet's prices keep to
        // the records'.
        const shape = cometShape(c);
        const ratios = new Map(
          baseUsd === null
            ? []
            : [
                ['base', Number(c.basePrice) / baseUsd],
                ...cometAssets(chainId, c, baseUsd, usdOf).map(
                  (a) => [a.key, Number(a.price) / (a.usd ?? 0)] as [string, number],
                ),
              ],
        );
        const was = resume !== null && !why ? handed.partOf(c.comet, shape, ratios) : null;
        const records = cometRecords(
          chainId,
          c,
          baseUsd,
          usdOf,
          (feeds) => oracleRecord(feeds[0], feeds, byFeed, 'ChainlinkOracle'),
          was ? { accounts: handed.readIn(c.comet, comets.accounts), ...was } : undefined,
        );
        const wrong = out.refusal(records, why);
        if (wrong) {
          items.push({ id: `compound:${c.comet}`, ok: false, error: `comet ${c.comet}: ${wrong}` });
          continue;
        }
        // Rewards that could not be read or priced are served as 0, named (when they pay).
        const paid = c.rewards;
        if (paid && 'problem' in paid)
          items.push({
            id: `compound:${c.comet}:rewards`,
            ok: false,
            error: `comet ${c.comet}: rewards not read (${paid.problem}): its reward APRs are served as 0`,
          });
        else if (paid && (paid.supplyPerSecond > 0 || paid.borrowPerSecond > 0) && usdOf(paid.token) === null)
          items.push({
            id: `compound:${c.comet}:rewards`,
            ok: false,
            error: `comet ${c.comet}: no USD price for its reward token ${paid.token.symbol} ${paid.token.address} (add its ${paid.token.symbol}/USD feed to the sources file): its reward APRs are served as 0`,
          });
        for (const m of records.markets) cometMarkets.set(m.uniqueKey, m);
        if (records.markets[0]) marketOfComet.set(c.comet, records.markets[0]);
        if (!why) served.add(c.comet);
        out.serve(records);
        handed.hand(
          c.comet,
          was,
          { markets: records.markets, partial: out.partial },
          why ? null : { shape, ratios, owed: records.owed, pairs: records.pairs },
        );
        items.push(
          servedItem(`compound:${c.comet}`, why && `comet ${c.comet}: ${why}: ${UNPRICED_NOTE.loan}`),
        );
      }
      out.keepFailedPools('compound', cometMarkets);
      // A comet kept at its last records: one of its markets too (its absorbs' base price).
      for (const m of cometMarkets.values()) {
        const [comet = ''] = m.uniqueKey.slice(`compound-${chainId}-`.length).split('_');
        if (!marketOfComet.has(comet)) marketOfComet.set(comet, m);
      }
      const absorbs = compound?.absorbs ?? [];
      const cometThen = await basePricesAtBlocks(rpc, chain.chainlink, absorbs, comets, feedSymbolOf);
      items.push(...unpricedBlocks('compound', 'absorb', cometThen));
      for (const a of absorbs) {
        const config = comets.configs.get(a.comet);
        const base = config && comets.tokens.get(config.baseToken);
        const anyMarket = marketOfComet.get(a.comet);
        if (!config || !base || !anyMarket) {
          items.push({
            id: `compound:${a.comet}:absorb:${a.txHash}:${a.borrower}`,
            ok: false,
            error: `absorb in ${a.txHash} of comet ${a.comet} not recorded: the comet is not served`,
          });
          continue;
        }
        const then = cometThen.usd.get(`${a.block}:${a.comet}`);
        out.liquidations.push(
          ...absorbLiquidations(
            chainId,
            a,
            { config, baseDecimals: base.decimals ?? 18 },
            cometMarkets,
            then ?? anyMarket.loanPrice,
            (asset) => cometThen.usd.get(`${a.block}:${a.comet}:${asset}`) ?? null,
          ),
        );
      }
    },

    checkpoint: () => {
      const holders = chain.compound.flatMap((c) =>
        served.has(c.comet) ? [] : (compound?.holders(c.comet) ?? []).map((a) => `${a.comet}:${a.user}`),
      );
      const cut = new Set(holders.slice(ctx.maxPending).map(groupOf));
      return {
        cometPending: pending(ctx, 'compound', 'holders of comets not served', holders),
        // Every comet whose logs this pass read through its last block (its configuration read
        // or not: the accounts they named wait in cometPending until it is); one still walking
        // its logs goes on with its walk.
        comets: chain.compound.filter((c) => !walking.has(c.comet)).map(cometConfig),
        cometsTruncated: chain.compound.filter((c) => cut.has(c.comet)).map(cometConfig),
      } satisfies CompoundCheckpoint;
    },

    positionsRead: () => compound?.accountsRead ?? 0,
  };
}

/**
 * For absorptions: the base token's USD price at each absorb's block (the file's feeds read at
 * the block), by `${block}:${comet}`, and its collaterals' by the file's feeds, by
 * `${block}:${comet}:${asset}`; the newest MAX_PRICED_BLOCKS blocks of the pass. The blocks that
 * could not be read (a pruned node, a failed request) are named: their absorbs are priced at the
 * pass's prices.
 */
async function basePricesAtBlocks(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  absorbs: readonly CometAbsorb[],
  cache: CometCache,
  feedSymbolOf: (t: Token) => string | null,
): Promise<{ usd: Map<string, number> } & PricedBlocks> {
  const usd = new Map<string, number>();
  const walked = await atPricedBlocks(rpc, feeds, absorbs, feedSymbolOf, (block, here, usdOf) => {
    for (const a of here) {
      const base = cache.tokens.get(cache.configs.get(a.comet)?.baseToken ?? '');
      const price = base ? usdOf(base) : null;
      if (price !== null) usd.set(`${block}:${a.comet}`, price);
      for (const c of a.collateral) {
        const token = cache.tokens.get(c.asset);
        const own = token ? usdOf(token) : null;
        if (own !== null) usd.set(`${block}:${a.comet}:${c.asset}`, own);
      }
    }
  });
  return { usd, ...walked };
}
