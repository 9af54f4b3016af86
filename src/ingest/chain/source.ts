/**
 * One chain as a source (`chain:<chainId>`): each run reads the chain at its head minus the
 * confirmations, Chainlink feeds, Morpho Blue, Aave v3 and Spark pools, Compound v3 comets,
 * Euler v2 and Fluid, and hands
 * ingestion the chain's markets and positions as records (USD at the feeds' prices, health
 * factors by each protocol's own math), the liquidations and oracle rounds seen, and the block
 * reached.
 *
 * Prices (D15): a token is priced by its feeds (`X/USD`, or `X/ETH` × `ETH/USD`; wrapped natives
 * by the native), else a market's collateral by its oracle (the oracle's price of collateral in
 * loan units × the loan token's USD price). A Morpho market without a USD price of a token is
 * served with what is known (its USD figures null, no position) and its item says why; a pool's
 * (comet, Aave pool, Euler or Fluid vault) is not served. Once priced, a market without a price
 * keeps its last records.
 */
import { IAaveOracle_ABI } from '@aave-dao/aave-address-book/abis/IAaveOracle';
import { type Market, MarketUtils, MathLib } from '@morpho-org/blue-sdk';
import { blueOracleAbi } from '@morpho-org/blue-sdk-viem';
import type { LiquidationEvent, OracleRound } from '../../domain/records/history.ts';
import {
  isPriced,
  loanBalances,
  type MarketRecord,
  type OracleFeedRecord,
  type OracleRecord,
  type PositionRecord,
  type PricedMarketRecord,
  type PriceSourceRecord,
  type VaultRecord,
} from '../../domain/types.ts';
import { checkMarketChanges, checkPositionChanges } from '../../store/position-changes.ts';
import { append } from '../append.ts';
import type { ItemReport, PreviousRun, Source, SourceOutput } from '../contract.ts';
import type { RefChainlinkFeed, RefToken } from '../sandbox/reference.ts';
import { type ChainConfig, DEFAULT_HEARTBEAT_SECONDS, type FeedConfig } from '../sources-file.ts';
import {
  AAVE_EVENTS,
  AaveCache,
  type AavePoolRead,
  ATOKEN_EVENTS,
  aaveLogAddresses,
  readAave,
} from './aave.ts';
import { aaveKey, aaveLiquidation, aavePair, aavePrices, aaveRecords } from './aave-records.ts';
import {
  ANSWER_UPDATED,
  type FeedPrice,
  type FeedReading,
  readFeeds,
  readRounds,
  scaled,
  usdPrices,
} from './chainlink.ts';
import { COMET_EVENTS, type CometAbsorb, CometCache, readCompound } from './compound.ts';
import { absorbLiquidations, cometRecords } from './compound-records.ts';
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
import { FLUID_FACTORY_EVENTS, FLUID_NATIVE, FLUID_VAULT_EVENTS, FluidCache, readFluid } from './fluid.ts';
import { fluidKey, fluidLiquidation, fluidPrices, fluidRecords } from './fluid-records.ts';
import { type LiquidationPrices, liquidationRecord } from './liquidation.ts';
import {
  healthFactor,
  MORPHO_EVENTS,
  MorphoCache,
  type MorphoMarketRead,
  readMorphoBlue,
} from './morpho-blue.ts';
import {
  type ChainRpc,
  deploymentBlock,
  firstLine,
  getLogsAdaptive,
  isMissingState,
  type SharedLogs,
  throwIfUnread,
} from './rpc.ts';

/** A market's uniqueKey (D3) from its Morpho id. */
export function morphoKey(chainId: number, id: string): string {
  return `morpho-${chainId}-${id.toLowerCase()}`;
}

/** What the last run of a chain source cost, for the logs and the bench. */
export interface ChainRunStats {
  block: number;
  rpcRequests: number;
  markets: number;
  positions: number;
  /** Positions read from the chain (the others were known unchanged: no event touched them). */
  positionsRead: number;
  /**
   * Accounts the process keeps between passes: those holding a position, and those read empty
   * while a reorganization could still undo it.
   */
  accountsKept: number;
}

export interface ChainSource extends Source {
  /** The figures of the last successful run; null before it. */
  lastRun(): ChainRunStats | null;
}

/** The shipped reference data a chain source reads: feed heartbeats, and known tokens by address. */
export interface ChainReference {
  feeds: readonly RefChainlinkFeed[];
  tokens: readonly RefToken[];
}

export function chainSource(
  chain: ChainConfig,
  rpc: ChainRpc,
  reference: ChainReference = { feeds: [], tokens: [] },
): ChainSource {
  let last: ChainRunStats | null = null;
  const cache = new MorphoCache();
  const comets = new CometCache();
  const euler = new EulerCache();
  const aave = new AaveCache();
  const fluid = new FluidCache();
  // On a chain the reference data lists tokens for, a token is priced by its feeds only when its
  // address is a listed one, under the listed symbol: a contract naming itself "WETH" is not WETH.
  const listed = new Map(
    reference.tokens
      .filter((t) => t.chainId === chain.chainId)
      .map((t) => [t.address.toLowerCase(), t.symbol]),
  );
  // (Fluid's placeholder for the native asset is priced as the native: ETH by ETH/USD.)
  const feedSymbolOf = (token: { address: string; symbol: string }): string | null =>
    listed.size === 0 || token.address === FLUID_NATIVE ? token.symbol : (listed.get(token.address) ?? null);
  // Why a token has no USD price, in a pass's item: what the user can do about it.
  const noPriceHint = (token: { address: string; symbol: string }): string =>
    feedSymbolOf(token) === null
      ? 'not in the shipped token list of this chain'
      : `add its ${token.symbol}/USD feed to the sources file`;
  const morphoConfig = chain.morpho ? `${chain.morpho.blue}:${chain.morpho.fromBlock}` : null;
  // Each comet as the checkpoint names it: one not named there (added to the file, or given
  // another start block) is read from its start, the others from the last block read.
  const cometConfig = (c: ChainConfig['compound'][number]) => `${c.comet}:${c.fromBlock ?? 'deployment'}`;
  // Each Aave or Spark pool likewise.
  const aaveConfig = (p: ChainConfig['aave'][number]) =>
    `${p.protocol}:${p.pool}:${p.fromBlock ?? 'deployment'}`;
  const protocolOf = new Map(chain.aave.map((p) => [p.pool, p.protocol]));
  // Euler as the checkpoint names it: another EVC or start block is read from its start.
  const eulerConfig = chain.euler ? `${chain.euler.evc}:${chain.euler.fromBlock ?? 'deployment'}` : null;
  // Fluid likewise: other resolvers or another start block read its vaults from their start.
  const fluidConfig = chain.fluid
    ? `${chain.fluid.vaultResolver}:${chain.fluid.positionsResolver}:${chain.fluid.fromBlock ?? 'deployment'}`
    : null;
  // The publishers of the file's feeds as the last pass found them (their logs go in the next
  // pass's shared read; feeds that markets' oracles name are anyone's: read apart, by topic).
  let publishers = new Set<string>();
  // Each feed's last reading: a feed that fails a pass, or whose proxy changed aggregator, still
  // has that range's rounds read from the publisher it had.
  const lastReading = new Map<string, FeedReading>();
  // Accounts to read again after a reorganization, kept until a pass succeeds.
  // Deployment blocks found (searched once per process: a contract whose reads fail, a pool not
  // listed, is read from its start again without searching again). None yet: searched again.
  const deployments = new Map<string, bigint>();
  const deployedAt = async (address: `0x${string}`, head: bigint) => {
    const known = deployments.get(address);
    if (known !== undefined) return known;
    const block = await deploymentBlock(rpc, address, head);
    if (block < head) deployments.set(address, block);
    return block;
  };
  const rereadAfterReorg = {
    morpho: new Set<string>(),
    comets: new Set<string>(),
    euler: new Set<string>(),
    aave: new Set<string>(),
    fluid: new Set<string>(),
  };
  return {
    id: `chain:${chain.chainId}`,
    kind: 'chain',
    chainIds: [chain.chainId],
    // What it reads: its chain's records but Morpho's vaults, and Morpho's markets where it does
    // not read Morpho Blue (the Morpho API's, when it names the chain).
    owns: (r, kind) =>
      r.chainId === chain.chainId &&
      (r.protocol !== 'morpho' || (kind === 'market' && chain.morpho !== null)),
    lastRun: () => last,
    async run(_nowMs: number, previous?: PreviousRun): Promise<SourceOutput> {
      const requests0 = rpc.requests();
      const latest = await rpc.client.getBlock({ blockTag: 'latest' });
      const confirmations = BigInt(chain.confirmations);
      const target = latest.number > confirmations ? latest.number - confirmations : 0n;
      const block = target === latest.number ? latest : await rpc.client.getBlock({ blockNumber: target });
      const items: ItemReport[] = [];
      const checkpoint = readCursor(previous?.state?.cursor ?? null);
      // A checkpoint of another Morpho address or start block is not this source's: read again.
      // Another Euler EVC or start block too, than the last ever read (adding Euler, or leaving it
      // out, is not a change; leaving it out and adding another is).
      const sameConfig =
        (checkpoint.morpho === undefined || checkpoint.morpho === morphoConfig) &&
        (!checkpoint.eulerWas || eulerConfig === null || checkpoint.eulerWas === eulerConfig);
      const lastBlock = sameConfig ? previous?.state?.lastBlock[String(chain.chainId)] : undefined;
      // Where the logs are read from: after the last block read, if it is still on the chain;
      // after the newest block read that is (the common ancestor) if the chain reorganized; from
      // the start if none is (a reset local chain, a reorganization deeper than RECENT_BLOCKS).
      let recent = sameConfig ? checkpoint.recent : [];
      let resume: bigint | null = null;
      let reorg: SourceOutput['reorg'];
      if (!sameConfig && previous?.state?.lastBlock[String(chain.chainId)] !== undefined) {
        // Another Morpho address or start block: what was read with the old one goes.
        reorg = { chainId: chain.chainId, fromBlock: 0 };
      }
      if (lastBlock !== undefined) {
        // A head below every block the checkpoint can check cannot be told from a lagging RPC.
        const unverifiable = recent.length > 0 && recent.every(([n]) => n > Number(target));
        const ancestor =
          recent.length === 0 || unverifiable ? lastBlock : await canonicalAncestor(rpc, recent, block);
        // A head below the last block read, that block's ancestors still on the chain: the RPC
        // lags (another node behind a load balancer). Nothing is read; the data stays.
        if (ancestor !== null && Number(target) < lastBlock)
          throw new Error(
            `the RPC's head (block ${target} after ${chain.confirmations} confirmations) is behind the last block read (${lastBlock}): the data read stays until it catches up`,
          );
        if (ancestor !== lastBlock) {
          const fromBlock = ancestor === null ? firstBlock(chain) : ancestor + 1;
          // The rounds read from the ancestor's time on may have gone with its orphaned blocks
          // (blocks share a second): they go, and this pass reads each feed's latest again.
          const fromMs =
            ancestor === null
              ? 0
              : Number((await rpc.client.getBlock({ blockNumber: BigInt(ancestor) })).timestamp) * 1000;
          reorg = { chainId: chain.chainId, fromBlock, fromMs };
          items.push({ id: `reorg:${fromBlock}`, ok: true });
        }
        if (ancestor !== null) resume = BigInt(ancestor) + 1n;
        recent = recent.filter(([n]) => ancestor !== null && n <= ancestor);
      }
      // What the process kept may belong to orphaned blocks: read everything again, every account
      // it knew included (one the orphaned blocks emptied is no position now, but is again).
      if (resume === null || reorg) {
        if (resume !== null) {
          for (const key of cache.positions.keys()) rereadAfterReorg.morpho.add(key);
          for (const key of [...comets.accounts.keys(), ...comets.retry]) rereadAfterReorg.comets.add(key);
          for (const key of [...euler.accounts.keys(), ...euler.retry]) rereadAfterReorg.euler.add(key);
          for (const key of [...aave.accounts.keys(), ...aave.retry]) rereadAfterReorg.aave.add(key);
          for (const key of [...fluid.positions.keys(), ...fluid.retry]) rereadAfterReorg.fluid.add(key);
        }
        cache.clear();
        comets.clear();
        euler.clear();
        aave.clear();
        fluid.clear();
        // A chain read again from the start (reset, or reorganized past the checkpoint) may hold
        // its contracts at other blocks.
        if (resume === null) deployments.clear();
      }

      // After the first pass every reader resumes at the same block: the logs of Morpho, of the
      // comets already read and of the feeds' publishers (as the last pass found them) are read in
      // one eth_getLogs, which each reader takes its part of.
      const readComets = new Set(resume === null ? [] : (checkpoint.comets ?? []));
      const readPools = new Set(resume === null ? [] : (checkpoint.aave ?? []));
      const resumedPools = chain.aave.filter((p) => readPools.has(aaveConfig(p))).map((p) => p.pool);
      const eulerResumes = resume !== null && eulerConfig !== null && checkpoint.euler === eulerConfig;
      const knownEuler = eulerResumes
        ? {
            controllers: checkpoint.eulerVaults ?? [],
            served: knownMarkets(`euler-${chain.chainId}-`, previous).map((k) => k.split('_')[0]!),
            accounts: knownHolders(`euler-${chain.chainId}-`, previous, [
              ...(checkpoint.eulerPending ?? []),
              ...rereadAfterReorg.euler,
            ]).map(({ group, user }) => ({ vault: group, user })),
          }
        : { controllers: [], accounts: [] };
      const fluidResumes = resume !== null && fluidConfig !== null && checkpoint.fluid === fluidConfig;
      // Vaults whose positions did not all fit in the checkpoint are read from their start by a
      // new process (this one holds them).
      const truncated = new Set(fluid.warm ? [] : (checkpoint.fluidTruncated ?? []));
      const fluidLogged = fluidResumes ? (checkpoint.fluidVaults ?? []).filter((v) => !truncated.has(v)) : [];
      let shared: SharedLogs | undefined;
      if (resume !== null && resume <= target) {
        const addresses = [
          ...(chain.morpho ? [chain.morpho.blue] : []),
          ...chain.compound.filter((c) => readComets.has(cometConfig(c))).map((c) => c.comet),
          ...aaveLogAddresses(resumedPools, aave),
          ...(chain.euler && eulerResumes ? eulerLogAddresses(chain.euler.evc, knownEuler, euler) : []),
          ...(fluidLogged.length > 0 ? [...fluidLogged, ...(checkpoint.fluidFactories ?? [])] : []),
          ...publishers,
        ].map((a) => a.toLowerCase());
        if (addresses.length > 0)
          shared = {
            fromBlock: resume,
            toBlock: target,
            addresses: new Set(addresses),
            logs: await getLogsAdaptive(rpc, {
              address: addresses as `0x${string}`[],
              events: [
                ...MORPHO_EVENTS,
                ...COMET_EVENTS,
                ...EVC_EVENTS,
                ...EVAULT_EVENTS,
                ...AAVE_EVENTS,
                ...ATOKEN_EVENTS,
                ...FLUID_VAULT_EVENTS,
                ...FLUID_FACTORY_EVENTS,
                ANSWER_UPDATED,
              ],
              fromBlock: resume,
              toBlock: target,
            }),
          };
      }

      let morpho: Awaited<ReturnType<typeof readMorphoBlue>> | null = null;
      if (chain.morpho) {
        const known =
          resume === null
            ? { marketIds: [], accounts: [] }
            : knownMorpho(chain.chainId, previous, checkpoint.markets, [
                ...(checkpoint.pending ?? []),
                ...rereadAfterReorg.morpho,
              ]);
        morpho = await readMorphoBlue(
          rpc,
          chain.morpho.blue as `0x${string}`,
          { fromBlock: resume ?? BigInt(chain.morpho.fromBlock), block: target, timestamp: block.timestamp },
          known,
          cache,
          shared,
        );
        for (const f of morpho.failures) items.push({ id: `morpho:${f.id}`, ok: false, error: f.error });
      }

      const compound =
        chain.compound.length === 0
          ? null
          : await readCompound(
              rpc,
              await Promise.all(
                chain.compound.map(async (c) => ({
                  comet: c.comet,
                  rewards: c.rewards,
                  from:
                    resume !== null && readComets.has(cometConfig(c))
                      ? resume
                      : c.fromBlock !== null
                        ? BigInt(c.fromBlock)
                        : await deployedAt(c.comet as `0x${string}`, target),
                })),
              ),
              { block: target, timestamp: block.timestamp },
              resume === null
                ? []
                : knownHolders(`compound-${chain.chainId}-`, previous, [
                    ...(checkpoint.cometPending ?? []),
                    ...rereadAfterReorg.comets,
                  ]).map(({ group, user }) => ({ comet: group, user })),
              comets,
              shared,
            );
      for (const f of compound?.failures ?? [])
        items.push({ id: `compound:${f.id}`, ok: false, error: f.error });

      const aaveRead =
        chain.aave.length === 0
          ? null
          : await readAave(
              rpc,
              await Promise.all(
                chain.aave.map(async (p) => ({
                  pool: p.pool,
                  from: resumedPools.includes(p.pool)
                    ? resume!
                    : p.fromBlock !== null
                      ? BigInt(p.fromBlock)
                      : await deployedAt(p.pool as `0x${string}`, target),
                })),
              ),
              { block: target },
              resume === null
                ? []
                : [
                    ...knownHolders(`aave-${chain.chainId}-`, previous),
                    ...knownHolders(`spark-${chain.chainId}-`, previous, [
                      ...(checkpoint.aavePending ?? []),
                      ...rereadAfterReorg.aave,
                    ]),
                  ].map(({ group, user }) => ({ pool: group, user })),
              aave,
              shared,
            );
      // A pool's items are named by its protocol (`aave:0x…`, `spark:0x…`).
      const poolKind = (pool: string) => protocolOf.get(pool) ?? 'aave';
      for (const f of aaveRead?.failures ?? [])
        items.push({ id: `${poolKind(f.id.split(':')[0]!)}:${f.id}`, ok: false, error: f.error });

      const eulerRead = chain.euler
        ? await readEuler(
            rpc,
            chain.euler.evc,
            {
              fromBlock: eulerResumes
                ? resume!
                : chain.euler.fromBlock !== null
                  ? BigInt(chain.euler.fromBlock)
                  : await deployedAt(chain.euler.evc as `0x${string}`, target),
              block: target,
            },
            knownEuler,
            euler,
            shared,
            chain.euler.factory,
          )
        : null;
      for (const f of eulerRead?.failures ?? [])
        items.push({ id: `euler:${f.id}`, ok: false, error: f.error });

      const fluidConf = chain.fluid;
      const fluidRead = fluidConf
        ? await readFluid(
            rpc,
            fluidConf,
            {
              start: async (factory) =>
                fluidConf.fromBlock !== null
                  ? BigInt(fluidConf.fromBlock)
                  : await deployedAt(factory as `0x${string}`, target),
              resume: fluidResumes ? resume : null,
              block: target,
            },
            {
              logged: fluidLogged,
              factories: fluidResumes ? (checkpoint.fluidFactories ?? []) : [],
              positions: [
                ...(fluidResumes ? (checkpoint.fluidHeld ?? []) : []),
                ...rereadAfterReorg.fluid,
              ].map((key) => {
                const split = key.lastIndexOf(':');
                return { vault: key.slice(0, split), nftId: key.slice(split + 1) };
              }),
            },
            fluid,
            shared,
          )
        : null;
      for (const f of fluidRead?.failures ?? [])
        items.push({ id: `fluid:${f.id}`, ok: false, error: f.error });

      // Feeds: those of the file, and those the markets' oracles and the comets name.
      const feeds = new Map(chain.chainlink.map((f) => [f.address, f]));
      const fileFeeds = new Set(feeds.keys());
      const named = [
        ...(morpho?.markets ?? []).flatMap((m) => m.oracleFeeds ?? []),
        ...(aaveRead?.pools ?? []).flatMap((p) => p.reserves.flatMap((r) => (r.source ? [r.source] : []))),
        ...(compound?.comets ?? []).flatMap((c) => [
          c.config.baseTokenPriceFeed,
          ...c.config.assets.map((a) => a.priceFeed),
        ]),
      ];
      for (const address of named)
        if (!feeds.has(address)) feeds.set(address, discoveredFeed(chain.chainId, address, reference.feeds));
      const read = await readFeeds(rpc, [...feeds.values()], target);
      for (const f of read.failures) items.push({ id: `feed:${f.feed.address}`, ok: false, error: f.error });
      const readings = read.readings.map(withPairFromDescription);
      for (const r of readings) items.push({ id: `feed:${r.feed.address}`, ok: true });
      const byFeed = new Map(readings.map((r) => [r.feed.address, r]));
      // Prices come from the file's feeds only: a feed an oracle names is anyone's contract
      // (Morpho Blue is permissionless); it serves that oracle's health, never a token's price.
      const feedPriceOf = feedPricer(
        readings.filter((r) => fileFeeds.has(r.feed.address)),
        feedSymbolOf,
      );
      const usdOf = usdOnly(feedPriceOf);

      const markets: MarketRecord[] = [];
      const positions: PositionRecord[] = [];
      const priced = new Map<string, { record: PricedMarketRecord; read: MorphoMarketRead }>();
      // A market that cannot be served this pass keeps what the last pass served of it.
      const kept = new Map<string, MarketRecord>();
      // Markets never priced, served with what is known (D15).
      const unpricedMarkets = new Map<string, MarketRecord>();
      const previousMarkets = new Map((previous?.markets ?? []).map((m) => [m.uniqueKey, m]));
      const keep = (id: string) => {
        const record = previousMarkets.get(morphoKey(chain.chainId, id));
        if (!record || kept.has(id)) return;
        kept.set(id, record);
        markets.push(record);
      };
      for (const f of morpho?.failures ?? []) if (!f.id.includes(':')) keep(f.id);
      for (const m of morpho?.markets ?? []) {
        const key = morphoKey(chain.chainId, m.id);
        const loanUsd = usdOf(m.loan);
        const collateralUsd = usdOf(m.collateral) ?? (loanUsd === null ? null : oracleUsd(m, loanUsd));
        const record = marketRecord(
          chain.chainId,
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
        // Never priced: served with what is known (D15), its borrowers kept for when it is.
        markets.push(record);
        unpricedMarkets.set(m.id, record);
        items.push(
          servedItem(
            `morpho:${m.id}`,
            `market ${key}: ${why}: ${UNPRICED_NOTE[loanUsd === null ? 'loan' : 'collateral']}`,
          ),
        );
      }
      for (const p of morpho?.positions ?? []) {
        const market = priced.get(p.id);
        if (market) positions.push(positionRecord(market.record, market.read.market, p));
      }
      // A kept market's positions: as the last pass served them (one walk, whatever the count).
      if (kept.size > 0) {
        const keptKeys = new Set([...kept.values()].map((m) => m.uniqueKey));
        for (const p of previous?.positions ?? []) if (keptKeys.has(p.marketKey)) positions.push(p);
      }
      const liquidations: LiquidationEvent[] = [];
      const found = (morpho?.liquidations ?? []).flatMap((l) => {
        // A kept market's liquidations are priced at its kept prices, a never-priced one's
        // amounts have no USD value; an unserved one's are not recorded (named).
        const record = priced.get(l.id)?.record ?? kept.get(l.id) ?? unpricedMarkets.get(l.id);
        if (!record)
          items.push({
            id: `morpho:${l.id}:liquidation:${l.txHash}:${l.logIndex}`,
            ok: false,
            error: `liquidation in ${l.txHash} of market ${morphoKey(chain.chainId, l.id)} not recorded: the market is not served`,
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
        liquidations.push(
          liquidationRecord(
            { ...l, protocol: 'morpho', chainId: chain.chainId },
            record,
            { seized: l.seizedAssets, repaid: l.repaidAssets, badDebt: l.badDebtAssets },
            pricesAt(atBlock.get(`${l.block}:${record.uniqueKey}`), record),
          ),
        );
      }
      // The vaults lending into the markets (Euler's vaults: each lends to its collaterals' markets).
      const vaults: VaultRecord[] = [];
      // A pooled protocol's pool (a comet, an Euler vault) that cannot be served this pass keeps
      // what the last pass served of its markets (`<protocol>-<chainId>-<pool>_…`), into `served`.
      // Whether a pool's fresh records leave a market unpriced that the last pass served priced:
      // the pool then keeps its last records (a market once priced is not served without it, D15).
      const lostPrice = (fresh: readonly MarketRecord[]) =>
        fresh.some((m) => {
          const last = previousMarkets.get(m.uniqueKey);
          return !isPriced(m) && last !== undefined && isPriced(last);
        });
      // Why a pool's fresh records are not served (`why` it lacks a price, when that loses one),
      // or null.
      const refusal = (
        out: { markets: readonly MarketRecord[]; positions: readonly PositionRecord[] },
        why: string | null,
      ) => (why && lostPrice(out.markets) ? why : implausible(out));
      const keepPool = <T extends MarketRecord>(
        prefix: string,
        served: Map<string, T>,
        accept: (m: MarketRecord) => m is T,
      ) => {
        // (A kept record is checked again: one stored before the check existed may hold what no
        // pool has.)
        const keptMarkets = (previous?.markets ?? []).filter(
          (m): m is T =>
            accept(m) &&
            m.uniqueKey.startsWith(prefix) &&
            !served.has(m.uniqueKey) &&
            implausible({ markets: [m], positions: [] }) === null,
        );
        if (keptMarkets.length === 0) return;
        const keys = new Set(keptMarkets.map((m) => m.uniqueKey));
        for (const m of keptMarkets) served.set(m.uniqueKey, m);
        append(markets, keptMarkets);
        for (const p of previous?.positions ?? []) if (keys.has(p.marketKey)) positions.push(p);
      };
      // The pools named failed this pass (`<kind>:0x…`: a pool as a whole, not an account or a
      // check, `0x…:…`) keep their last records.
      const keepFailedPools = <T extends MarketRecord>(
        kind: 'compound' | 'euler' | 'aave' | 'spark',
        served: Map<string, T>,
        accept: (m: MarketRecord) => m is T,
      ) => {
        for (const item of items)
          if (!item.ok && item.id.startsWith(`${kind}:`)) {
            const id = item.id.slice(kind.length + 1);
            if (!id.includes(':')) {
              keepPool(`${kind}-${chain.chainId}-${id}_`, served, accept);
              // An Euler vault's own record too, as the last pass served it.
              for (const v of previous?.vaults ?? [])
                if (v.address === id && v.protocol === kind) vaults.push(v);
            }
          }
      };
      // Compound v3: a comet whose base token has a USD price is served; one never priced is
      // served with what is known (D15: no position, its holders followed); one priced before
      // that no longer is (or an asset that cannot be read) keeps what the last pass served of it.
      const cometMarkets = new Map<string, MarketRecord>();
      // The comets served with their positions this pass, and one market of each comet served
      // (its base price, for its absorbs).
      const served = new Set<string>();
      const marketOfComet = new Map<string, MarketRecord>();
      for (const c of compound?.comets ?? []) {
        const baseUsd = usdOf(c.base);
        const why =
          baseUsd === null
            ? `no USD price for its base token ${c.base.symbol} ${c.base.address} (${noPriceHint(c.base)})`
            : null;
        const out = cometRecords(chain.chainId, c, baseUsd, usdOf, (feeds) =>
          oracleRecord(feeds[0]!, feeds, byFeed, 'ChainlinkOracle'),
        );
        const wrong = refusal(out, why);
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
        for (const m of out.markets) cometMarkets.set(m.uniqueKey, m);
        if (out.markets[0]) marketOfComet.set(c.comet, out.markets[0]);
        if (!why) served.add(c.comet);
        append(markets, out.markets);
        append(positions, out.positions);
        items.push(
          servedItem(`compound:${c.comet}`, why && `comet ${c.comet}: ${why}: ${UNPRICED_NOTE.loan}`),
        );
      }
      keepFailedPools('compound', cometMarkets, (m): m is MarketRecord => true);
      // A comet kept at its last records: one of its markets too (its absorbs' base price).
      for (const m of cometMarkets.values()) {
        const comet = m.uniqueKey.slice(`compound-${chain.chainId}-`.length).split('_')[0]!;
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
        liquidations.push(
          ...absorbLiquidations(
            chain.chainId,
            a,
            { config, baseDecimals: base.decimals ?? 18 },
            cometMarkets,
            then ?? anyMarket.loanPrice,
            (asset) => cometThen.usd.get(`${a.block}:${a.comet}:${asset}`) ?? null,
          ),
        );
      }

      // Euler v2: a vault whose asset has a USD price (the file's feeds) and whose collaterals have
      // one (the file's feeds, else the vault's oracle against the asset) is served; one whose
      // asset never had one is served with what is known (D15: no position, its accounts
      // followed); one priced before, or whose collateral the oracle cannot price against its
      // asset (or whose quotes cannot be read), keeps what the last pass served of it.
      const eulerMarkets = new Map<string, MarketRecord>();
      // The vaults served with their positions.
      const eulerServed = new Set<string>();
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
        const out = eulerRecords(
          chain.chainId,
          v,
          prices,
          // An EulerRouter: its quotes are what the vault values liquidity with.
          customOracle(
            v.oracle,
            'Euler price oracle router: prices are its mid-point quotes; the adapters behind it are not resolved',
          ),
        );
        const wrong = refusal(out, why);
        if (wrong) {
          items.push({ id: `euler:${v.vault}`, ok: false, error: `vault ${v.vault}: ${wrong}` });
          continue;
        }
        for (const m of out.markets) eulerMarkets.set(m.uniqueKey, m);
        if (!why) eulerServed.add(v.vault);
        vaults.push(out.vault);
        append(markets, out.markets);
        append(positions, out.positions);
        items.push(servedItem(`euler:${v.vault}`, why && `vault ${v.vault}: ${why}: ${UNPRICED_NOTE.loan}`));
      }
      keepFailedPools('euler', eulerMarkets, (m): m is MarketRecord => true);
      // Liquidations at their block's prices and share price (the newest MAX_PRICED_BLOCKS blocks
      // of the pass; the others at the pass's, named).
      const eulerVaults = new Map((eulerRead?.vaults ?? []).map((v) => [v.vault, v]));
      const eulerFound = (eulerRead?.liquidations ?? []).flatMap((l) => {
        const record = eulerMarkets.get(eulerKey(chain.chainId, l.vault, l.collateral));
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
        liquidations.push(
          eulerLiquidation(
            chain.chainId,
            l,
            record,
            c && perShare !== undefined ? { perShare, shareDecimals: c.share.decimals ?? 18 } : null,
            usd,
          ),
        );
      }

      // Aave v3 and Spark: a pool whose every reserve has a USD price (the file's feeds, else the
      // pool's oracle in USD) is served; one never priced whole is served with what is known (D15:
      // the markets of an unpriced reserve without its USD figures, and their positions unserved,
      // its accounts followed); one priced before keeps what the last pass served of it.
      const aaveMarkets = new Map<string, MarketRecord>();
      // Each pool served, its reserves' prices; `whole` when every reserve has one.
      const aaveServed = new Map<string, { prices: Map<string, number | null>; whole: boolean }>();
      for (const p of aaveRead?.pools ?? []) {
        const kind = poolKind(p.pool);
        const prices = aavePrices(p, usdOf);
        const unpriced = p.reserves.filter((r) => prices.get(r.asset) == null);
        const why =
          unpriced.length > 0
            ? `no USD price for ${unpriced.map((r) => `${r.token.symbol} ${r.asset}`).join(', ')} (its oracle's base currency is not USD: add ${unpriced.map((r) => `${r.token.symbol}/USD`).join(', ')} to the sources file)`
            : null;
        const out = aaveRecords(
          kind,
          chain.chainId,
          p,
          prices,
          (c, d) => {
            const sources = [c.source, d.source].filter((x) => x !== null);
            return oracleRecord(p.oracle, sources.length > 0 ? sources : null, byFeed, 'ChainlinkOracle');
          },
          { now: Number(block.timestamp), usdOf },
        );
        const wrong = refusal(out, why);
        if (wrong) {
          items.push({ id: `${kind}:${p.pool}`, ok: false, error: `pool ${p.pool}: ${wrong}` });
          continue;
        }
        for (const m of out.markets) aaveMarkets.set(m.uniqueKey, m);
        aaveServed.set(p.pool, { prices, whole: !why });
        append(markets, out.markets);
        append(positions, out.positions);
        items.push(
          servedItem(
            `${kind}:${p.pool}`,
            why &&
              `pool ${p.pool}: ${why}: the markets of those tokens served without their USD price and without positions`,
          ),
        );
      }
      keepFailedPools('aave', aaveMarkets, (m): m is MarketRecord => true);
      keepFailedPools('spark', aaveMarkets, (m): m is MarketRecord => true);
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
          aaveMarkets.get(aaveKey(kind, chain.chainId, l.pool, l.collateral, l.debt)) ??
          (read && prices ? aavePair(kind, chain.chainId, read, prices, l.collateral, l.debt) : null);
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
        liquidations.push(aaveLiquidation(chain.chainId, l, record, pricesAt(at, record)));
      }

      // Fluid: a T1 vault is served at its borrow token's USD price (the file's feeds) and its
      // supply token's (the file's feeds, else the vault's oracle); one never priced without
      // them is served with what is known (D15: no position); one priced before, or that cannot
      // be read, keeps what the last pass served of it.
      const fluidMarkets = new Map<string, PricedMarketRecord>();
      const fluidUnpriced = new Map<string, MarketRecord>();
      const previousMarketsByKey = new Map((previous?.markets ?? []).map((m) => [m.uniqueKey, m]));
      for (const v of fluidRead?.vaults ?? []) {
        const prices = fluidPrices(v, usdOf);
        const unpriced =
          prices.loanUsd === null ? v.borrowToken : prices.collateralUsd === null ? v.supplyToken : null;
        const why =
          unpriced && `no USD price for ${unpriced.symbol} ${unpriced.address} (${noPriceHint(unpriced)})`;
        const last = previousMarketsByKey.get(fluidKey(chain.chainId, v.vault));
        if (why && last && isPriced(last)) {
          items.push({ id: `fluid:${v.vault}`, ok: false, error: `vault ${v.vault}: ${why}` });
          continue;
        }
        const out = fluidRecords(
          chain.chainId,
          v,
          prices,
          customOracle(
            v.oracle,
            'Fluid oracle: prices are its liquidation rate (getExchangeRateLiquidate); the sources behind it are not resolved',
          ),
        );
        const wrong = implausible(out);
        if (wrong) {
          items.push({ id: `fluid:${v.vault}`, ok: false, error: `vault ${v.vault}: ${wrong}` });
          continue;
        }
        for (const m of out.markets)
          if (isPriced(m)) fluidMarkets.set(m.uniqueKey, m);
          else fluidUnpriced.set(m.uniqueKey, m);
        append(markets, out.markets);
        append(positions, out.positions);
        items.push(
          servedItem(
            `fluid:${v.vault}`,
            why &&
              `vault ${v.vault}: ${why}: ${UNPRICED_NOTE[prices.loanUsd === null ? 'loan' : 'collateral']}`,
          ),
        );
      }
      // Vaults not served keep their last records: every one when the resolver did not answer.
      const resolverFailed =
        chain.fluid !== null && items.some((i) => !i.ok && i.id === `fluid:${chain.fluid!.vaultResolver}`);
      const fluidFailed = new Set(
        items.flatMap((i) =>
          !i.ok && i.id.startsWith('fluid:0x') && !i.id.slice(6).includes(':')
            ? [fluidKey(chain.chainId, i.id.slice(6))]
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
      if (keptFluid.length > 0) {
        const keys = new Set(keptFluid.map((m) => m.uniqueKey));
        for (const m of keptFluid)
          if (isPriced(m)) fluidMarkets.set(m.uniqueKey, m);
          else fluidUnpriced.set(m.uniqueKey, m);
        append(markets, keptFluid);
        for (const p of previous?.positions ?? []) if (keys.has(p.marketKey)) positions.push(p);
      }
      const fluidFound = (fluidRead?.liquidations ?? []).flatMap((l) => {
        const key = fluidKey(chain.chainId, l.vault);
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
        liquidations.push(
          fluidLiquidation(
            chain.chainId,
            l,
            record,
            pricesAt(fluidThen.at.get(`${l.block}:${record.uniqueKey}`), record),
          ),
        );

      // Each feed's latest round, and after the first pass every round published since the last
      // block read (a first sync reads the latest only: the history window is days, not years).
      const latestRounds: OracleRound[] = readings.map((r) => ({
        chainId: chain.chainId,
        feed: r.feed.address,
        roundId: r.roundId.toString(),
        answer: r.answer,
        updatedAt: r.updatedAt * 1000,
      }));
      // After a reorganization the rounds from the common ancestor's second on were dropped: they
      // are read again from the ancestor and the blocks before it that may share its second.
      const roundsFrom =
        resume !== null && reorg
          ? resume > SAME_SECOND_BLOCKS + 1n
            ? resume - 1n - SAME_SECOND_BLOCKS
            : 0n
          : resume;
      const published =
        roundsFrom === null
          ? []
          : await readRounds(
              rpc,
              chain.chainId,
              [
                ...readings,
                ...[...lastReading.values()].filter((before) => {
                  const now = byFeed.get(before.feed.address);
                  return now === undefined || now.publisher.address !== before.publisher.address;
                }),
              ],
              { fromBlock: roundsFrom, toBlock: target },
              shared,
            );
      for (const r of readings) lastReading.set(r.feed.address, r);
      // Feeds no longer read (their market gone) are forgotten.
      for (const address of lastReading.keys()) if (!feeds.has(address)) lastReading.delete(address);
      publishers = new Set(
        readings.filter((r) => fileFeeds.has(r.feed.address)).map((r) => r.publisher.address),
      );
      const rounds = [
        ...new Map([...published, ...latestRounds].map((r) => [`${r.feed}:${r.roundId}`, r])).values(),
      ];
      // Accounts kept in the checkpoint to be read when their market or vault is served: those of
      // markets and pools not served this pass, and Euler accounts a vault controls without a
      // position (they are named by no log when they deposit collateral).
      const pending = (kind: string, what: string, keys: string[]) => {
        if (keys.length > MAX_PENDING)
          items.push({
            id: `${kind}:pending`,
            ok: false,
            error: `${keys.length} ${what}: the first ${MAX_PENDING} are kept for when they are`,
          });
        return keys.slice(0, MAX_PENDING);
      };
      const morphoPending = pending(
        'morpho',
        'accounts of markets not served',
        (morpho?.accounts ?? []).filter((a) => !priced.has(a.id)).map((a) => `${a.id}:${a.user}`),
      );
      const cometPending = pending(
        'compound',
        'holders of comets not served',
        (compound?.holders ?? []).filter((a) => !served.has(a.comet)).map((a) => `${a.comet}:${a.user}`),
      );
      const eulerPending = pending(
        'euler',
        'accounts of vaults not served or without a position',
        (eulerRead?.holders ?? [])
          .filter((a) => !eulerServed.has(a.vault) || !a.position)
          .map((a) => `${a.vault}:${a.user}`),
      );
      // Fluid's positions held, at most MAX_PENDING in the checkpoint: the vaults of those left out
      // are read from their start by a new process (their logs name their positions again).
      const fluidHeld = (fluidRead?.held ?? []).slice(0, MAX_PENDING);
      const fluidTruncated = [
        ...new Set(
          (fluidRead?.held ?? []).slice(MAX_PENDING).map((key) => key.slice(0, key.lastIndexOf(':'))),
        ),
      ];
      if (fluidTruncated.length > 0)
        items.push({
          id: 'fluid:held',
          ok: false,
          error: `${fluidRead!.held.length} positions held: the checkpoint names ${MAX_PENDING}; a new process reads the ${fluidTruncated.length} vaults of the others from their start`,
        });
      const aavePending = pending(
        'aave',
        'accounts of pools not served, or served without every price',
        (aaveRead?.holders ?? [])
          .filter((a) => !aaveServed.get(a.pool)?.whole)
          .map((a) => `${a.pool}:${a.user}`),
      );
      recent = [
        ...recent.filter(([n]) => n < Number(target)),
        [Number(target), block.hash!] as [number, string],
      ].slice(-RECENT_BLOCKS);
      // Accounts read empty at or before the oldest block a reorganization can roll back to are
      // forgotten: what the process keeps grows with the positions, not with every account named.
      // (Not past the oldest block of the stored checkpoint: this pass may yet fail to be stored.)
      const settled = Math.min(recent[0]![0], checkpoint.recent[0]?.[0] ?? Number.POSITIVE_INFINITY);
      cache.positions.settle(settled);
      comets.accounts.settle(settled);
      euler.accounts.settle(settled);
      aave.accounts.settle(settled);
      fluid.positions.settle(settled);
      last = {
        block: Number(target),
        rpcRequests: rpc.requests() - requests0,
        markets: markets.length,
        positions: positions.length,
        positionsRead:
          (morpho?.positionsRead ?? 0) +
          (compound?.accountsRead ?? 0) +
          (eulerRead?.accountsRead ?? 0) +
          (aaveRead?.accountsRead ?? 0) +
          (fluidRead?.accountsRead ?? 0),
        accountsKept:
          cache.positions.size +
          comets.accounts.size +
          euler.accounts.size +
          aave.accounts.size +
          fluid.positions.size,
      };
      // Read again: what a reorganization left to read is read.
      rereadAfterReorg.morpho.clear();
      rereadAfterReorg.comets.clear();
      rereadAfterReorg.euler.clear();
      rereadAfterReorg.aave.clear();
      rereadAfterReorg.fluid.clear();
      recordPriceSources(markets, new Set(previous?.markets ?? []), feedPriceOf);
      return {
        records: { markets, positions, vaults },
        liquidations,
        rounds,
        blocks: { [String(chain.chainId)]: Number(target) },
        head: { [String(chain.chainId)]: Number(latest.number) },
        ...(reorg ? { reorg } : {}),
        cursor: JSON.stringify({
          recent,
          morpho: morphoConfig,
          markets: morpho?.marketIds ?? [],
          // Accounts of markets not served this pass: read once their market is.
          pending: morphoPending,
          // Holders of comets not served this pass (an unpriced base token's borrowers).
          cometPending,
          // A comet never read whole (its configuration refused) is read from its start again.
          comets: chain.compound
            .filter((c) => compound?.configured.includes(c.comet) || readComets.has(cometConfig(c)))
            .map(cometConfig),
          euler: eulerRead ? eulerConfig : null,
          eulerWas: eulerConfig ?? checkpoint.eulerWas ?? null,
          eulerVaults: eulerRead?.controllers ?? [],
          eulerPending,
          // A pool not listed this pass (its reserves refused) is read from its start again: its
          // logs were not read.
          aave: chain.aave.filter((p) => aaveRead?.listed.includes(p.pool)).map(aaveConfig),
          aavePending,
          // Fluid as read: its T1 vaults whose logs are read, their factories, the positions held.
          fluid: fluidRead ? fluidConfig : null,
          fluidVaults: fluidRead?.logged ?? [],
          fluidTruncated,
          fluidFactories: fluidRead?.factories ?? [],
          fluidHeld,
        } satisfies Cursor),
        items,
      };
    },
  };
}

/** The first block any of the chain's protocols is read from. */
function firstBlock(chain: ChainConfig): number {
  const starts = [
    ...(chain.morpho ? [chain.morpho.fromBlock] : []),
    ...chain.compound.map((c) => c.fromBlock ?? 0),
    ...(chain.euler ? [chain.euler.fromBlock ?? 0] : []),
    ...(chain.fluid ? [chain.fluid.fromBlock ?? 0] : []),
    ...chain.aave.map((p) => p.fromBlock ?? 0),
  ];
  return starts.length === 0 ? 0 : Math.min(...starts);
}

/** Blocks read again before a reorganization's common ancestor for its rounds (fast chains share a second among blocks). */
const SAME_SECOND_BLOCKS = 17n;

/** Blocks (number and hash) of the last runs kept in the checkpoint, to find a reorganization's common ancestor. */
export const RECENT_BLOCKS = 64;

/**
 * A chain source's checkpoint cursor: the last blocks read (number and hash), the Morpho
 * configuration it was read with, and every Morpho market id found (served or not: one that
 * could not be read this pass is read again the next).
 */
interface Cursor {
  recent: [number, string][];
  morpho?: string | null;
  markets?: string[];
  pending?: string[];
  cometPending?: string[];
  /** The comets read, as `${comet}:${fromBlock}` (`deployment` when found by the source). */
  comets?: string[];
  /** Euler as read, `${evc}:${fromBlock}`; its controller vaults found; accounts of vaults not served. */
  euler?: string | null;
  /** The last Euler configuration ever read on this chain (another one reads the chain again). */
  eulerWas?: string | null;
  eulerVaults?: string[];
  eulerPending?: string[];
  /** The Aave and Spark pools read, as `${protocol}:${pool}:${fromBlock}`; accounts of pools not served. */
  aave?: string[];
  aavePending?: string[];
  /** Fluid as read, `${vaultResolver}:${positionsResolver}:${fromBlock}`; its T1 vaults whose logs are read; their factories; the positions held (`${vault}:${nftId}`). */
  fluid?: string | null;
  fluidVaults?: string[];
  fluidFactories?: string[];
  fluidHeld?: string[];
  /** Vaults some of whose positions held the checkpoint could not name (read from their start by a new process). */
  fluidTruncated?: string[];
}

/** How a market without a USD price of its loan token, or of its collateral, is served (D15). */
export const UNPRICED_NOTE = {
  loan: 'served with its USD figures null and no position',
  collateral: 'served with its collateral price null and no position',
} as const;

/** An item served: whole, or in part with what `note` says (D15). */
function servedItem(id: string, note: string | null): ItemReport {
  return note ? { id, ok: true, note } : { id, ok: true };
}

/** Accounts kept in the checkpoint for markets not served (an unpriced market's borrowers). */
const MAX_PENDING = 50_000;

function readCursor(cursor: string | null): Cursor {
  if (!cursor) return { recent: [] };
  try {
    const c = JSON.parse(cursor) as Partial<Cursor>;
    const recent = Array.isArray(c.recent)
      ? c.recent.filter(
          (r): r is [number, string] =>
            Array.isArray(r) && Number.isSafeInteger(r[0]) && typeof r[1] === 'string',
        )
      : [];
    const strings = (x: unknown): string[] =>
      Array.isArray(x) ? x.filter((m) => typeof m === 'string') : [];
    const markets = strings(c.markets);
    const pending = strings(c.pending);
    const cometPending = strings(c.cometPending);
    const comets = Array.isArray(c.comets) ? strings(c.comets) : undefined;
    const aave = Array.isArray(c.aave) ? strings(c.aave) : undefined;
    return {
      recent,
      markets,
      pending,
      cometPending,
      ...(comets ? { comets } : {}),
      ...(aave ? { aave } : {}),
      aavePending: strings(c.aavePending),
      euler: typeof c.euler === 'string' ? c.euler : null,
      eulerWas: typeof c.eulerWas === 'string' ? c.eulerWas : typeof c.euler === 'string' ? c.euler : null,
      eulerVaults: strings(c.eulerVaults),
      eulerPending: strings(c.eulerPending),
      fluid: typeof c.fluid === 'string' ? c.fluid : null,
      fluidVaults: strings(c.fluidVaults),
      fluidFactories: strings(c.fluidFactories),
      fluidHeld: strings(c.fluidHeld),
      fluidTruncated: strings(c.fluidTruncated),
      ...(c.morpho !== undefined ? { morpho: c.morpho } : {}),
    };
  } catch {
    return { recent: [] };
  }
}

/**
 * The newest block read before that is still on the chain (its hash unchanged), among those
 * at or below the target block; null when none is. No request when the last block read is the
 * target or its parent, one otherwise.
 */
async function canonicalAncestor(
  rpc: ChainRpc,
  recent: readonly [number, string][],
  target: { number: bigint; hash: string | null; parentHash: string },
): Promise<number | null> {
  const head = Number(target.number);
  for (let i = recent.length - 1; i >= 0; i--) {
    const [n, hash] = recent[i]!;
    if (n > head) continue;
    // The block just read, or its parent: known without asking the chain.
    if (n === head && target.hash === hash) return n;
    if (n === head - 1 && target.parentHash === hash) return n;
    const block = await rpc.client.getBlock({ blockNumber: BigInt(n) });
    if (block.hash === hash) return n;
  }
  return null;
}

/** The markets and accounts the last run served on this chain (read again at the new block). */
function knownMorpho(
  chainId: number,
  previous: PreviousRun | undefined,
  found: readonly string[] = [],
  pending: readonly string[] = [],
) {
  const prefix = `morpho-${chainId}-`;
  return {
    marketIds: [...found, ...knownMarkets(prefix, previous)],
    accounts: knownHolders(prefix, previous, pending).map(({ group, user }) => ({ id: group, user })),
  };
}

/**
 * The accounts of the markets or pools (`<prefix><id>` or `<prefix><pool>_…`: Morpho markets,
 * comets, Euler vaults) that the last run served, and those it did not serve (`${id}:${user}`).
 */
function knownHolders(
  prefix: string,
  previous: PreviousRun | undefined,
  pending: readonly string[] = [],
): { group: string; user: string }[] {
  const out = new Map<string, { group: string; user: string }>();
  for (const p of previous?.positions ?? []) {
    if (!p.marketKey.startsWith(prefix)) continue;
    const group = p.marketKey.slice(prefix.length).split('_')[0]!;
    out.set(`${group}:${p.user}`, { group, user: p.user });
  }
  for (const key of pending) {
    const [group, user] = key.split(':') as [string, string];
    out.set(key, { group, user });
  }
  return [...out.values()];
}

/** The identifiers of the markets the last run served under `prefix` (`<protocol>-<chainId>-`). */
function knownMarkets(prefix: string, previous: PreviousRun | undefined): string[] {
  return (previous?.markets ?? []).flatMap((m) =>
    m.uniqueKey.startsWith(prefix) ? [m.uniqueKey.slice(prefix.length)] : [],
  );
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
        const r = reads[i * 2 + j]!;
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

/** A feed an oracle names that the file does not list: its heartbeat from the reference data. */
function discoveredFeed(
  chainId: number,
  address: string,
  reference: readonly RefChainlinkFeed[],
): FeedConfig {
  const ref = reference.find((r) => r.chainId === chainId && r.address.toLowerCase() === address);
  const [base, quote] = (ref?.pair ?? '?/?').split('/') as [string, string];
  return {
    address,
    pair: ref?.pair ?? '',
    base: base.toUpperCase(),
    quote: quote.toUpperCase(),
    heartbeatSeconds: ref?.heartbeatSeconds ?? DEFAULT_HEARTBEAT_SECONDS,
    deviationThreshold: ref?.deviationPercent == null ? null : ref.deviationPercent / 100,
  };
}

/** A feed without a known pair takes it from its description (`ETH / USD`). */
function withPairFromDescription(r: FeedReading): FeedReading {
  if (r.feed.pair !== '') return r;
  const m = /^\s*([^/\s]+)\s*\/\s*([^/\s]+)\s*$/.exec(r.description);
  if (!m) return r;
  return {
    ...r,
    feed: { ...r.feed, pair: `${m[1]}/${m[2]}`, base: m[1]!.toUpperCase(), quote: m[2]!.toUpperCase() },
  };
}

/** A token as prices are looked up: its address and the symbol it is priced under. */
type Token = { address: string; symbol: string };

/** The USD price alone of a feed pricer's answer (null: not priced by feeds). */
function usdOnly(priceOf: (token: Token) => FeedPrice | null) {
  return (token: Token): number | null => priceOf(token)?.usd ?? null;
}

/** A token's USD price from feed readings (D15), by the symbol it is priced under (null: not priced by feeds). */
function pricer(readings: readonly FeedReading[], feedSymbolOf: (t: Token) => string | null) {
  return usdOnly(feedPricer(readings, feedSymbolOf));
}

/** A token's feed price (D15) with the feed behind it; null: not priced by feeds. */
function feedPricer(readings: readonly FeedReading[], feedSymbolOf: (t: Token) => string | null) {
  const { priceOf } = usdPrices(readings);
  return (token: Token): FeedPrice | null => {
    const symbol = feedSymbolOf(token);
    return symbol === null ? null : priceOf(symbol);
  };
}

/**
 * Records where each price of the markets read this pass comes from (D15's order): the feed that
 * gives that price, else the market's oracle. A market kept from the last pass (one of
 * `kept`) keeps its own.
 */
function recordPriceSources(
  markets: MarketRecord[],
  kept: ReadonlySet<MarketRecord>,
  feedPriceOf: (token: Token) => FeedPrice | null,
): void {
  const sourceOf = (
    token: Token,
    usd: number | null,
    oracle: OracleRecord | null,
  ): PriceSourceRecord | null => {
    if (usd === null) return null;
    const f = feedPriceOf(token);
    if (f && f.usd === usd) return { kind: 'feed', address: f.feed, description: f.description };
    return (
      oracle && {
        kind: 'oracle',
        address: oracle.address,
        description: `${oracle.type} (${oracle.provider})`,
      }
    );
  };
  for (const m of markets) {
    if (kept.has(m)) continue;
    m.loanPriceSource = sourceOf({ address: m.loanAddress, symbol: m.loan }, m.loanPrice, m.oracle);
    m.collateralPriceSource = sourceOf(
      { address: m.collateralAddress, symbol: m.collateral },
      m.collateralPrice,
      m.oracle,
    );
  }
}

/** Distinct blocks whose liquidations are priced at the block (more are priced at the pass's prices). */
export const MAX_PRICED_BLOCKS = 200;

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
            address: r.oracle!.address as `0x${string}`,
            abi: blueOracleAbi,
            functionName: 'price',
          }) as const,
      ),
    });
    throwIfUnread(oracles);
    records.forEach((r, i) => {
      const loanUsd = usdOf({ address: r.loanAddress, symbol: r.loan });
      const o = oracles[i]!;
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

/**
 * The USD prices of markets' tokens at past blocks by the file's feeds alone, by
 * `${block}:${uniqueKey}` (Fluid: its oracle is read at the pass only): a collateral no feed
 * prices keeps its market's ratio to the loan token. A block whose loan token no feed prices is
 * left out (the pass's prices serve).
 */
async function feedPricesAtBlocks(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  wanted: readonly { block: number; record: MarketRecord }[],
  feedSymbolOf: (t: Token) => string | null,
): Promise<PricedBlocks & { at: Map<string, LiquidationPrices> }> {
  const at = new Map<string, LiquidationPrices>();
  const walked = await atPricedBlocks(rpc, feeds, wanted, feedSymbolOf, (block, here, usdOf) => {
    for (const { record: r } of here) {
      const loanUsd = usdOf({ address: r.loanAddress, symbol: r.loan });
      const collateralUsd =
        usdOf({ address: r.collateralAddress, symbol: r.collateral }) ??
        (loanUsd !== null && r.loanPrice !== null && r.collateralPrice !== null && r.loanPrice > 0
          ? (r.collateralPrice / r.loanPrice) * loanUsd
          : null);
      at.set(`${block}:${r.uniqueKey}`, { loanUsd, collateralUsd });
    }
  });
  return { ...walked, at };
}

/**
 * The prices a liquidation in `r` is valued at, token by token: its block's (`at`) where read
 * there, else the market's (null where it has none, D15).
 */
function pricesAt(
  at: LiquidationPrices | null | undefined,
  r: Pick<MarketRecord, 'loanPrice' | 'collateralPrice'>,
): LiquidationPrices {
  return { loanUsd: at?.loanUsd ?? r.loanPrice, collateralUsd: at?.collateralUsd ?? r.collateralPrice };
}

/** The blocks a walk over past blocks could not price: left out (more than MAX_PRICED_BLOCKS) or unreadable. */
interface PricedBlocks {
  unread: number[];
  /** The first read's error (null: the unread blocks were only left out). */
  error: string | null;
}

/**
 * Walks the newest MAX_PRICED_BLOCKS distinct blocks of `items` (an RPC keeps recent state; older
 * ones are left out), handing `read` each block's items and the USD prices of the file's feeds
 * read at that block. A block whose read fails (a pruned node, a failed request) is left out: its
 * items are priced at the pass's prices.
 */
async function atPricedBlocks<T extends { block: number }>(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  items: readonly T[],
  feedSymbolOf: (t: Token) => string | null,
  read: (block: number, here: T[], usdOf: ReturnType<typeof pricer>) => void | Promise<void>,
): Promise<PricedBlocks> {
  const byBlock = new Map<number, T[]>();
  for (const item of items) {
    const here = byBlock.get(item.block);
    if (here) here.push(item);
    else byBlock.set(item.block, [item]);
  }
  const blocks = [...byBlock.keys()].sort((a, b) => a - b);
  const unread = blocks.slice(0, Math.max(0, blocks.length - MAX_PRICED_BLOCKS));
  let error: string | null = null;
  // Newest first: a node that no longer keeps a block's state keeps none of the older blocks', so
  // they are not asked (each refusal costs the transport's retries).
  const walk = blocks.slice(-MAX_PRICED_BLOCKS).reverse();
  for (const [i, block] of walk.entries()) {
    try {
      const usdOf = pricer((await readFeeds(rpc, feeds, BigInt(block))).readings, feedSymbolOf);
      await read(block, byBlock.get(block)!, usdOf);
    } catch (err) {
      // viem's first line of an RPC's refusal is generic: its details say why (a pruned node).
      const details = (err as { details?: unknown }).details;
      const why = `${firstLine(err as Error)}${typeof details === 'string' && details ? ` ${details.split('\n')[0]}` : ''}`;
      error ??= why;
      if (isMissingState(err)) {
        // The reason for most of the blocks left: the node's missing state.
        error = why;
        unread.push(...walk.slice(i));
        break;
      }
      unread.push(block);
    }
  }
  unread.sort((a, b) => a - b);
  return { unread, error };
}

/** The pass's item naming what a walk over past blocks could not price, or none. */
function unpricedBlocks(kind: string, what: string, r: PricedBlocks): ItemReport[] {
  if (r.unread.length === 0) return [];
  return [
    {
      id: `${kind}:prices-at-blocks`,
      ok: false,
      error: `${r.unread.length} ${what} blocks (${r.unread[0]} to ${r.unread.at(-1)}) priced at this pass's prices${r.error ? `: ${r.error}` : ` (more than ${MAX_PRICED_BLOCKS} blocks)`}`,
    },
  ];
}

function oracleUsd(m: MorphoMarketRead, loanUsd: number): number | null {
  return collateralUsdFromOracle(m.market.price, m.loan.decimals ?? 18, m.collateral.decimals ?? 18, loanUsd);
}

/**
 * The collateral's USD price from a Morpho oracle's `price()` (1 collateral wei in loan wei,
 * scaled by 1e36: per whole token, × 10^(collateral decimals − loan decimals)) and the loan's.
 */
function collateralUsdFromOracle(
  price: bigint | undefined,
  loanDecimals: number,
  collateralDecimals: number,
  loanUsd: number,
): number | null {
  if (price === undefined || price <= 0n) return null;
  return scaled(price, 36 + loanDecimals - collateralDecimals) * loanUsd;
}

/**
 * What no real pool's records hold (a figure not finite or negative, an lltv of 1 or more: a
 * contract anyone deployed may answer anything), or null: its pool is then not served.
 */
function implausible(out: {
  markets: readonly MarketRecord[];
  positions: readonly PositionRecord[];
}): string | null {
  try {
    checkMarketChanges(out.markets);
    checkPositionChanges(out.positions);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** An oracle whose price sources are not resolved (`Custom`), with why. */
function customOracle(address: string, warning: string): OracleRecord {
  return {
    address: address.toLowerCase(),
    type: 'Custom',
    provider: 'Unknown',
    feeds: [],
    isComposite: false,
    warnings: [warning],
  };
}

/**
 * An oracle record from the feeds behind it (null: its shape is not known), each with its last
 * update as read this pass; `address` is the oracle's (a comet's: the collateral's feed).
 */
function oracleRecord(
  address: string,
  feedAddresses: readonly string[] | null,
  byFeed: ReadonlyMap<string, FeedReading>,
  type: 'ChainlinkOracleV2' | 'ChainlinkOracle',
): OracleRecord {
  if (feedAddresses === null)
    return customOracle(address, 'Price source not identified; check the oracle contract');
  const feeds: OracleFeedRecord[] = [];
  const warnings: string[] = [];
  for (const feed of new Set(feedAddresses)) {
    const r = byFeed.get(feed);
    if (!r) {
      warnings.push(`Feed ${feed} did not answer`);
      continue;
    }
    feeds.push({
      address: feed,
      description: r.description,
      pair: r.feed.pair,
      heartbeatSeconds: r.feed.heartbeatSeconds,
      lastUpdateTimestamp: r.updatedAt,
      updateIntervalSeconds: null,
      deviationThreshold: r.feed.deviationThreshold,
    });
  }
  return {
    address: address.toLowerCase(),
    type,
    provider: 'Chainlink',
    feeds,
    isComposite: new Set(feedAddresses).size > 1,
    warnings: warnings.length > 0 ? warnings : null,
  };
}

/** A Morpho market's record; a price that is null (none known) leaves its USD amounts null (D15). */
function marketRecord(
  chainId: number,
  m: MorphoMarketRead,
  loanUsd: number | null,
  collateralUsd: number | null,
  oracle: OracleRecord,
): MarketRecord {
  const market = m.market;
  const loanDecimals = m.loan.decimals ?? 18;
  const supplyRate = MathLib.wMulUp(
    MathLib.wMulDown(m.borrowRate, market.utilization),
    MathLib.WAD - market.fee,
  );
  return {
    uniqueKey: morphoKey(chainId, m.id),
    protocol: 'morpho',
    chainId,
    label: null,
    collateral: m.collateral.symbol,
    collateralName: m.collateral.name,
    collateralAddress: m.collateral.address,
    loan: m.loan.symbol,
    loanName: m.loan.name,
    loanAddress: m.loan.address,
    collateralDecimals: m.collateral.decimals,
    loanDecimals,
    collateralPrice: collateralUsd,
    loanPrice: loanUsd,
    ...loanBalances(
      scaled(market.totalSupplyAssets, loanDecimals),
      scaled(market.totalBorrowAssets, loanDecimals),
      loanUsd,
    ),
    supplyApy: MarketUtils.rateToApy(supplyRate),
    borrowApy: MarketUtils.rateToApy(m.borrowRate),
    supplyRewardsApy: 0,
    borrowRewardsApy: 0,
    rewardTokens: [],
    lltv: scaled(m.params.lltv, 18),
    vaultSymbol: null,
    vaultAddress: null,
    governor: null,
    oracle,
  };
}

function positionRecord(
  record: PricedMarketRecord,
  market: Market,
  p: { user: string; supplyShares: bigint; borrowShares: bigint; collateral: bigint },
): PositionRecord {
  const collateralUsd = scaled(p.collateral, record.collateralDecimals ?? 18) * record.collateralPrice;
  const borrowUsd =
    scaled(market.toBorrowAssets(p.borrowShares), record.loanDecimals ?? 18) * record.loanPrice;
  const supplyUsd =
    scaled(market.toSupplyAssets(p.supplyShares), record.loanDecimals ?? 18) * record.loanPrice;
  // Morpho's own health factor where the oracle answers; else from the USD amounts.
  const hf =
    healthFactor(market, p) ??
    (borrowUsd > 0 ? (collateralUsd * record.lltv) / borrowUsd : Number.POSITIVE_INFINITY);
  return { marketKey: record.uniqueKey, user: p.user, collateralUsd, borrowUsd, supplyUsd, healthFactor: hf };
}
