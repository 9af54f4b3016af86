/**
 * Euler v2 on one chain, read through the Ethereum Vault Connector (EVC) and the vaults' own
 * views (EVault). No npm package ships their ABIs: the functions and events read are declared
 * here with euler-xyz/euler-vault-kit's and ethereum-vault-connector's signatures.
 *
 * Borrowers are found in the EVC's logs: an account's status check names its controller, the
 * vault it borrows from (`AccountStatusCheck`, `ControllerStatus`). Each such vault is read with
 * its collaterals (`LTVList`, `LTVLiquidation`), its oracle's mid-point quotes in its unit of
 * account (`getQuote`, as EVault values liquidity in liquidation mode), its totals and rate; each
 * account with its debt (`debtOfExact`), its enabled collaterals and controllers (EVC) and its
 * balances of the collateral vaults.
 *
 * Between passes a process keeps the accounts as read (EulerCache): a pass after the first reads
 * the new blocks' logs (the EVC's, the controllers' and their collateral vaults'), every known
 * vault's state and quotes, and only the accounts those logs touched; the others' debts follow
 * from the vault's interest accumulator (EVault's `owed × accumulator now / accumulator then`).
 *
 * A vault that does not answer EVault's views is not an Euler vault (anyone can enable any
 * contract as a controller): it is never read again in the process. A vault whose quotes or
 * tokens cannot be read keeps its last records, named; a failed request fails the pass.
 */
import { type Abi, parseAbi, zeroAddress } from 'viem';
import { AccountReads } from './account-reads.ts';
import { type ChainRpc, getLogsAdaptive, type SharedLogs, sharedLogsOf, throwIfUnread } from './rpc.ts';
import { keepTokens, type TokenMeta, tokenCalls } from './tokens.ts';

/** The EVC's events that name an account and its controller or collaterals. */
export const EVC_EVENTS = parseAbi([
  'event AccountStatusCheck(address indexed account, address indexed controller)',
  'event ControllerStatus(address indexed account, address indexed controller, bool enabled)',
  'event CollateralStatus(address indexed account, address indexed collateral, bool enabled)',
]);

/** A vault's events that change an account's debt or balance, and its liquidations. */
export const EVAULT_EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Borrow(address indexed account, uint256 assets)',
  'event Repay(address indexed account, uint256 assets)',
  'event PullDebt(address indexed from, address indexed to, uint256 assets)',
  'event DebtSocialized(address indexed account, uint256 assets)',
  'event Liquidate(address indexed liquidator, address indexed violator, address collateral, uint256 repayAssets, uint256 yieldBalance)',
]);

const evcAbi = parseAbi([
  'function getCollaterals(address account) view returns (address[])',
  'function getControllers(address account) view returns (address[])',
]);

const vaultAbi = parseAbi([
  'function asset() view returns (address)',
  'function oracle() view returns (address)',
  'function unitOfAccount() view returns (address)',
  'function governorAdmin() view returns (address)',
  'function interestFee() view returns (uint16)',
  'function totalAssets() view returns (uint256)',
  'function totalBorrows() view returns (uint256)',
  'function interestRate() view returns (uint256)',
  'function interestAccumulator() view returns (uint256)',
  'function LTVList() view returns (address[])',
  'function LTVLiquidation(address collateral) view returns (uint16)',
  'function convertToAssets(uint256 shares) view returns (uint256)',
  'function balanceOf(address account) view returns (uint256)',
  'function debtOfExact(address account) view returns (uint256)',
]);

const oracleAbi = parseAbi([
  'function getQuote(uint256 inAmount, address base, address quote) view returns (uint256)',
]);

/** The unit of account "USD" of Euler's oracles (ISO 4217 code 840), valued with 18 decimals. */
export const USD_UNIT = '0x0000000000000000000000000000000000000348';
/** EVault's debt precision: owed amounts are kept in 2^31 parts of the asset's smallest unit. */
const DEBT_SHIFT = 31n;
/** EVault's LTV scale. */
export const CONFIG_SCALE = 10_000n;

type Hex = `0x${string}`;
type CallResult = { status: 'success' | 'failure'; result?: unknown; error?: Error };
const first = (err: Error | undefined) => err?.message.split('\n')[0] ?? 'no answer';
const BLOCKS_AT_ONCE = 100;

/** What a vault's head calls return (VAULT_CALLS of them, in this order). */
const VAULT_FUNCTIONS = [
  'asset',
  'oracle',
  'unitOfAccount',
  'governorAdmin',
  'interestFee',
  'totalAssets',
  'totalBorrows',
  'interestRate',
  'interestAccumulator',
  'LTVList',
] as const;

/** An account of one controller vault, as read. */
export interface EulerAccount {
  /** Its debt in EVault's exact precision (asset × 2^31) at `accumulator`. */
  owedExact: bigint;
  /** The vault's interest accumulator at the read. */
  accumulator: bigint;
  /** Its balance (shares) of each collateral vault it has enabled, by collateral vault. */
  balances: Map<string, bigint>;
}

/** A collateral of a controller vault, at the block. */
export interface EulerCollateral {
  /** The collateral vault (its shares are the collateral). */
  vault: string;
  /** The collateral vault's shares (decimals) and its asset. */
  share: TokenMeta;
  asset: TokenMeta;
  /** Liquidation LTV, 1e4 scale (as ramped now). */
  liquidationLTV: bigint;
  /** The oracle's mid-point quote of one whole share (10^decimals) in the unit of account. */
  quote: bigint;
  /** Assets of one whole share (10^decimals): `convertToAssets`. */
  assetsPerShare: bigint;
}

export interface EulerVaultRead {
  vault: string;
  /** The vault's own token (name and symbol of its shares). */
  share: TokenMeta;
  asset: TokenMeta;
  unitOfAccount: string;
  /** The unit of account's token (null for USD, or a unit that is not a token). */
  unit: TokenMeta | null;
  governorAdmin: string;
  /** The vault's price oracle (an EulerRouter): quotes in the unit of account. */
  oracle: string;
  /** 1e4 scale. */
  interestFee: bigint;
  totalAssets: bigint;
  totalBorrows: bigint;
  /** Borrow rate per second, 1e27. */
  interestRate: bigint;
  /** The oracle's quote of one whole asset (10^decimals) in the unit of account. */
  assetQuote: bigint;
  collaterals: EulerCollateral[];
  /** Accounts that borrow or hold an enabled collateral: debt (assets, rounded up as `debtOf`) and balances. */
  accounts: { user: string; debt: bigint; balances: Map<string, bigint> }[];
}

export interface EulerLiquidationRead {
  vault: string;
  collateral: string;
  txHash: string;
  logIndex: number;
  block: number;
  timestamp: number;
  liquidator: string;
  violator: string;
  repayAssets: bigint;
  /** Collateral shares that went to the liquidator. */
  yieldBalance: bigint;
  /** Debt socialized in the same transaction (`DebtSocialized`): the lenders' loss. */
  socialized: bigint;
}

export interface EulerRead {
  vaults: EulerVaultRead[];
  liquidations: EulerLiquidationRead[];
  /** Items not served this pass (a vault as a whole: `0x…`; an account: `0x…:0x…`). */
  failures: { id: string; error: string }[];
  accountsRead: number;
  /** Every controller vault known after this pass (for the checkpoint). */
  controllers: string[];
  /** Accounts that hold something, and those whose read failed (kept to be read). */
  holders: { vault: string; user: string }[];
}

/** What a chain source keeps of Euler between passes in one process (see the module comment). */
export class EulerCache {
  /** Per vault: its asset and oracle's configuration, or null when it is not an Euler vault. */
  readonly vaults = new Map<string, { asset: string; collaterals: string[] } | null>();
  /** Per collateral vault: its asset. */
  readonly assetOf = new Map<string, string>();
  readonly tokens = new Map<string, TokenMeta>();
  /** Per controller vault and account: the account as last read; null when it holds nothing there. */
  readonly accounts = new AccountReads<EulerAccount>();
  /** `${vault}:${user}` whose read failed, or whose vault could not be read: read next pass. */
  readonly retry = new Set<string>();

  clear(): void {
    this.vaults.clear();
    this.assetOf.clear();
    this.tokens.clear();
    this.accounts.clear();
    this.retry.clear();
  }
}

/** An account's debt now from the exact debt read at `accumulator`: EVault's `debtOf` (rounded up). */
export function eulerDebt(account: EulerAccount, accumulatorNow: bigint): bigint {
  if (account.owedExact === 0n) return 0n;
  const owed = (account.owedExact * accumulatorNow) / account.accumulator;
  return (owed + (1n << DEBT_SHIFT) - 1n) >> DEBT_SHIFT;
}

type Known = { controllers: readonly string[]; accounts: readonly { vault: string; user: string }[] };

/** The controller vaults and the `${vault}:${user}` accounts known before a pass's logs. */
function knownState(known: Known, cache: EulerCache): { controllers: Set<string>; pairs: Set<string> } {
  const controllers = new Set(known.controllers.map((v) => v.toLowerCase()));
  const pairs = new Set<string>();
  for (const a of known.accounts) pairs.add(`${a.vault.toLowerCase()}:${a.user.toLowerCase()}`);
  for (const key of [...cache.accounts.keys(), ...cache.retry]) pairs.add(key);
  for (const key of pairs) controllers.add(key.split(':')[0]!);
  return { controllers, pairs };
}

/** The EVC and the vaults whose logs a pass reads: the controllers and their collateral vaults. */
function logAddresses(evc: string, controllers: Iterable<string>, cache: EulerCache): Set<string> {
  const out = new Set([evc.toLowerCase()]);
  for (const v of controllers) {
    const config = cache.vaults.get(v);
    if (config === null) continue;
    out.add(v);
    for (const c of config?.collaterals ?? []) out.add(c);
  }
  return out;
}

/** The addresses whose logs the next pass reads first (for a chain's one shared getLogs). */
export function eulerLogAddresses(evc: string, known: Known, cache: EulerCache): string[] {
  return [...logAddresses(evc, knownState(known, cache).controllers, cache)];
}

/**
 * One pass over Euler at `block`: the logs of [fromBlock, block] name borrowers (with their
 * controllers) and the accounts to read again; every known controller vault is read at `block`.
 */
export async function readEuler(
  rpc: ChainRpc,
  evc: string,
  range: { fromBlock: bigint; block: bigint },
  known: Known,
  cache: EulerCache = new EulerCache(),
  shared?: SharedLogs,
): Promise<EulerRead> {
  const at = { blockNumber: range.block, allowFailure: true, ...(await rpc.multicallOptions()) } as const;
  // A multicall at the block; none sent for no calls.
  const call = async (
    contracts: readonly { address: Hex; abi: Abi; functionName: string; args?: readonly unknown[] }[],
  ): Promise<CallResult[]> => {
    if (contracts.length === 0) return [];
    const results = (await rpc.multicall({ ...at, contracts: contracts as never })) as CallResult[];
    throwIfUnread(results);
    return results;
  };
  const { controllers, pairs } = knownState(known, cache);
  const touched = new Set<string>();
  const failures: EulerRead['failures'] = [];
  const liquidations: Omit<EulerLiquidationRead, 'timestamp'>[] = [];

  // 1. Logs: the EVC's and the known vaults' (controllers and their collaterals) in one read; the
  // logs of controllers the EVC's logs name for the first time in a second.
  const readLogs = async (addresses: string[]) => {
    if (addresses.length === 0 || range.fromBlock > range.block) return [];
    const events = [...EVC_EVENTS, ...EVAULT_EVENTS];
    return (
      sharedLogsOf<Awaited<ReturnType<typeof getLogsAdaptive<typeof events>>>[number]>(
        shared,
        events,
        addresses,
        range.fromBlock,
        range.block,
      ) ??
      (await getLogsAdaptive(rpc, {
        address: addresses as Hex[],
        events,
        fromBlock: range.fromBlock,
        toBlock: range.block,
      }))
    );
  };
  const seen = logAddresses(evc, controllers, cache);
  const logs = await readLogs([...seen]);
  const socialized = new Map<string, bigint>();
  const take = (batch: typeof logs) => {
    for (const l of batch) {
      const address = l.address.toLowerCase();
      const args = l.args as Record<string, unknown>;
      const addr = (field: string) => String(args[field]).toLowerCase();
      switch (l.eventName) {
        case 'AccountStatusCheck':
        case 'ControllerStatus': {
          if (address !== evc.toLowerCase()) break;
          const vault = addr('controller');
          controllers.add(vault);
          pairs.add(`${vault}:${addr('account')}`);
          touched.add(addr('account'));
          break;
        }
        case 'CollateralStatus':
          if (address === evc.toLowerCase()) touched.add(addr('account'));
          break;
        case 'Borrow':
        case 'Repay':
        case 'DebtSocialized':
          if (l.eventName === 'Borrow' && controllers.has(address))
            pairs.add(`${address}:${addr('account')}`);
          touched.add(addr('account'));
          if (l.eventName === 'DebtSocialized')
            socialized.set(
              `${l.transactionHash.toLowerCase()}:${address}:${addr('account')}`,
              args['assets'] as bigint,
            );
          break;
        case 'PullDebt':
        case 'Transfer':
          for (const field of ['from', 'to']) if (addr(field) !== zeroAddress) touched.add(addr(field));
          break;
        case 'Liquidate':
          touched.add(addr('violator'));
          touched.add(addr('liquidator'));
          if (!controllers.has(address)) break;
          liquidations.push({
            vault: address,
            collateral: addr('collateral'),
            txHash: l.transactionHash.toLowerCase(),
            logIndex: l.logIndex,
            block: Number(l.blockNumber),
            liquidator: addr('liquidator'),
            violator: addr('violator'),
            repayAssets: args['repayAssets'] as bigint,
            yieldBalance: args['yieldBalance'] as bigint,
            socialized: 0n,
          });
      }
    }
  };
  take(logs);
  const fresh = [...controllers].filter((v) => !seen.has(v) && cache.vaults.get(v) !== null);
  if (fresh.length > 0) take(await readLogs(fresh));
  for (const l of liquidations) l.socialized = socialized.get(`${l.txHash}:${l.vault}:${l.violator}`) ?? 0n;
  const blocks = [...new Set(liquidations.map((l) => BigInt(l.block)))];
  const times = new Map<bigint, number>();
  for (let i = 0; i < blocks.length; i += BLOCKS_AT_ONCE) {
    const chunk = blocks.slice(i, i + BLOCKS_AT_ONCE);
    const read = await Promise.all(chunk.map((blockNumber) => rpc.client.getBlock({ blockNumber })));
    for (const [j, n] of chunk.entries()) times.set(n, Number(read[j]!.timestamp));
  }

  // 2. Every controller's head: asset, oracle, unit of account, totals, rate, accumulator, LTV list.
  const vaults = [...controllers].filter((v) => cache.vaults.get(v) !== null).sort() as Hex[];
  const heads = await call(
    vaults.flatMap((address) =>
      VAULT_FUNCTIONS.map((functionName) => ({ address, abi: vaultAbi as Abi, functionName })),
    ),
  );
  const head = new Map<string, Record<(typeof VAULT_FUNCTIONS)[number], unknown>>();
  vaults.forEach((vault, i) => {
    const r = heads.slice(i * VAULT_FUNCTIONS.length, (i + 1) * VAULT_FUNCTIONS.length);
    const bad = r.find((x) => x.status !== 'success');
    if (bad) {
      // Not an Euler vault (an account may enable any contract as its controller).
      failures.push({ id: vault, error: `vault ${vault}: not an Euler vault (${first(bad.error)})` });
      cache.vaults.set(vault, null);
      return;
    }
    const h = Object.fromEntries(VAULT_FUNCTIONS.map((f, j) => [f, r[j]!.result])) as Record<
      (typeof VAULT_FUNCTIONS)[number],
      unknown
    >;
    const collaterals = (h.LTVList as readonly string[]).map((c) => c.toLowerCase());
    if (new Set(collaterals).size !== collaterals.length) {
      failures.push({ id: vault, error: `vault ${vault}: a collateral listed twice` });
      return;
    }
    cache.vaults.set(vault, { asset: String(h.asset).toLowerCase(), collaterals });
    head.set(vault, h);
  });
  const served = [...head.keys()] as Hex[];

  // 3. Tokens not seen before (vault shares, assets, a unit of account that is a token) and the
  // collateral vaults' assets; then quotes, LTVs, share prices and the accounts to read.
  const newCollaterals = [
    ...new Set(served.flatMap((v) => cache.vaults.get(v)!.collaterals).filter((c) => !cache.assetOf.has(c))),
  ] as Hex[];
  const assets = await call(
    newCollaterals.map((address) => ({ address, abi: vaultAbi as Abi, functionName: 'asset' })),
  );
  newCollaterals.forEach((c, i) => {
    const r = assets[i]!;
    if (r.status === 'success') cache.assetOf.set(c, String(r.result).toLowerCase());
  });
  const newTokens = [
    ...new Set(
      served.flatMap((v) => {
        const h = head.get(v)!;
        const cs = cache.vaults.get(v)!.collaterals;
        return [
          v,
          String(h.asset).toLowerCase(),
          ...(String(h.unitOfAccount).toLowerCase() === USD_UNIT
            ? []
            : [String(h.unitOfAccount).toLowerCase()]),
          ...cs,
          ...cs.flatMap((c) => cache.assetOf.get(c) ?? []),
        ];
      }),
    ),
  ].filter((t) => !cache.tokens.has(t)) as Hex[];
  const pairsToRead = [...pairs].filter((key) => {
    const [vault, user] = key.split(':') as [string, string];
    return head.has(vault) && (touched.has(user) || cache.retry.has(key) || !cache.accounts.has(vault, user));
  });
  // Token metadata first: the quotes are of whole units (10^decimals).
  const metas = await call(tokenCalls(newTokens));
  keepTokens(newTokens, metas, cache.tokens);

  const unit = (v: string) => 10n ** BigInt(cache.tokens.get(v)?.decimals ?? 18);
  const reads = await call([
    ...served.flatMap((vault) => {
      const h = head.get(vault)!;
      const oracle = String(h.oracle) as Hex;
      const uoa = String(h.unitOfAccount) as Hex;
      const asset = String(h.asset) as Hex;
      return [
        {
          address: oracle,
          abi: oracleAbi,
          functionName: 'getQuote',
          args: [unit(asset.toLowerCase()), asset, uoa],
        } as const,
        ...cache.vaults.get(vault)!.collaterals.flatMap(
          (c) =>
            [
              { address: vault, abi: vaultAbi, functionName: 'LTVLiquidation', args: [c as Hex] },
              { address: oracle, abi: oracleAbi, functionName: 'getQuote', args: [unit(c), c as Hex, uoa] },
              { address: c as Hex, abi: vaultAbi, functionName: 'convertToAssets', args: [unit(c)] },
            ] as const,
        ),
      ];
    }),
    ...pairsToRead.flatMap((key) => {
      const [vault, user] = key.split(':') as [Hex, Hex];
      return [
        { address: vault, abi: vaultAbi, functionName: 'debtOfExact', args: [user] } as const,
        { address: evc as Hex, abi: evcAbi, functionName: 'getCollaterals', args: [user] } as const,
        { address: evc as Hex, abi: evcAbi, functionName: 'getControllers', args: [user] } as const,
        ...cache.vaults
          .get(vault)!
          .collaterals.map(
            (c) => ({ address: c as Hex, abi: vaultAbi, functionName: 'balanceOf', args: [user] }) as const,
          ),
      ];
    }),
  ] as { address: Hex; abi: Abi; functionName: string; args?: readonly unknown[] }[]);
  let k = 0;
  const states = new Map<string, Omit<EulerVaultRead, 'accounts'>>();
  for (const vault of served) {
    const h = head.get(vault)!;
    const collaterals = cache.vaults.get(vault)!.collaterals;
    const assetQuote = reads[k++]!;
    const parts = collaterals.map(() => [reads[k++]!, reads[k++]!, reads[k++]!] as const);
    const asset = cache.tokens.get(String(h.asset).toLowerCase());
    const share = cache.tokens.get(vault);
    const uoa = String(h.unitOfAccount).toLowerCase();
    const unitToken = uoa === USD_UNIT ? null : (cache.tokens.get(uoa) ?? null);
    // A vault whose asset is its unit of account values its debt as is (EVault asks no oracle).
    const sameUnit = String(h.asset).toLowerCase() === uoa;
    // Any part that cannot be read leaves the vault out (it keeps its last records): an account's
    // health needs every collateral's quote and decimals.
    const problem = !asset
      ? `asset ${String(h.asset)} does not answer decimals()`
      : !share
        ? 'its shares do not answer decimals()'
        : uoa !== USD_UNIT && !unitToken
          ? `unit of account ${uoa} is neither USD nor a token`
          : !sameUnit && (assetQuote.status !== 'success' || (assetQuote.result as bigint) === 0n)
            ? `its oracle does not quote its asset: ${first(assetQuote.error)}`
            : null;
    const out: EulerCollateral[] = [];
    let partProblem: string | null = null;
    collaterals.forEach((c, i) => {
      const [ltv, quote, perShare] = parts[i]!;
      const cAsset = cache.tokens.get(cache.assetOf.get(c) ?? '');
      const cShare = cache.tokens.get(c);
      if (ltv.status !== 'success' || (ltv.result as number) === 0) return; // not (or no longer) a collateral
      if (!cAsset || !cShare || quote.status !== 'success' || perShare.status !== 'success') {
        partProblem ??= `collateral ${c}: ${!cAsset || !cShare ? 'its shares or asset do not answer decimals()' : first((quote.status !== 'success' ? quote : perShare).error)}`;
        return;
      }
      out.push({
        vault: c,
        share: cShare,
        asset: cAsset,
        liquidationLTV: BigInt(ltv.result as number),
        quote: quote.result as bigint,
        assetsPerShare: perShare.result as bigint,
      });
    });
    if (problem || partProblem) {
      failures.push({ id: vault, error: `vault ${vault}: ${problem ?? partProblem}` });
      continue;
    }
    states.set(vault, {
      vault,
      share: share!,
      asset: asset!,
      unitOfAccount: uoa,
      unit: unitToken,
      governorAdmin: String(h.governorAdmin).toLowerCase(),
      interestFee: BigInt(h.interestFee as number),
      totalAssets: h.totalAssets as bigint,
      totalBorrows: h.totalBorrows as bigint,
      interestRate: h.interestRate as bigint,
      oracle: String(h.oracle).toLowerCase(),
      assetQuote: sameUnit ? unit(uoa) : (assetQuote.result as bigint),
      collaterals: out,
    });
  }
  for (const key of pairsToRead) {
    const [vault, user] = key.split(':') as [string, string];
    const listed = cache.vaults.get(vault)!.collaterals;
    const r = reads.slice(k, k + 3 + listed.length);
    k += 3 + listed.length;
    const bad = r.find((x) => x.status !== 'success');
    if (bad) {
      cache.retry.add(key);
      failures.push({ id: key, error: `account ${key}: ${first(bad.error)}` });
      continue;
    }
    cache.retry.delete(key);
    const enabled = new Set((r[1]!.result as readonly string[]).map((c) => c.toLowerCase()));
    const controlled = (r[2]!.result as readonly string[]).some((c) => c.toLowerCase() === vault);
    const balances = new Map<string, bigint>();
    listed.forEach((c, i) => {
      const balance = r[3 + i]!.result as bigint;
      if (enabled.has(c) && balance > 0n) balances.set(c, balance);
    });
    const owedExact = r[0]!.result as bigint;
    // An account holds something in this vault while the vault controls it (its debt, and its
    // enabled collaterals back that debt).
    const holds = controlled && (owedExact > 0n || balances.size > 0);
    cache.accounts.set(
      vault,
      user,
      holds ? { owedExact, accumulator: head.get(vault)!.interestAccumulator as bigint, balances } : null,
      Number(range.block),
    );
  }
  // Accounts of a vault not read this pass (its head refused): read once it is.
  for (const key of pairs)
    if (!head.has(key.split(':')[0]!) && touched.has(key.split(':')[1]!)) cache.retry.add(key);

  const out: EulerVaultRead[] = [];
  for (const [vault, state] of states) {
    const accumulator = head.get(vault)!.interestAccumulator as bigint;
    const accounts: EulerVaultRead['accounts'] = [];
    for (const [user, account] of cache.accounts.of(vault))
      if (account) accounts.push({ user, debt: eulerDebt(account, accumulator), balances: account.balances });
    out.push({ ...state, accounts });
  }
  const holders: EulerRead['holders'] = [];
  for (const key of pairs) {
    const [vault, user] = key.split(':') as [string, string];
    const account = cache.accounts.get(vault, user);
    if (account || (account === undefined && cache.retry.has(key))) holders.push({ vault, user });
  }
  return {
    vaults: out,
    liquidations: liquidations.map((l) => ({ ...l, timestamp: times.get(BigInt(l.block))! })),
    failures,
    accountsRead: pairsToRead.length,
    controllers: [...controllers].filter((v) => cache.vaults.get(v) !== null).sort(),
    holders,
  };
}
