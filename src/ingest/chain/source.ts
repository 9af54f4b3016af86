/**
 * One chain as a source (`chain:<chainId>`): each run reads the chain at its head minus the
 * confirmations, Chainlink feeds, Morpho Blue, Aave v3 and Spark pools, Compound v3 comets,
 * Euler v2 and Fluid, and hands ingestion the chain's markets and positions as records (USD at
 * the feeds' prices, health factors by each protocol's own math), the liquidations and oracle
 * rounds seen, and the block reached.
 *
 * This is the pass: the head and a reorganization (checkpoint.ts keeps the recent blocks), one
 * log read every protocol takes its part of, each protocol's read, the feeds its contracts name
 * read with the file's (pricing.ts), then each protocol's records at those prices, the rounds
 * published, and the checkpoint. Each protocol is one adapter behind one interface (protocol.ts),
 * beside its reader: morpho-pass.ts, compound-pass.ts, euler-pass.ts, aave-pass.ts,
 * fluid-pass.ts.
 */

import { must } from '../../domain/must.ts';
import { estimateSeconds, type LogWalkProgress } from '../../domain/pass-state.ts';
import { type ChainSync, chainSyncOf } from '../../domain/records/sources.ts';
import type { MarketRecord, VaultRecord } from '../../domain/types.ts';
import type { ItemReport, PreviousRun, Source, SourceOutput } from '../contract.ts';
import type { RefChainlinkFeed, RefToken } from '../sandbox/reference.ts';
import type { ChainConfig } from '../sources-file.ts';
import { aaveAdapter } from './aave-pass.ts';
import { ANSWER_UPDATED } from './chainlink.ts';
import {
  type Checkpoint,
  canonicalAncestor,
  MAX_PENDING,
  RECENT_BLOCKS,
  readCheckpoint,
  writeCheckpoint,
} from './checkpoint.ts';
import { compoundAdapter } from './compound-pass.ts';
import { eulerAdapter } from './euler-pass.ts';
import { fluidAdapter } from './fluid-pass.ts';
import { morphoAdapter } from './morpho-pass.ts';
import { ChainFeeds, recordPriceSources, tokenSymbols } from './pricing.ts';
import { Assembly, type PassContext, type ProtocolAdapter } from './protocol.ts';
import {
  type ChainRpc,
  deploymentBlock,
  getLogsAdaptive,
  INITIAL_LOG_RANGE,
  type LogWalk,
  type SharedLogs,
} from './rpc.ts';

/** What the last run of a chain source cost, for the logs and the bench. */
export interface ChainRunStats {
  block: number;
  rpcRequests: number;
  markets: number;
  /** Positions handed: every one of a market handed whole, those read of one handed in part. */
  positions: number;
  /** Positions read from the chain (the others were known unchanged: no event touched them). */
  positionsRead: number;
  /** Vaults read from the chain (MetaMorpho: the others had no log of their own). */
  vaultsRead: number;
  /** Whether the pass read the chain's state (false: nothing of ours logged, and the state read last is young). */
  stateRead: boolean;
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

/** Blocks read again before a reorganization's common ancestor for its rounds (fast chains share a second among blocks). */
const SAME_SECOND_BLOCKS = 17n;

/** What the last pass that read a chain's state handed, handed again by a pass that reads none. */
interface StateRead {
  /** Its block's time, unix seconds. */
  timestamp: bigint;
  markets: MarketRecord[];
  vaults: VaultRecord[];
  /** The protocols' parts of its checkpoint. */
  parts: Record<string, unknown>[];
}

/** How a chain source keeps what it reads for later. */
export interface ChainSourceOptions {
  /** Accounts (or positions) each protocol keeps in the checkpoint for later, at most, in each list it keeps: a positive integer, MAX_PENDING by default. */
  maxPending?: number;
}

export function chainSource(
  chain: ChainConfig,
  rpc: ChainRpc,
  reference: ChainReference = { feeds: [], tokens: [] },
  options: ChainSourceOptions = {},
): ChainSource {
  const maxPending = options.maxPending ?? MAX_PENDING;
  if (!Number.isSafeInteger(maxPending) || maxPending < 1)
    throw new RangeError(`maxPending must be a positive integer, not ${maxPending}`);
  let last: ChainRunStats | null = null;
  /** The hash of the last block this process read (`last.block`). */
  let lastHash: string | null = null;
  let stateRead: StateRead | null = null;
  // The calls answered when the run under way began; null: none is.
  let calls0: number | null = null;
  // The protocols in the order their records are assembled (and their logs' events listed).
  const adapters: ProtocolAdapter[] = [
    morphoAdapter(chain),
    compoundAdapter(chain),
    eulerAdapter(chain),
    aaveAdapter(chain),
    fluidAdapter(chain),
  ];
  const feeds = new ChainFeeds(chain, rpc, reference.feeds, tokenSymbols(chain.chainId, reference.tokens));
  // Deployment blocks found (searched once per process: a contract whose reads fail, a pool not
  // listed, is read from its start again without searching again), and those being searched
  // (asked twice at once: one search). None yet, or a search that failed: searched again.
  const deployments = new Map<string, Promise<bigint>>();
  const deployedAt = (address: `0x${string}`, head: bigint): Promise<bigint> => {
    const known = deployments.get(address);
    if (known !== undefined) return known;
    const search = deploymentBlock(rpc, address, head);
    deployments.set(address, search);
    const forget = () => {
      if (deployments.get(address) === search) deployments.delete(address);
    };
    search.then((block) => {
      if (block >= head) forget();
    }, forget);
    return search;
  };
  return {
    id: `chain:${chain.chainId}`,
    kind: 'chain',
    chainIds: [chain.chainId],
    // What it reads: its chain's records but Morpho's markets where it does not read Morpho Blue,
    // and Morpho's vaults where it reads no MetaMorpho factory (the Morpho API's, when it names
    // the chain).
    owns: (r, kind) =>
      r.chainId === chain.chainId &&
      (r.protocol !== 'morpho' ||
        (kind === 'market' ? chain.morpho !== null : (chain.morpho?.vaultFactories.length ?? 0) > 0)),
    lastRun: () => last,
    progress() {
      if (calls0 === null) return null;
      return {
        source: `chain:${chain.chainId}`,
        callsAnswered: rpc.callsAnswered() - calls0,
        // (The walks' times are the RPC's clock's: so is their elapsed time.)
        logWalks: [...rpc.walks].map((w) => walkProgress(w, rpc.now())),
      };
    },
    async run(nowMs: number, previous?: PreviousRun): Promise<SourceOutput> {
      calls0 = rpc.callsAnswered();
      try {
        return await pass(nowMs, previous);
      } finally {
        calls0 = null;
      }
    },
  };

  async function pass(nowMs: number, previous: PreviousRun | undefined): Promise<SourceOutput> {
    const requests0 = rpc.requests();
    const latest = await rpc.client.getBlock({ blockTag: 'latest' });
    const confirmations = BigInt(chain.confirmations);
    const target = latest.number > confirmations ? latest.number - confirmations : 0n;
    const block = target === latest.number ? latest : await rpc.client.getBlock({ blockNumber: target });
    const items: ItemReport[] = [];
    const checkpoint = readCheckpoint(previous?.state?.cursor ?? null);
    // A checkpoint of another configuration (another Morpho address or start block, another
    // Euler EVC) is not this source's: read again.
    const sameConfig = adapters.every((a) => a.sameConfig(checkpoint));
    const lastBlock = sameConfig ? previous?.state?.lastBlock[String(chain.chainId)] : undefined;
    // A sync under way: the logs read so far end before the last block read.
    const sync = sameConfig && lastBlock !== undefined ? chainSyncOf(checkpoint.parts['sync']) : null;
    // Where the logs are read from: after the last block read, if it is still on the chain;
    // after the newest block read that is (the common ancestor) if the chain reorganized; from
    // the start if none is (a reset local chain, a reorganization deeper than RECENT_BLOCKS).
    let recent = sameConfig ? checkpoint.recent : [];
    let resume: bigint | null = null;
    let reorg: SourceOutput['reorg'];
    if (!sameConfig && previous?.state?.lastBlock[String(chain.chainId)] !== undefined) {
      // Another configuration: what was read with the old one goes.
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
        const fromBlock = ancestor === null ? firstBlock(adapters) : ancestor + 1;
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
    // it knew included (one the orphaned blocks emptied is no position now, but is again). So
    // too when the last pass stored is not this process's last (another process ingested
    // meanwhile, or this one's last was not stored): what it kept may predate blocks it did not
    // read.
    const ours =
      last !== null &&
      lastBlock === last.block &&
      checkpoint.recent.find(([n]) => n === lastBlock)?.[1] === lastHash;
    if (resume !== null && !reorg && last !== null && !ours) for (const a of adapters) a.forget(true);
    if (resume === null || reorg) {
      for (const a of adapters) a.forget(resume !== null);
      // A chain read again from the start (reset, or reorganized past the checkpoint) may hold
      // its contracts at other blocks.
      if (resume === null) deployments.clear();
    }
    // The state is read at the target; the logs are read on from where they stopped, at most
    // `syncBlocks` of them a pass while the chain is behind (each pass is stored with its
    // checkpoint: a restart goes on from the last one). An account is read at the target once
    // the logs name it, and again when later logs do.
    const stateResume = resume;
    // (A chain read again from its start begins a sync anew.)
    const going = resume !== null ? sync : null;
    if (resume !== null && going && going.throughBlock + 1 < Number(resume))
      resume = BigInt(going.throughBlock + 1);
    const logsFrom = resume ?? (await firstLogBlock(adapters, deployedAt, target));
    const logsTo =
      logsFrom + BigInt(chain.syncBlocks) - 1n < target ? logsFrom + BigInt(chain.syncBlocks) - 1n : target;
    // A catch-up begins (a long stop of a process that kept what it read): every account it knew
    // is read at the target, as a process started anew would, rather than served as of its last
    // read until the logs reach it.
    const catchUp = resume !== null && !going && logsTo < target;
    if (catchUp) for (const a of adapters) a.forget(true);
    // The walks of contracts read from their own start while the chain resumes (added to the file
    // later): each goes on where the last pass stored left it (a reorganization's orphaned blocks
    // read again). One not asked for again this pass (gone from the file) ends.
    const walksBefore =
      resume === null ? new Map<string, Walk>() : walksOf(checkpoint.parts['walks'], resume);
    const walks = new Map<string, Walk>();
    const ctx: PassContext = {
      chain,
      rpc,
      target,
      logsTo,
      timestamp: block.timestamp,
      resume,
      checkpoint,
      previous,
      items,
      ownCheckpoint: ours,
      maxPending,
      deployedAt: (address) => deployedAt(address as `0x${string}`, target),
      startOf: async (fromBlock, address) =>
        fromBlock !== null ? BigInt(fromBlock) : deployedAt(address as `0x${string}`, target),
      async walk(key, start, fromStart = false) {
        const was = fromStart ? undefined : walksBefore.get(key);
        // (Asked for again, a walk is kept as it was until its logs are read.)
        if (was) walks.set(key, was);
        const fromBlock = was ? BigInt(was.throughBlock + 1) : await start();
        const last = fromBlock + BigInt(chain.syncBlocks) - 1n;
        const toBlock = last < logsTo ? last : logsTo;
        const caughtUp = toBlock >= logsTo;
        return {
          fromBlock,
          toBlock,
          caughtUp,
          end: () => walks.delete(key),
          read() {
            if (caughtUp) walks.delete(key);
            else
              walks.set(key, {
                fromBlock: was?.fromBlock ?? Number(fromBlock),
                throughBlock: Number(toBlock),
                startedAt: was?.startedAt ?? Math.floor(nowMs),
              });
          },
        };
      },
    };
    const passes = adapters.map((a) => a.begin(ctx));

    // After the first pass every reader resumes at the same block: the logs of every protocol's
    // contracts already read and of the feeds' publishers (as the last pass found them) are read
    // in one eth_getLogs, which each reader takes its part of. Over more blocks than one request
    // asks for (a pass after a long stop), each reader walks its own instead, taking its logs
    // range by range: the shared read would hold them all at once.
    let shared: SharedLogs | undefined;
    if (resume !== null && resume <= logsTo && logsTo - resume < INITIAL_LOG_RANGE) {
      const addresses = [...passes.flatMap((p) => p.logAddresses), ...feeds.publishers].map((a) =>
        a.toLowerCase(),
      );
      if (addresses.length > 0)
        shared = {
          fromBlock: resume,
          toBlock: logsTo,
          addresses: new Set(addresses),
          logs: await getLogsAdaptive(rpc, {
            what: 'shared',
            address: addresses as `0x${string}`[],
            events: [...adapters.flatMap((a) => a.events), ANSWER_UPDATED],
            fromBlock: resume,
            toBlock: logsTo,
          }),
        };
    }
    // Nothing of ours logged in the pass's blocks (no protocol's contract, no feed's publisher),
    // this process read every block since its last pass, and the state it read last is younger
    // than `stateMaxAgeSeconds`: the state is not read again. What it does not read changes with
    // time alone (interest accrued: 1 part in 10.5 million in 30 s at 10 % a year) or with
    // contracts that are not ours (an oracle's vault conversion, a pull oracle): both are read
    // again once the state is that old. (So is an item the last read could not read: a revert
    // reverts again until the state changes, and anyone can make one fail every pass, such as
    // a market whose oracle burns its gas: retrying it every block would undo the saving.)
    // (A pass with no new block is one too: the state at its block was read.)
    // The pass ends (its state read or not): the block read joins the recent ones, the accounts
    // read empty that no reorganization can undo any more are forgotten, and its figures kept.
    const ended = (figures: Omit<ChainRunStats, 'block' | 'rpcRequests' | 'accountsKept'>): ChainRunStats => {
      recent = nextRecent(recent, target, block.hash);
      lastHash = block.hash;
      for (const a of adapters) a.settle(settled(recent, checkpoint));
      last = {
        block: Number(target),
        rpcRequests: rpc.requests() - requests0,
        ...figures,
        accountsKept: adapters.reduce((n, a) => n + a.accountsKept(), 0),
      };
      return last;
    };
    const kept = stateRead;
    const noNewBlock = stateResume !== null && stateResume > target;
    // Whether the shared read covers the pass's blocks and holds nothing of ours, nor do the
    // logs of the feeds that oracles name (read apart: the pass's rounds take theirs from them).
    let apart = null as SharedLogs | null;
    const nothingLogged = async (): Promise<boolean> => {
      if (!shared || shared.logs.length > 0 || shared.fromBlock !== stateResume || shared.toBlock !== target)
        return false;
      apart = await feeds.apart(shared);
      return apart === null || apart.logs.length === 0;
    };
    if (
      kept &&
      ours &&
      !reorg &&
      !catchUp &&
      block.timestamp - kept.timestamp < BigInt(chain.stateMaxAgeSeconds) &&
      (noNewBlock || (await nothingLogged()))
    ) {
      ended({
        markets: kept.markets.length,
        positions: 0,
        positionsRead: 0,
        vaultsRead: 0,
        stateRead: false,
      });
      return {
        // Every market handed in part, none of its positions read: they stay as stored.
        records: {
          markets: kept.markets,
          positions: [],
          vaults: kept.vaults,
          partial: new Set(kept.markets.map((m) => m.uniqueKey)),
        },
        liquidations: [],
        rounds: [],
        blocks: { [String(chain.chainId)]: Number(target) },
        head: { [String(chain.chainId)]: Number(latest.number) },
        cursor: writeCheckpoint(recent, kept.parts),
        sync: { [String(chain.chainId)]: null },
        items: [],
        stateUnread: true,
      };
    }
    stateRead = null;
    // The protocols are read at once: each reader's requests follow one another, and together
    // they fill the transport's batches rather than wait on the provider one protocol after
    // another. (Their items come in the order they are found.) One that fails fails the pass,
    // once every read has ended: none goes on into the next pass.
    const reads = await Promise.allSettled(passes.map((p) => p.read(shared)));
    for (const r of reads) if (r.status === 'rejected') throw r.reason;

    // Feeds: those of the file, and those the protocols' contracts name.
    const prices = await feeds.read(
      target,
      passes.flatMap((p) => p.namedFeeds()),
      items,
    );
    const out = new Assembly(ctx, prices);
    for (const p of passes) await p.assemble(out);

    // The rounds since the last block read (not since the logs' end: the feeds are read at every
    // target). After a reorganization the rounds from the common ancestor's second on were
    // dropped: they are read again from the ancestor and the blocks before it that may share its
    // second.
    const roundsFrom =
      stateResume !== null && reorg
        ? stateResume > SAME_SECOND_BLOCKS + 1n
          ? stateResume - 1n - SAME_SECOND_BLOCKS
          : 0n
        : stateResume;
    const rounds = await feeds.rounds(
      prices,
      roundsFrom === null ? null : { fromBlock: roundsFrom, toBlock: target },
      shared,
      apart,
    );
    const parts = passes.map((p) => p.checkpoint());
    const run = ended({
      markets: out.markets.length,
      positions: out.positions.length,
      positionsRead: passes.reduce((n, p) => n + p.positionsRead(), 0),
      vaultsRead: passes.reduce((n, p) => n + (p.vaultsRead?.() ?? 0), 0),
      stateRead: true,
    });
    recordPriceSources(out.markets, new Set(previous?.markets ?? []), prices.feedPriceOf);
    const chainSync: ChainSync | null =
      logsTo < target
        ? {
            // (A reorganization below its first block moves it back.)
            fromBlock: Math.min(going?.fromBlock ?? Number(logsFrom), Number(logsFrom)),
            throughBlock: Number(logsTo),
            toBlock: Number(target),
            startedAt: going?.startedAt ?? Math.floor(nowMs),
            accounts: run.accountsKept,
          }
        : null;
    // Contracts still walking their logs are a sync of the chain too: the least advanced is
    // reported, whole (its start, progress and pace: its estimate).
    const least = [...walks.values(), ...(chainSync ? [chainSync] : [])].reduce<Walk | null>(
      (a, w) => (a === null || w.throughBlock < a.throughBlock ? w : a),
      null,
    );
    const syncing: ChainSync | null =
      least !== null
        ? {
            fromBlock: least.fromBlock,
            throughBlock: least.throughBlock,
            toBlock: Number(target),
            startedAt: least.startedAt,
            accounts: run.accountsKept,
          }
        : null;
    if (!syncing)
      stateRead = {
        timestamp: block.timestamp,
        markets: out.markets,
        vaults: out.vaults,
        parts,
      };
    if (syncing)
      items.push({
        id: `sync:${chain.chainId}`,
        ok: true,
        note: [
          ...(chainSync ? [`syncing: logs read through block ${logsTo} of ${target}`] : []),
          ...[...walks].map(
            ([key, w]) =>
              `syncing: the logs of ${key} (added later) read through block ${w.throughBlock} of ${target}`,
          ),
        ]
          .concat('accounts named by later logs are not served yet')
          .join('; '),
      });
    return {
      records: { markets: out.markets, positions: out.positions, vaults: out.vaults, partial: out.partial },
      liquidations: out.liquidations,
      rounds,
      blocks: { [String(chain.chainId)]: Number(target) },
      head: { [String(chain.chainId)]: Number(latest.number) },
      ...(reorg ? { reorg } : {}),
      cursor: writeCheckpoint(recent, [
        ...parts,
        ...(walks.size > 0 ? [{ walks: Object.fromEntries(walks) }] : []),
        ...(chainSync ? [{ sync: chainSync }] : []),
      ]),
      sync: { [String(chain.chainId)]: syncing },
      items,
    };
  }
}

/** A contract's walk under way (PassContext.walk), as its checkpoint keeps it. */
interface Walk {
  fromBlock: number;
  throughBlock: number;
  /** When it began, epoch ms. */
  startedAt: number;
}

/**
 * The walks a checkpoint holds (one that does not read is dropped: the contract is read from its
 * start again), none past `resume`: a reorganization's orphaned blocks are read again.
 */
function walksOf(part: unknown, resume: bigint): Map<string, Walk> {
  const out = new Map<string, Walk>();
  if (typeof part !== 'object' || part === null) return out;
  for (const [key, w] of Object.entries(part)) {
    const sync = chainSyncOf({ ...(w as object), toBlock: Number.MAX_SAFE_INTEGER, accounts: 0 });
    const throughBlock = sync ? Math.min(sync.throughBlock, Number(resume) - 1) : -1;
    // (One whose every block read was orphaned starts again.)
    if (sync && throughBlock >= sync.fromBlock)
      out.set(key, { fromBlock: sync.fromBlock, throughBlock, startedAt: sync.startedAt });
  }
  return out;
}

/** The recent blocks kept after a pass read `target` (whose hash is `hash`). */
function nextRecent(recent: Checkpoint['recent'], target: bigint, hash: string | null): [number, string][] {
  return [
    ...recent.filter(([n]) => n < Number(target)),
    [Number(target), must(hash, `hash of block ${target}`)] as [number, string],
  ].slice(-RECENT_BLOCKS);
}

/**
 * The block up to which accounts read empty are forgotten: the oldest a reorganization can roll
 * back to (what the process keeps grows with the positions, not with every account named), not
 * past the oldest of the stored checkpoint (this pass may yet fail to be stored).
 */
function settled(recent: Checkpoint['recent'], checkpoint: Checkpoint): number {
  const [oldest] = must(recent[0], 'recent block');
  return Math.min(oldest, checkpoint.recent[0]?.[0] ?? Number.POSITIVE_INFINITY);
}

/** A log walk under way as /health shows it, its estimate at the pace so far. */
function walkProgress(w: LogWalk, nowMs: number): LogWalkProgress {
  const blocksTotal = w.toBlock - w.fromBlock + 1;
  const blocksDone = w.reached - w.fromBlock + 1;
  return {
    what: w.what,
    fromBlock: w.fromBlock,
    toBlock: w.toBlock,
    reachedBlock: w.reached,
    blocksDone,
    blocksTotal,
    logs: w.logs,
    estimateSeconds: estimateSeconds(blocksDone, blocksTotal, nowMs - w.startedAtMs),
  };
}

/** The first block any of the chain's protocols is read from (0 for a contract's deployment). */
function firstBlock(adapters: readonly ProtocolAdapter[]): number {
  const starts = adapters.flatMap((a) => a.starts.map((s) => s.fromBlock ?? 0));
  return starts.length === 0 ? 0 : Math.min(...starts);
}

/**
 * The first block whose logs a chain read from its start reads: the lowest of its protocols'
 * starts, a deployment searched where the file gives none (a contract its reader finds as it
 * reads counts for nothing); the target when there is none.
 */
async function firstLogBlock(
  adapters: readonly ProtocolAdapter[],
  deployedAt: (address: `0x${string}`, head: bigint) => Promise<bigint>,
  target: bigint,
): Promise<bigint> {
  // (The deployments searched at once: each search is a few dozen requests one after the other.
  // One that fails fails the pass once all have ended.)
  const settled = await Promise.allSettled(
    adapters.flatMap((a) =>
      a.starts.map((s) =>
        s.fromBlock !== null
          ? BigInt(s.fromBlock)
          : s.address !== null
            ? deployedAt(s.address as `0x${string}`, target)
            : target,
      ),
    ),
  );
  let first = target;
  for (const s of settled) {
    if (s.status === 'rejected') throw s.reason;
    if (s.value < first) first = s.value;
  }
  return first;
}
