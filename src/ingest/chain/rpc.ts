/**
 * One chain's JSON-RPC, through viem: a public client with retries and a request budget, the
 * multicall mode the chain allows (Multicall3 where it is deployed, deployless otherwise), and
 * log reads over block ranges that adapt to the provider (halved on a range error, grown while
 * quiet). Adapters take this client; tests hand it a transport of their own (a local chain).
 */
import {
  type Abi,
  type AbiEvent,
  BaseError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  createPublicClient,
  ExecutionRevertedError,
  type GetLogsReturnType,
  type PublicClient,
  type Transport,
  toEventSelector,
} from 'viem';
import { must } from '../../domain/must.ts';
import { append } from '../append.ts';
import { DEFAULT_PROVIDER_LIMITS, type ProviderLimits, providerTransport } from './transport.ts';

/** Multicall3's address, the same on every chain that has it. */
export const MULTICALL3 = '0xca11bde05977b3631167028862be2a173976ca11';

export interface ChainRpc {
  readonly chainId: number;
  readonly client: PublicClient;
  /** JSON-RPC requests sent so far (HTTP requests: a batch counts once). */
  requests(): number;
  /** Calls of multicalls answered so far (each contract read; what a pass has read of its accounts). */
  callsAnswered(): number;
  /** The log walks under way (eachLogs adds its own while it runs): what /health shows of a long pass. */
  readonly walks: Set<LogWalk>;
  /** The clock the walks' times are read on, ms. */
  now(): number;
  /**
   * Options for viem's multicall on this chain, resolved on first use; `large` for reads that
   * answer much more than they are asked (structs, strings: smaller batches when deployless).
   */
  multicallOptions(answers?: 'large'): Promise<MulticallOptions>;
  /**
   * viem's multicall, except that a batch that reverts as a whole (a call that burns all the gas
   * it is given: anyone may deploy one and name it in a market) is split in halves until that
   * call fails as its own item; the others are answered. The call is remembered: later
   * multicalls send it alone, beside the rest.
   */
  multicall: PublicClient['multicall'];
}

/**
 * How viem multicalls on a chain: through Multicall3 where it is deployed, else deployless (the
 * calls run in a contract's constructor, which returns the results as its code: EIP-170 caps
 * that at 24 KiB, so fewer calls go in one request). `batchSize` is viem's: bytes of the calls'
 * calldata per request.
 */
export type MulticallOptions =
  | { multicallAddress: `0x${string}`; batchSize: number }
  | { deployless: true; batchSize: number };

/** About 500 position reads per request through Multicall3, 60 deployless. */
export const MULTICALL3_BATCH_BYTES = 32 * 1024;
export const DEPLOYLESS_BATCH_BYTES = 4 * 1024;
/**
 * Deployless, a batch's results must fit in 24 KiB: reads answering ~10x their calldata (Aave's
 * reserve data) take batches of 512 bytes (about 14 reserves, ~9 KiB of results). Larger ones are
 * refused (`CreateContractSizeLimit`) and split only after the transport's retries (3.6 s).
 */
export const DEPLOYLESS_LARGE_ANSWERS_BATCH_BYTES = 512;

/** Retries of a failed JSON-RPC request (a time-out included), with exponential backoff from 250 ms. */
export const RPC_RETRIES = DEFAULT_PROVIDER_LIMITS.retries;

/** A walk of `eth_getLogs` over a range of blocks under way, updated as each request answers. */
export interface LogWalk {
  /** What it reads the logs of (the protocol, `shared` for a pass's one read of every contract). */
  readonly what: string;
  readonly fromBlock: number;
  readonly toBlock: number;
  /** The last block whose logs are read (fromBlock - 1 before the first answer). */
  reached: number;
  logs: number;
  readonly startedAtMs: number;
}

export interface RpcOptions {
  /** A transport of the caller's (tests); otherwise HTTP(S) to the URLs, within `limits`. */
  transport?: Transport;
  /** The clock of the log walks' times (Date.now by default). */
  now?: () => number;
  /** The provider's limits (batches, bytes, budget, timeout, retries); defaults otherwise. */
  limits?: Partial<ProviderLimits>;
  /** Retries of a failed request, with exponential backoff from 250 ms (default RPC_RETRIES). */
  retries?: number;
  /**
   * How long one request may take before it is abandoned (then retried), ms; default
   * DEFAULT_RPC_TIMEOUT_MS. A node that never answers fails a read after about
   * timeoutMs x (retries + 1), so the pass goes on (its other reads, its other sources).
   */
  timeoutMs?: number;
}

export function createChainRpc(
  chainId: number,
  rpcUrls: string | readonly string[],
  options: RpcOptions = {},
): ChainRpc {
  let sent = 0;
  let answered = 0;
  const walks = new Set<LogWalk>();
  const transport =
    options.transport ??
    providerTransport(
      typeof rpcUrls === 'string' ? [rpcUrls] : rpcUrls,
      {
        ...DEFAULT_PROVIDER_LIMITS,
        ...options.limits,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(options.retries === undefined ? {} : { retries: options.retries }),
      },
      {
        onRequest: () => {
          sent++;
        },
      },
    );
  const client = createPublicClient({ transport, batch: { multicall: false } }) as PublicClient;
  let mode: Promise<MulticallOptions> | null = null;
  const burners = new Map<string, true>();
  return {
    chainId,
    client,
    requests: () => sent,
    callsAnswered: () => answered,
    walks,
    now: options.now ?? Date.now,
    multicall: (async (args: Parameters<PublicClient['multicall']>[0]) => {
      const results = await splittingMulticall(client, args, burners);
      answered += results.length;
      return results;
    }) as PublicClient['multicall'],
    async multicallOptions(answers?: 'large') {
      mode ??= client.getCode({ address: MULTICALL3 }).then(
        (code): MulticallOptions =>
          code && code !== '0x'
            ? { multicallAddress: MULTICALL3, batchSize: MULTICALL3_BATCH_BYTES }
            : { deployless: true, batchSize: DEPLOYLESS_BATCH_BYTES },
        (err: unknown) => {
          mode = null;
          throw err;
        },
      );
      const options = await mode;
      return answers === 'large' && 'deployless' in options
        ? { ...options, batchSize: DEPLOYLESS_LARGE_ANSWERS_BATCH_BYTES }
        : options;
    },
  };
}

type MulticallArgs = Parameters<PublicClient['multicall']>[0];
type MulticallResult = { status: 'success' | 'failure'; result?: unknown; error?: Error };

/** Calls remembered as reverting a whole batch (per RPC), at most this many. */
const MAX_BURNERS = 1_000;

/** A call's identity for the memory of batch-reverting calls: its contract, function and arguments. */
function callKey(c: unknown): string {
  const { address, functionName, args } = c as { address: string; functionName: string; args?: unknown };
  return `${address.toLowerCase()}:${functionName}:${args === undefined ? '' : String(args)}`;
}

/**
 * viem's multicall, splitting what a batch-reverting call brings down: the calls whose batch
 * reverted as a whole are asked again in halves (the others keep their answers) until the call
 * that reverts fails as its own item. Such a call is remembered (`burners`, per RPC): later
 * multicalls send it alone, beside the rest, so a hostile contract named in every pass costs one
 * more call, not a walk of halves; it is forgotten once it answers.
 */
async function splittingMulticall(
  client: PublicClient,
  args: MulticallArgs,
  burners: Map<string, true>,
): Promise<MulticallResult[]> {
  const contracts = args.contracts as readonly unknown[];
  if (args.allowFailure === false) return (await client.multicall(args)) as MulticallResult[];
  const alone: number[] = [];
  const rest: number[] = [];
  if (burners.size === 0 || contracts.length === 1) for (let i = 0; i < contracts.length; i++) rest.push(i);
  else
    contracts.forEach((c, i) => {
      (burners.has(callKey(c)) ? alone : rest).push(i);
    });
  const out: MulticallResult[] = new Array(contracts.length);
  const [settled, lone] = await Promise.all([
    settle(client, args, contracts, rest, burners),
    Promise.all(alone.map((i) => settle(client, args, contracts, [i], burners))),
  ]);
  rest.forEach((i, k) => {
    out[i] = must(settled.out[k], 'multicall answer');
  });
  alone.forEach((i, k) => {
    const r = must(lone[k]?.out[0], 'multicall answer');
    // A remembered call that answers now is forgotten (one that still fails stays).
    if (r.status === 'success') burners.delete(callKey(contracts[i]));
    out[i] = r;
  });
  return out;
}

/**
 * The calls `indices` of `contracts` in one multicall; those of a batch that reverted as a whole
 * asked again in halves. `reverted`: whether a batch of them did.
 */
async function settle(
  client: PublicClient,
  args: MulticallArgs,
  contracts: readonly unknown[],
  indices: readonly number[],
  burners: Map<string, true>,
): Promise<{ out: MulticallResult[]; reverted: boolean }> {
  if (indices.length === 0) return { out: [], reverted: false };
  const results = (await client.multicall({
    ...args,
    contracts: indices.map((i) => contracts[i]) as never,
  })) as MulticallResult[];
  const down = results.flatMap((r, k) => (r.status === 'failure' && isBatchRevert(r.error) ? [k] : []));
  if (down.length === 0) return { out: results, reverted: false };
  const remember = (call: unknown) => {
    const key = callKey(call);
    burners.delete(key);
    burners.set(key, true);
    if (burners.size > MAX_BURNERS) {
      const [oldest] = burners.keys();
      if (oldest !== undefined) burners.delete(oldest);
    }
  };
  const out = [...results];
  const [k] = down;
  if (k !== undefined && down.length === 1) {
    const i = must(indices[k], 'call index');
    const alone =
      indices.length === 1
        ? { out: results, reverted: true }
        : await settle(client, args, contracts, [i], burners);
    // Alone, it still brings its batch down, or it fails as its own item (the gas a burner leaves
    // finishes a batch of one): either way it is the one.
    const r = must(alone.out[0], 'multicall answer');
    if (r.status === 'failure') remember(contracts[i]);
    out[k] = alone.reverted ? ownRefusal(contracts[i], r) : r;
    return { out, reverted: true };
  }
  const half = Math.ceil(down.length / 2);
  const parts = [down.slice(0, half), down.slice(half)];
  const answers: { out: MulticallResult[]; reverted: boolean }[] = [];
  for (const part of parts)
    answers.push(
      await settle(
        client,
        args,
        contracts,
        part.map((k) => must(indices[k], 'call index')),
        burners,
      ),
    );
  const answered = parts.map((part, p) => {
    const answer = must(answers[p], 'half of a batch');
    return part.map((k, m) => ({ k, r: must(answer.out[m], 'multicall answer') }));
  });
  for (const { k, r } of answered.flat()) out[k] = r;
  // Both halves finished: the call that brought their batch down is among their failures.
  if (answers.every((a) => !a.reverted))
    for (const { k, r } of answered.flat())
      if (r.status === 'failure') remember(contracts[must(indices[k], 'call index')]);
  return { out, reverted: true };
}

/** A batch-reverting call's failure as its own item (viem names the batch, `aggregate3`). */
function ownRefusal(call: unknown, r: MulticallResult): MulticallResult {
  const c = call as { abi: Abi; functionName: string; args?: readonly unknown[]; address: `0x${string}` };
  const error = new ContractFunctionExecutionError(r.error as BaseError, {
    abi: c.abi,
    functionName: c.functionName,
    args: c.args,
    contractAddress: c.address,
  });
  return { status: 'failure', error };
}

/** A multicall batch that reverted as a whole (the chain's answer; a failed request is the RPC's). */
function isBatchRevert(err: Error | undefined): boolean {
  return (
    err instanceof ContractFunctionExecutionError &&
    err.functionName === 'aggregate3' &&
    err.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ExecutionRevertedError) !==
      null
  );
}

/** Blocks asked for in one `eth_getLogs` at first; halved on a range error, doubled when quiet. */
export const INITIAL_LOG_RANGE = 10_000n;
const MAX_LOG_RANGE = 100_000n;
/** A range that returns fewer logs than this is quiet: the next one is twice as long. */
const QUIET_LOGS = 1_000;

type LogsArgs<E extends readonly AbiEvent[]> = {
  /** What it reads the logs of, as /health names the walk. */
  what: string;
  address: `0x${string}` | `0x${string}`[];
  events: E;
  fromBlock: bigint;
  toBlock: bigint;
};

/**
 * The logs of `events` emitted by `address` (one contract or several) in [fromBlock, toBlock], in
 * chain order. A request
 * the provider refuses (a range or result limit) is retried on half the range, down to one
 * block; any other error is thrown. While it runs, the walk is in `rpc.walks` (`what` names it).
 */
export async function getLogsAdaptive<const E extends readonly AbiEvent[]>(
  rpc: ChainRpc,
  args: LogsArgs<E>,
): Promise<GetLogsReturnType<undefined, E, true>> {
  const out: GetLogsReturnType<undefined, E, true> = [];
  await eachLogs(rpc, args, (logs) => {
    append(out, logs);
  });
  return out;
}

/**
 * A reader's contracts grouped by the blocks of logs each reads, one walk a range: in steady state
 * every contract resumes at the same block (one walk); one just added walks from its own start to
 * its own end (`to`, else `logsTo`) without taking the others along. A contract starting past its
 * end reads none.
 */
export function walksByRange(
  contracts: readonly { address: string; from: bigint; to?: bigint }[],
  logsTo: bigint,
): { fromBlock: bigint; toBlock: bigint; addresses: string[] }[] {
  const walks = new Map<string, { fromBlock: bigint; toBlock: bigint; addresses: string[] }>();
  for (const c of contracts) {
    const toBlock = c.to ?? logsTo;
    if (c.from > toBlock) continue;
    const key = `${c.from}:${toBlock}`;
    const walk = walks.get(key) ?? { fromBlock: c.from, toBlock, addresses: [] };
    walk.addresses.push(c.address);
    walks.set(key, walk);
  }
  return [...walks.values()];
}

/**
 * A reader's logs of `args`, handed to `take`: the pass's shared read's part when it covers them
 * (in steady state), else its own walk, range by range (eachLogs).
 */
export async function takeLogs<const E extends readonly AbiEvent[], L>(
  rpc: ChainRpc,
  shared: SharedLogs | undefined,
  args: LogsArgs<E>,
  take: (logs: readonly L[]) => void | Promise<void>,
): Promise<void> {
  const addresses = Array.isArray(args.address) ? args.address : [args.address];
  const logs = sharedLogsOf<L>(shared, args.events, addresses, args.fromBlock, args.toBlock);
  if (logs) await take(logs);
  else await eachLogs(rpc, args, (got) => take(got as unknown as L[]));
}

/**
 * The same walk, each range's logs handed to `onLogs` as it is answered (in chain order; a range
 * holds whole blocks, so whole transactions) and not kept: what a first sync holds at once is one
 * range's logs, not its whole history's.
 */
export async function eachLogs<const E extends readonly AbiEvent[]>(
  rpc: ChainRpc,
  args: LogsArgs<E>,
  onLogs: (logs: GetLogsReturnType<undefined, E, true>) => void | Promise<void>,
): Promise<void> {
  const walk: LogWalk = {
    what: args.what,
    fromBlock: Number(args.fromBlock),
    toBlock: Number(args.toBlock),
    reached: Number(args.fromBlock) - 1,
    logs: 0,
    startedAtMs: rpc.now(),
  };
  rpc.walks.add(walk);
  try {
    let range = INITIAL_LOG_RANGE;
    let from = args.fromBlock;
    while (from <= args.toBlock) {
      const to = from + range - 1n < args.toBlock ? from + range - 1n : args.toBlock;
      let logs: GetLogsReturnType<undefined, E, true>;
      try {
        logs = await rpc.client.getLogs({
          address: args.address,
          events: args.events,
          fromBlock: from,
          toBlock: to,
          strict: true,
        });
      } catch (err) {
        if (range > 1n && isRangeError(err)) {
          range /= 2n;
          continue;
        }
        throw err;
      }
      await onLogs(logs);
      walk.reached = Number(to);
      walk.logs += logs.length;
      if (logs.length < QUIET_LOGS && range < MAX_LOG_RANGE)
        range = range * 2n < MAX_LOG_RANGE ? range * 2n : MAX_LOG_RANGE;
      from = to + 1n;
    }
  } finally {
    rpc.walks.delete(walk);
  }
}

/**
 * The first block at which `address` has code (a binary search over `eth_getCode`, about 30
 * requests on a chain of a billion blocks): where its logs start. 0 when the RPC keeps no old
 * state (then everything is read); any other failure is thrown (the pass fails, and is retried).
 */
export async function deploymentBlock(rpc: ChainRpc, address: `0x${string}`, head: bigint): Promise<bigint> {
  const deployed = async (blockNumber: bigint) => {
    const code = await rpc.client.getCode({ address, blockNumber });
    return code !== undefined && code !== '0x';
  };
  try {
    if (!(await deployed(head))) return head;
    let lo = 0n;
    let hi = head;
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      if (await deployed(mid)) hi = mid;
      else lo = mid + 1n;
    }
    return lo;
  } catch (err) {
    if (isMissingState(err)) return 0n;
    throw err;
  }
}

/** Whether a failure is a node's lack of old state (a pruned, non-archive node). */
export function isMissingState(err: unknown): boolean {
  // viem's message names the RPC's URL: only the node's own words are read (a host named
  // "archive" is no answer about state).
  const text =
    err instanceof BaseError
      ? `${err.shortMessage} ${err.details ?? ''}`
      : err instanceof Error
        ? err.message
        : String(err);
  return /missing trie node|header not found|state (is )?not available|historical state|pruned/i.test(text);
}

/**
 * Logs read once for every reader of a chain (a pass's one `eth_getLogs` in steady state): each
 * reader takes those of its contracts when its range is this one, and reads its own otherwise.
 */
export interface SharedLogs {
  fromBlock: bigint;
  toBlock: bigint;
  /** The contracts whose logs were read (lower-case). */
  addresses: ReadonlySet<string>;
  logs: readonly { address: string; eventName: string; args: unknown; topics: readonly string[] }[];
}

/**
 * The shared logs of `events` emitted by `addresses`, when the shared read covers exactly
 * [fromBlock, toBlock] and every one of the addresses; null otherwise (the reader reads its own).
 * Logs are matched by their event's selector (topic0): another event of the same contract never
 * reaches a reader.
 */
export function sharedLogsOf<T>(
  shared: SharedLogs | undefined,
  events: readonly AbiEvent[],
  addresses: readonly string[],
  fromBlock: bigint,
  toBlock: bigint,
): T[] | null {
  if (!shared || shared.fromBlock !== fromBlock || shared.toBlock !== toBlock) return null;
  const wanted = new Set(addresses.map((a) => a.toLowerCase()));
  for (const a of wanted) if (!shared.addresses.has(a)) return null;
  const selectors = new Set<string>(events.map((e) => toEventSelector(e)));
  return shared.logs.filter(
    (l) => wanted.has(l.address.toLowerCase()) && selectors.has(l.topics[0] ?? ''),
  ) as T[];
}

/** The first line of a call's error (viem's messages run long), or 'no answer'. */
export const firstLine = (err: Error | undefined) => err?.message.split('\n')[0] ?? 'no answer';

/** Blocks whose times are asked at once (the transport batches them in one request). */
const BLOCKS_AT_ONCE = 100;

/** The timestamps (seconds) of `blocks`, a hundred per batched request. */
export async function blockTimes(rpc: ChainRpc, blocks: Iterable<bigint>): Promise<Map<bigint, number>> {
  const list = [...new Set(blocks)];
  const times = new Map<bigint, number>();
  for (let i = 0; i < list.length; i += BLOCKS_AT_ONCE) {
    const chunk = list.slice(i, i + BLOCKS_AT_ONCE);
    const read = await Promise.all(chunk.map((blockNumber) => rpc.client.getBlock({ blockNumber })));
    for (const [j, n] of chunk.entries()) times.set(n, Number(must(read[j], 'block').timestamp));
  }
  return times;
}

/** Whether a getLogs failure is the provider's limit on the range or the result size. */
export function isRangeError(err: unknown): boolean {
  const text =
    err instanceof Error ? `${err.message} ${(err as { details?: string }).details ?? ''}` : String(err);
  return /block range|range (is )?too (large|wide)|too many (results|logs)|query returned more than|limit exceeded|response size (is )?(too large|exceeded)/i.test(
    text,
  );
}

/**
 * Whether a failed call of a multicall is the contract's own answer (a revert, or no contract
 * code: the call is refused, the chain was read) rather than the RPC's failure. With
 * `allowFailure`, viem hands a failed request (HTTP error, timeout, the batch itself reverting)
 * to every call of the batch.
 */
export function isContractRefusal(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  // viem wraps each call's failure in a ContractFunctionExecutionError naming the call; a failed
  // request names the batch (aggregate3). A call's answer that does not decode (a bytes32
  // symbol, a short price) is the contract's too: its item alone is left out.
  if (err instanceof ContractFunctionExecutionError) return err.functionName !== 'aggregate3';
  return (
    err.walk(
      (e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError,
    ) !== null
  );
}

/**
 * Throws the first failure of a multicall's results that is not a contract's refusal: the chain
 * could not be read, so the run fails as a whole (its source keeps its last data) rather than
 * serving what one failed request left out.
 */
export function throwIfUnread(
  results: readonly { status: 'success' | 'failure'; error?: Error | undefined }[],
): void {
  for (const r of results) if (r.status === 'failure' && !isContractRefusal(r.error)) throw r.error;
}
