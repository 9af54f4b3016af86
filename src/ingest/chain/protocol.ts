/**
 * What a protocol plugs into a chain source with (source.ts runs the pass): the events its
 * contracts log (the chain's shared log read takes them), its part of the checkpoint, and its
 * part of each pass: the addresses whose logs it takes, its read at the pass's block, the price
 * feeds its contracts name, then its records at the pass's prices. What every protocol does
 * alike is here too: keeping a pool's last records when it cannot be served this pass, refusing
 * records no real pool holds.
 */
import type { AbiEvent } from 'viem';
import type { LiquidationEvent } from '../../domain/records/history.ts';
import { isPriced, type MarketRecord, type PositionRecord, type VaultRecord } from '../../domain/types.ts';
import { checkMarketChanges, checkPositionChanges } from '../../store/position-changes.ts';
import { append } from '../append.ts';
import type { ItemReport, PreviousRun } from '../contract.ts';
import { NEAR_TOLERANCE } from '../live-writes.ts';
import type { ChainConfig } from '../sources-file.ts';
import type { Checkpoint } from './checkpoint.ts';
import type { PassPrices } from './pricing.ts';
import type { ChainRpc, SharedLogs } from './rpc.ts';

/**
 * How far a protocol's oracle may move from a record's price (a ratio, from when its positions
 * were last handed whole) before they are handed whole again: their health factors are the
 * protocol's, by its oracle, and are restated by the record's prices.
 */
export const ORACLE_DRIFT = NEAR_TOLERANCE / 2;

/** What a pass hands each protocol. */
export interface PassContext {
  chain: ChainConfig;
  rpc: ChainRpc;
  /** The block read: the head minus the confirmations. */
  target: bigint;
  /**
   * The last block whose logs are read: the target, or an earlier block while a first sync goes
   * step by step (chain sources' `syncBlocks`). Every account the logs up to it name is read at
   * the target.
   */
  logsTo: bigint;
  /** Its time, unix seconds. */
  timestamp: bigint;
  /**
   * The first block whose logs are read: after the last block read (or a reorganization's common
   * ancestor); null when the chain is read from its start (each protocol from its own).
   */
  resume: bigint | null;
  checkpoint: Checkpoint;
  /** What the last good pass left (its records as stored). */
  previous: PreviousRun | undefined;
  /** The pass's items, in order: a protocol adds its own. */
  items: ItemReport[];
  /**
   * Whether the stored checkpoint is this process's last pass (its block and hash): what the
   * process keeps (the accounts it read, or reads again after a reorganization) holds at least
   * what it names. False in a new process, and after another process wrote the last (or this
   * one's last, at another block, was not stored).
   */
  ownCheckpoint: boolean;
  /** Accounts (or positions) a protocol keeps in the checkpoint for later, at most, in each list it keeps (MAX_PENDING by default). */
  maxPending: number;
  /** A contract's deployment block (searched once per process). */
  deployedAt(address: string): Promise<bigint>;
  /** Where a contract's logs start: the file's `fromBlock`, else its deployment (deployedAt). */
  startOf(fromBlock: number | null, address: string): Promise<bigint>;
  /**
   * The logs a contract reads this pass while the chain resumes without it (added to the file
   * later, or read again from its start): from where its walk stopped, else from `start()`, at most
   * `syncBlocks` blocks, not past `logsTo`. `key` names the contract (and the configuration it is
   * read with) across passes. Once its logs are read (`read()`), a walk that has not reached
   * `logsTo` (`caughtUp` false) goes on at the next pass, kept in the checkpoint, and the chain
   * reports it as syncing; one that has resumes with the others. `fromStart`: from `start()` even
   * where a stored walk stopped (what the process held of the logs read before is gone).
   */
  walk(key: string, start: () => Promise<bigint>, fromStart?: boolean): Promise<ContractWalk>;
}

/** A contract's logs read this pass by its own walk (PassContext.walk). */
export interface ContractWalk {
  fromBlock: bigint;
  toBlock: bigint;
  /** It reads through the pass's `logsTo`: from the next pass on it resumes with the others. */
  caughtUp: boolean;
  /** Its logs from `fromBlock` to `toBlock` were read (not called: the next pass reads them again). */
  read(): void;
  /**
   * The walk ends with its logs unread (the contract could not be read this pass): the contract
   * keeps where its logs start again itself, and the chain no longer reports it as syncing.
   */
  end(): void;
}

/** A protocol on one chain, for the life of its chain source: what it keeps between passes. */
export interface ProtocolAdapter {
  /** The events of its contracts' logs, in the chain's shared read. */
  readonly events: readonly AbiEvent[];
  /**
   * Where its contracts' logs start when the chain is read from its start: the file's block, else
   * the deployment of `address` (null: its reader finds the contracts, and their deployments, as
   * it reads).
   */
  readonly starts: readonly { fromBlock: number | null; address: string | null }[];
  /** Whether a checkpoint was written with this configuration (if not, the chain is read again). */
  sameConfig(checkpoint: Checkpoint): boolean;
  /**
   * Forgets what the process kept (the chain is read from its start, or reorganized). `reread`
   * (a reorganization): every account it knew is read again, until a pass succeeds.
   */
  forget(reread: boolean): void;
  begin(ctx: PassContext): ProtocolPass;
  /**
   * The pass succeeded: accounts read empty at or before `block` are forgotten (what the process
   * keeps grows with the positions), and those a reorganization left to read were read.
   */
  settle(block: number): void;
  /** Accounts the process keeps between passes. */
  accountsKept(): number;
}

/** A protocol's part of one pass. */
export interface ProtocolPass {
  /** The addresses whose logs it takes from the chain's shared read (a pass that resumes). */
  readonly logAddresses: readonly string[];
  /** Reads the protocol at the pass's block; what fails is named in the pass's items. */
  read(shared: SharedLogs | undefined): Promise<void>;
  /** The price feeds its contracts name (read with the file's, for their oracles' records). */
  namedFeeds(): string[];
  /** Its records at the pass's prices. */
  assemble(out: Assembly): Promise<void>;
  /** Its part of the checkpoint this pass writes (every field, whatever was read). */
  checkpoint(): Record<string, unknown>;
  /** Positions read from the chain this pass (the others were known unchanged). */
  positionsRead(): number;
  /** Vaults read from the chain this pass (the others were known unchanged); none if it reads none. */
  vaultsRead?(): number;
}

/** An item served: whole, or in part with what `note` says (docs/decisions.md "Real sources"). */
export function servedItem(id: string, note: string | null): ItemReport {
  return note ? { id, ok: true, note } : { id, ok: true };
}

/**
 * What no real pool's records hold (a figure not finite or negative, an lltv of 1 or more: a
 * contract anyone deployed may answer anything), or null: its pool is then not served.
 */
export function implausible(out: {
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

/** A pass's records as each protocol adds its own, at the pass's prices. */
export class Assembly {
  readonly ctx: PassContext;
  readonly prices: PassPrices;
  readonly markets: MarketRecord[] = [];
  readonly positions: PositionRecord[] = [];
  /**
   * The markets whose positions are handed in part: those read this pass (one read empty at
   * zero); the others stay as stored (SourceOutput's `records.partial`).
   */
  readonly partial = new Set<string>();
  /** The vaults lending into the markets (Euler's vaults: each lends to its collaterals' markets). */
  readonly vaults: VaultRecord[] = [];
  readonly liquidations: LiquidationEvent[] = [];
  /** The last pass's markets by key. */
  readonly previousMarkets: ReadonlyMap<string, MarketRecord>;

  constructor(ctx: PassContext, prices: PassPrices) {
    this.ctx = ctx;
    this.prices = prices;
    this.previousMarkets = new Map((ctx.previous?.markets ?? []).map((m) => [m.uniqueKey, m]));
  }

  /**
   * Markets kept as the last pass served them (their pool or vault could not be read): their
   * positions stay as stored, handed in part with none handed. (Those this process last handed
   * of a market handed in part since are as of the pass that read them, not of the record kept:
   * handed again with it, they would be served at that pass's prices.)
   */
  keep(markets: readonly MarketRecord[]): void {
    append(this.markets, markets);
    for (const m of markets) this.partial.add(m.uniqueKey);
  }

  /** A pool's records served this pass. */
  serve(out: { markets: readonly MarketRecord[]; positions: readonly PositionRecord[] }): void {
    append(this.markets, out.markets);
    append(this.positions, out.positions);
  }

  /**
   * Why a pool's fresh records are not served, or null: `why` it lacks a price, when that loses
   * a price the last pass served (a market once priced is never served without one: the pool
   * keeps its last records), else what no real pool holds.
   */
  refusal(
    out: { markets: readonly MarketRecord[]; positions: readonly PositionRecord[] },
    why: string | null,
  ): string | null {
    return why && this.#lostPrice(out.markets) ? why : implausible(out);
  }

  /** Whether a pool's fresh records leave a market unpriced that the last pass served priced. */
  #lostPrice(fresh: readonly MarketRecord[]): boolean {
    return fresh.some((m) => {
      const last = this.previousMarkets.get(m.uniqueKey);
      return !isPriced(m) && last !== undefined && isPriced(last);
    });
  }

  /**
   * The pools named failed this pass (`<kind>:0x…`: a pool as a whole, not an account or a
   * check, `0x…:…`) keep their last records, into `served`.
   */
  keepFailedPools(kind: 'compound' | 'euler' | 'aave' | 'spark', served: Map<string, MarketRecord>): void {
    const { chain, items, previous } = this.ctx;
    for (const item of items)
      if (!item.ok && item.id.startsWith(`${kind}:`)) {
        const id = item.id.slice(kind.length + 1);
        if (!id.includes(':')) {
          this.#keepPool(`${kind}-${chain.chainId}-${id}_`, served);
          // An Euler vault's own record too, as the last pass served it.
          for (const v of previous?.vaults ?? [])
            if (v.address === id && v.protocol === kind) this.vaults.push(v);
        }
      }
  }

  /**
   * A pooled protocol's pool (a comet, an Euler vault) that cannot be served this pass keeps
   * what the last pass served of its markets (`<protocol>-<chainId>-<pool>_…`), into `served`
   * (`keep`: their positions as stored).
   */
  #keepPool(prefix: string, served: Map<string, MarketRecord>): void {
    const previous = this.ctx.previous;
    // (A kept record is checked again: one stored before the check existed may hold what no
    // pool has.)
    const keptMarkets = (previous?.markets ?? []).filter(
      (m) =>
        m.uniqueKey.startsWith(prefix) &&
        !served.has(m.uniqueKey) &&
        implausible({ markets: [m], positions: [] }) === null,
    );
    for (const m of keptMarkets) served.set(m.uniqueKey, m);
    this.keep(keptMarkets);
  }
}
