/**
 * MetaMorpho vaults on one chain, read from their contracts: each vault found by its factory's
 * `CreateMetaMorpho` log (a contract the factory made, not one anyone deployed that answers the
 * same views), then its roles, fee, timelock, queues, each enabled market's cap and what is
 * pending, and its supply shares in each market.
 *
 * A vault's state changes only by its own transactions, each of which logs an event of the vault:
 * a pass reads again only the vaults whose logs its blocks hold (and every vault once per
 * process). Its supply in assets moves with its markets' interest: records.ts values its shares
 * at each market's state of the pass, with no request.
 */
import { blueAbi, metaMorphoAbi } from '@morpho-org/blue-sdk-viem';
import { type AbiEvent, BaseError, ContractFunctionZeroDataError, parseAbiItem, zeroAddress } from 'viem';
import { must } from '../../domain/must.ts';
import {
  type ChainRpc,
  firstLine,
  getLogsAdaptive,
  type SharedLogs,
  sharedLogsOf,
  takeLogs,
  throwIfUnread,
} from './rpc.ts';
import { keepTokens, type TokenMeta, tokenCalls } from './tokens.ts';

type Hex = `0x${string}`;

/** MetaMorpho's factories (v1.0 and v1.1 alike) log each vault they create. */
export const CREATE_METAMORPHO = parseAbiItem(
  'event CreateMetaMorpho(address indexed metaMorpho, address indexed caller, address initialOwner, uint256 initialTimelock, address indexed asset, string name, string symbol, bytes32 salt)',
);

/** Every event of a vault that follows a change of what is read of it. */
const CHANGES = new Set([
  'Deposit',
  'Withdraw',
  'ReallocateSupply',
  'ReallocateWithdraw',
  'SubmitCap',
  'SetCap',
  'RevokePendingCap',
  'SubmitMarketRemoval',
  'RevokePendingMarketRemoval',
  'SetSupplyQueue',
  'SetWithdrawQueue',
  'SubmitTimelock',
  'SetTimelock',
  'RevokePendingTimelock',
  'SubmitGuardian',
  'SetGuardian',
  'RevokePendingGuardian',
  'SetCurator',
  'SetFee',
  'SetFeeRecipient',
  'OwnershipTransferred',
  'SetName',
  'SetSymbol',
  'UpdateLastTotalAssets',
]);
export const METAMORPHO_EVENTS: readonly AbiEvent[] = metaMorphoAbi.filter(
  (x): x is Extract<(typeof metaMorphoAbi)[number], { type: 'event' }> =>
    x.type === 'event' && CHANGES.has(x.name),
);

/** MetaMorpho's queues hold at most 30 markets; a longer claim is not a MetaMorpho vault's. */
const MAX_QUEUE = 30;

/** One market of a vault as read: its config, pending cap and supply shares (and the market's totals). */
export interface VaultMarketRead {
  cap: bigint;
  enabled: boolean;
  /** Unix seconds from which the market may be removed; 0: not submitted for removal. */
  removableAt: bigint;
  pendingCap: bigint;
  /** Unix seconds from which the pending cap may be accepted; 0: none pending. */
  pendingCapValidAt: bigint;
  supplyShares: bigint;
  /** The market's supply totals at the block read (values the shares of a market no pass reads: idle). */
  totalSupplyAssets: bigint;
  totalSupplyShares: bigint;
}

export interface VaultRead {
  address: string;
  asset: TokenMeta;
  name: string;
  symbol: string;
  curator: string | null;
  owner: string;
  guardian: string | null;
  feeRecipient: string | null;
  /** WAD. */
  fee: bigint;
  timelock: bigint;
  pendingTimelock: { value: bigint; validAt: bigint };
  pendingGuardian: { value: string; validAt: bigint };
  supplyQueue: string[];
  withdrawQueue: string[];
  markets: Map<string, VaultMarketRead>;
  /** v1.1's lost assets; null when the vault does not answer (v1.0). */
  lostAssets: bigint | null;
  block: number;
}

/**
 * Vaults read per chain at most: a factory makes a vault for anyone who asks, for gas alone, and
 * each is read once per process and watched in every pass's logs. (Ethereum has hundreds.)
 */
export const MAX_VAULTS = 5_000;

/** What a chain source keeps of its vaults between passes in one process. */
export class MetaMorphoCache {
  readonly #limit: number;
  /** Vaults found past the limit (not read), counted from the chain's start. */
  beyondLimit = 0;

  constructor(limit = MAX_VAULTS) {
    this.#limit = limit;
  }

  /** A vault a factory's log names: read from now on, unless the chain's limit is reached. */
  found(vault: string): void {
    if (this.vaults.has(vault)) return;
    if (this.vaults.size >= this.#limit) this.beyondLimit++;
    else this.vaults.set(vault, null);
  }

  /** Every vault found (by its factory's log), by address, as last read; null: not read yet. */
  readonly vaults = new Map<string, VaultRead | null>();
  /** Vaults that do not lend into the chain's Morpho Blue: never read, by why. */
  readonly refused = new Map<string, string>();
  readonly tokens = new Map<string, TokenMeta>();
  /**
   * Per vault: markets outside its queues it submitted a cap for (a market it is about to add),
   * read with its queues' until the cap is accepted (then queued) or revoked, and no
   * reorganization can undo that (the log that named it may be older than the blocks read again).
   */
  readonly submitted = new Map<string, Set<string>>();
  /** `${vault}:${id}` of a submitted cap found accepted or revoked: the block it was read at. */
  readonly doneAt = new Map<string, number>();

  /**
   * Watches a market outside a vault's queues it submitted a cap for, at most MAX_QUEUE a vault
   * (as many as its queues may hold: a curator submitting more is not followed further).
   */
  watch(vault: string, id: string): void {
    let ids = this.submitted.get(vault);
    if (!ids) {
      ids = new Set();
      this.submitted.set(vault, ids);
    }
    if (ids.size < MAX_QUEUE) ids.add(id);
  }

  clear(): void {
    this.vaults.clear();
    this.refused.clear();
    this.submitted.clear();
    this.doneAt.clear();
    this.beyondLimit = 0;
  }

  /** Caps found accepted or revoked at or before `block` (no reorganization reaches it) are no longer watched. */
  settle(block: number): void {
    for (const [key, at] of this.doneAt) {
      if (at > block) continue;
      const split = key.lastIndexOf(':');
      this.submitted.get(key.slice(0, split))?.delete(key.slice(split + 1));
      this.doneAt.delete(key);
    }
  }

  /** A vault that is not one (no contract: a reorganization removed it) is forgotten. */
  forget(vault: string): void {
    this.vaults.delete(vault);
    this.submitted.delete(vault);
  }
}

export interface MetaMorphoRead {
  /** Vaults read from the chain this pass (the others were known unchanged). */
  read: number;
  /** Vaults that could not be read this pass (each keeps its last record), by address. */
  failures: { address: string; error: string }[];
}

/** A cap submitted for a market (the only log naming one not in a vault's queues yet). */
const SUBMIT_CAP = parseAbiItem('event SubmitCap(address indexed caller, bytes32 indexed id, uint256 cap)');

type VaultLog = { address: string; eventName: string; args: { id?: string } };

/**
 * One pass over the vaults of `factories` at `range.block`: `range.fromBlock` null reads every
 * factory's logs from its own start (`deployedAt` finds one the configuration gives none for; on a
 * node that keeps no old state, from Blue's `blueFromBlock`);
 * `known` are the vaults found before and `submitted` the markets outside their queues they
 * submitted a cap for (the checkpoint's).
 */
export async function readMetaMorpho(
  rpc: ChainRpc,
  blue: string,
  factories: readonly { address: string; fromBlock: number | null }[],
  range: { fromBlock: bigint | null; block: bigint; blueFromBlock: bigint; logsTo?: bigint },
  known: {
    vaults: readonly string[];
    submitted: Readonly<Record<string, readonly string[]>>;
    /** Vaults found past the limit before (the checkpoint's count). */
    beyondLimit?: number;
  },
  cache: MetaMorphoCache,
  deployedAt: (address: string) => Promise<bigint>,
  shared?: SharedLogs,
): Promise<MetaMorphoRead> {
  // What the checkpoint knows of a vault this process has not met (after that, the process knows).
  if (cache.vaults.size === 0) cache.beyondLimit = known.beyondLimit ?? 0;
  for (const v of known.vaults)
    if (!cache.vaults.has(v)) {
      cache.vaults.set(v, null);
      for (const id of known.submitted[v] ?? []) cache.watch(v, id);
    }
  const changed = new Set<string>();
  const note = (logs: readonly VaultLog[]) => {
    for (const l of logs) {
      const v = l.address.toLowerCase();
      changed.add(v);
      if (l.eventName === 'SubmitCap' && l.args.id) cache.watch(v, l.args.id.toLowerCase());
    }
  };
  const logsTo = range.logsTo ?? range.block;
  const walk = (address: string[], events: readonly AbiEvent[], fromBlock: bigint) =>
    getLogsAdaptive(rpc, {
      what: 'metamorpho',
      address: address as Hex[],
      events,
      fromBlock,
      toBlock: logsTo,
    });
  if (range.fromBlock === null) {
    // From the start: every vault each factory made, and the caps they submitted since.
    let first = logsTo;
    for (const f of factories) {
      // A factory found on a node that keeps no old state (0) is read from Blue's start.
      const found = f.fromBlock === null ? await deployedAt(f.address) : BigInt(f.fromBlock);
      const from = found > 0n ? found : range.blueFromBlock;
      if (from < first) first = from;
      for (const l of await walk([f.address], [CREATE_METAMORPHO], from)) {
        const v = (l.args as { metaMorpho: string }).metaMorpho.toLowerCase();
        cache.found(v);
      }
    }
    const all = [...cache.vaults.keys()];
    if (all.length > 0) note((await walk(all, [SUBMIT_CAP], first)) as unknown as VaultLog[]);
  } else if (range.fromBlock <= logsTo) {
    const from = range.fromBlock;
    const addresses = factories.map((f) => f.address);
    const created =
      sharedLogsOf<{ args: { metaMorpho: string } }>(shared, [CREATE_METAMORPHO], addresses, from, logsTo) ??
      ((await walk(addresses, [CREATE_METAMORPHO], from)) as unknown as { args: { metaMorpho: string } }[]);
    for (const l of created) {
      const v = l.args.metaMorpho.toLowerCase();
      cache.found(v);
    }
    // The vaults read before whose own logs say they changed (the pass's shared read has them).
    const readBefore = [...cache.vaults].flatMap(([v, r]) => (r ? [v] : []));
    if (readBefore.length > 0)
      await takeLogs(
        rpc,
        shared,
        {
          what: 'metamorpho',
          address: readBefore as Hex[],
          events: METAMORPHO_EVENTS,
          fromBlock: from,
          toBlock: logsTo,
        },
        note,
      );
    // The others are read whole; the caps they submitted in these blocks are all their logs add.
    const unread = [...cache.vaults].flatMap(([v, r]) => (r || cache.refused.has(v) ? [] : [v]));
    if (unread.length > 0) note((await walk(unread, [SUBMIT_CAP], from)) as unknown as VaultLog[]);
  }
  const toRead = [...cache.vaults]
    .filter(([v, r]) => !cache.refused.has(v) && (r === null || changed.has(v)))
    .map(([v]) => v as Hex);
  const failures: MetaMorphoRead['failures'] = [];
  // A vault that fails is read again next pass (its last record is served meanwhile).
  const fail = (address: Hex, error: string) => {
    failures.push({ address, error });
    cache.vaults.set(address, null);
  };
  if (toRead.length === 0) return { read: 0, failures };
  const at = { blockNumber: range.block, allowFailure: true, ...(await rpc.multicallOptions()) } as const;

  // 1. Each vault's own views.
  const VIEWS = [
    'MORPHO',
    'asset',
    'name',
    'symbol',
    'curator',
    'owner',
    'guardian',
    'fee',
    'feeRecipient',
    'timelock',
    'pendingTimelock',
    'pendingGuardian',
    'supplyQueueLength',
    'withdrawQueueLength',
    'lostAssets',
  ] as const;
  const views = await rpc.multicall({
    ...at,
    contracts: toRead.flatMap((address) =>
      VIEWS.map((functionName) => ({ address, abi: metaMorphoAbi, functionName }) as const),
    ),
  });
  throwIfUnread(views);
  const heads = new Map<Hex, Record<(typeof VIEWS)[number], unknown>>();
  toRead.forEach((address, i) => {
    const answers = views.slice(i * VIEWS.length, (i + 1) * VIEWS.length);
    const byName = Object.fromEntries(
      VIEWS.map((name, j) => [name, must(answers[j], `${name} of ${address}`)]),
    ) as Record<(typeof VIEWS)[number], { status: 'success' | 'failure'; result?: unknown; error?: Error }>;
    // No contract at all: a vault a reorganization removed (its creation orphaned) is forgotten.
    if (noContract(byName.MORPHO.error)) {
      cache.forget(address);
      failures.push({ address, error: `vault ${address}: no contract at block ${range.block}: forgotten` });
      return;
    }
    const missing = VIEWS.find((name) => name !== 'lostAssets' && byName[name].status !== 'success');
    if (missing) {
      fail(address, `vault ${address}: ${missing}() ${firstLine(byName[missing].error)}`);
      return;
    }
    if (String(byName.MORPHO.result).toLowerCase() !== blue) {
      cache.refused.set(
        address,
        `lends into ${String(byName.MORPHO.result).toLowerCase()}, not this Morpho Blue`,
      );
      return;
    }
    const lengths = [byName.supplyQueueLength.result, byName.withdrawQueueLength.result] as bigint[];
    if (lengths.some((n) => n > BigInt(MAX_QUEUE))) {
      fail(address, `vault ${address}: a queue of more than ${MAX_QUEUE} markets`);
      return;
    }
    heads.set(
      address,
      Object.fromEntries(
        VIEWS.map((name) => [name, byName[name].status === 'success' ? byName[name].result : null]),
      ) as Record<(typeof VIEWS)[number], unknown>,
    );
  });

  // 2. The queues, and the assets' metadata not seen before.
  const assets = [...new Set([...heads.values()].map((h) => String(h.asset).toLowerCase()))].filter(
    (a) => !cache.tokens.has(a),
  ) as Hex[];
  const queueCalls = [...heads].flatMap(([address, h]) => [
    ...Array.from({ length: Number(h.supplyQueueLength) }, (_, i) => ({
      address,
      abi: metaMorphoAbi,
      functionName: 'supplyQueue' as const,
      args: [BigInt(i)] as const,
    })),
    ...Array.from({ length: Number(h.withdrawQueueLength) }, (_, i) => ({
      address,
      abi: metaMorphoAbi,
      functionName: 'withdrawQueue' as const,
      args: [BigInt(i)] as const,
    })),
  ]);
  const queued = await rpc.multicall({ ...at, contracts: [...queueCalls, ...tokenCalls(assets)] });
  throwIfUnread(queued);
  keepTokens(assets, queued.slice(queueCalls.length), cache.tokens);
  const queues = new Map<Hex, { supply: string[]; withdraw: string[] }>();
  let k = 0;
  for (const [address, h] of heads) {
    const take = (n: number) => {
      const part = queued.slice(k, k + n);
      k += n;
      return part;
    };
    const supply = take(Number(h.supplyQueueLength));
    const withdraw = take(Number(h.withdrawQueueLength));
    const unread = [...supply, ...withdraw].find((r) => r.status !== 'success');
    if (unread) {
      fail(address, `vault ${address}: its queues: ${firstLine(unread.error)}`);
      heads.delete(address);
      continue;
    }
    queues.set(address, {
      supply: supply.map((r) => String(r.result).toLowerCase()),
      withdraw: withdraw.map((r) => String(r.result).toLowerCase()),
    });
  }

  // 3. Each queued market's config and pending cap, the vault's position and the market's totals.
  // (And the markets outside its queues it submitted a cap for: a market it is about to add.)
  const pairs = [...queues].flatMap(([address, q]) =>
    [...new Set([...q.withdraw, ...q.supply, ...(cache.submitted.get(address) ?? [])])].map((id) => ({
      address,
      id: id as Hex,
    })),
  );
  const PER_MARKET = 4;
  const marketReads = await rpc.multicall({
    ...at,
    contracts: pairs.flatMap(({ address, id }) => [
      { address, abi: metaMorphoAbi, functionName: 'config', args: [id] } as const,
      { address, abi: metaMorphoAbi, functionName: 'pendingCap', args: [id] } as const,
      { address: blue as Hex, abi: blueAbi, functionName: 'position', args: [id, address] } as const,
      { address: blue as Hex, abi: blueAbi, functionName: 'market', args: [id] } as const,
    ]),
  });
  throwIfUnread(marketReads);
  const markets = new Map<Hex, Map<string, VaultMarketRead>>();
  pairs.forEach(({ address, id }, i) => {
    const answers = marketReads.slice(i * PER_MARKET, (i + 1) * PER_MARKET);
    const unread = answers.find((r) => r.status !== 'success');
    if (unread) {
      if (heads.delete(address)) fail(address, `vault ${address}: market ${id}: ${firstLine(unread.error)}`);
      return;
    }
    const [config, pendingCap, position, market] = answers.map((r) => r.result) as [
      readonly [bigint, boolean, bigint],
      readonly [bigint, bigint],
      readonly [bigint, bigint, bigint],
      readonly [bigint, bigint, bigint, bigint, bigint, bigint],
    ];
    const of = markets.get(address) ?? new Map<string, VaultMarketRead>();
    markets.set(address, of);
    of.set(id, {
      cap: config[0],
      enabled: config[1],
      removableAt: config[2],
      pendingCap: pendingCap[0],
      pendingCapValidAt: pendingCap[1],
      supplyShares: position[0],
      totalSupplyAssets: market[0],
      totalSupplyShares: market[1],
    });
  });

  let read = 0;
  for (const [address, h] of heads) {
    const asset = cache.tokens.get(String(h.asset).toLowerCase());
    if (!asset || asset.decimals === null) {
      fail(
        address,
        `vault ${address}: its asset ${String(h.asset).toLowerCase()} does not answer decimals()`,
      );
      continue;
    }
    const q = must(queues.get(address), `queues of ${address}`);
    const [timelockValue, timelockAt] = h.pendingTimelock as readonly [bigint, bigint];
    const [guardianValue, guardianAt] = h.pendingGuardian as readonly [string, bigint];
    cache.vaults.set(address, {
      address,
      asset,
      name: String(h.name),
      symbol: String(h.symbol),
      curator: nonZero(h.curator),
      owner: String(h.owner).toLowerCase(),
      guardian: nonZero(h.guardian),
      feeRecipient: nonZero(h.feeRecipient),
      fee: h.fee as bigint,
      timelock: h.timelock as bigint,
      pendingTimelock: { value: timelockValue, validAt: timelockAt },
      pendingGuardian: { value: String(guardianValue).toLowerCase(), validAt: guardianAt },
      supplyQueue: q.supply,
      withdrawQueue: q.withdraw,
      markets: markets.get(address) ?? new Map(),
      lostAssets: h.lostAssets === null ? null : (h.lostAssets as bigint),
      block: Number(range.block),
    });
    // A submitted cap stays watched while it is pending and its market outside the queues.
    // (Forgotten once no reorganization can bring it back: settle().)
    const watched = cache.submitted.get(address);
    if (watched)
      for (const id of watched) {
        const done = q.withdraw.includes(id) || !(markets.get(address)?.get(id)?.pendingCapValidAt ?? 0n);
        const key = `${address}:${id}`;
        if (!done) cache.doneAt.delete(key);
        else if (!cache.doneAt.has(key)) cache.doneAt.set(key, Number(range.block));
      }
    read++;
  }
  return { read, failures };
}

/** Whether a call failed for want of a contract at its address (it answered no data at all). */
function noContract(err: Error | undefined): boolean {
  return err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionZeroDataError) !== null;
}

function nonZero(address: unknown): string | null {
  const a = String(address).toLowerCase();
  return a === zeroAddress ? null : a;
}
