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
 * Anyone can enable any contract as a controller. With the vault factory given, a controller is
 * read only if the factory made it (`GenericFactory.isProxy`: EVault's code, so its figures are
 * the contract's own). Without it, any contract that answers EVault's views is read; one that
 * answers what no EVault would (an accumulator below 1e27, a fee above 100 %, a rate above 100 a
 * year, more than 64 collaterals, a refused view) and was never served is not read again in the
 * process, and a collateral that does not answer `asset()` is not asked again. A vault served
 * before that stops answering, or whose quotes or tokens cannot be read, or that lists an LTV of
 * 100 % or more, keeps its last records, named in every pass; a failed request fails the pass.
 */
import { type Abi, type GetLogsReturnType, parseAbi, zeroAddress } from 'viem';
import { must, mustSlice } from '../../domain/must.ts';
import { AccountReads, accountAnswered } from './account-reads.ts';
import { blockTimes, type ChainRpc, firstLine, type SharedLogs, takeLogs, throwIfUnread } from './rpc.ts';
import { keepTokens, type TokenMeta, tokenCalls } from './tokens.ts';

/** The EVC's events that name an account and its controller or collaterals. */
export const EVC_EVENTS = parseAbi([
  'event AccountStatusCheck(address indexed account, address indexed controller)',
  'event ControllerStatus(address indexed account, address indexed controller, bool enabled)',
  'event CollateralStatus(address indexed account, address indexed collateral, bool enabled)',
]);

/**
 * A vault's events that change an account's debt or balance, its liquidations, and its
 * governor's changes of what its accounts' health depends on (an LTV, in either layout EVK
 * releases emit it, the rate model, caps, flags, hooks): a block with one reads the state again.
 */
export const EVAULT_EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Borrow(address indexed account, uint256 assets)',
  'event Repay(address indexed account, uint256 assets)',
  'event PullDebt(address indexed from, address indexed to, uint256 assets)',
  'event DebtSocialized(address indexed account, uint256 assets)',
  'event Liquidate(address indexed liquidator, address indexed violator, address collateral, uint256 repayAssets, uint256 yieldBalance)',
  'event GovSetLTV(address indexed collateral, uint16 borrowLTV, uint16 liquidationLTV, uint16 initialLiquidationLTV, uint48 targetTimestamp, uint32 rampDuration, bool initialized)',
  'event GovSetLTV(address indexed collateral, uint16 borrowLTV, uint16 liquidationLTV, uint16 initialLiquidationLTV, uint48 targetTimestamp, uint32 rampDuration)',
  'event GovSetInterestRateModel(address newInterestRateModel)',
  'event GovSetCaps(uint16 newSupplyCap, uint16 newBorrowCap)',
  'event GovSetConfigFlags(uint32 newConfigFlags)',
  'event GovSetHookConfig(address indexed newHookTarget, uint32 newHookedOps)',
]);

const factoryAbi = parseAbi(['function isProxy(address proxy) view returns (bool)']);

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

/** EVault's debt precision: owed amounts are kept in 2^31 parts of the asset's smallest unit. */
const DEBT_SHIFT = 31n;
/** EVault's LTV scale. */
export const CONFIG_SCALE = 10_000n;

type Hex = `0x${string}`;
type CallResult = { status: 'success' | 'failure'; result?: unknown; error?: Error };
const RAY = 10n ** 27n;
/** The most collaterals a vault is read with (real vaults list a few dozen at most). */
export const MAX_COLLATERALS = 64;
/** The highest per-second rate (1e27) read as a rate: 100 a year (10,000 %, continuous). */
const MAX_RATE = (100n * RAY) / 31_556_952n;

/** A vault's head: the views read first, in this order. */
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
  governorAdmin: string;
  /** The vault's price oracle (an EulerRouter): quotes in the unit of account. */
  oracle: string;
  /** 1e4 scale. */
  interestFee: bigint;
  totalAssets: bigint;
  totalBorrows: bigint;
  /** Borrow rate per second, 1e27. */
  interestRate: bigint;
  /** What one unit of debt owed at the vault's start owes now, 1e27 (the borrow index). */
  interestAccumulator: bigint;
  /** The oracle's quote of one whole asset (10^decimals) in the unit of account. */
  assetQuote: bigint;
  collaterals: EulerCollateral[];
  /**
   * The accounts kept, by user, as last read (null: the vault does not control it); an account's
   * debt now is `eulerDebt(account, interestAccumulator)`.
   */
  accounts: ReadonlyMap<string, EulerAccount | null>;
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
  /** Debt socialized by this liquidation (its `DebtSocialized`, logged just before it): the lenders' loss. */
  socialized: bigint;
}

export interface EulerRead {
  vaults: EulerVaultRead[];
  liquidations: EulerLiquidationRead[];
  /** Items not served this pass (a vault as a whole: `0x…`; an account: `0x…:0x…`). */
  failures: { id: string; error: string }[];
  accountsRead: number;
  /** The accounts read this pass, as `${vault}:${user}` (those whose reads failed are to retry). */
  read: ReadonlySet<string>;
  /** Every controller vault known after this pass that may be an Euler vault (for the checkpoint). */
  controllers: string[];
  /**
   * A vault's accounts to keep in the checkpoint: every account it controls, and those whose read
   * failed (`all`); else those without a position (no balance of a collateral the vault values
   * this pass: no log names them when they deposit collateral), and those whose read failed.
   */
  pendingOf(vault: string, all: boolean): string[];
}

/** A vault's head as validated. */
interface Head {
  asset: string;
  oracle: string;
  unitOfAccount: string;
  governorAdmin: string;
  interestFee: bigint;
  totalAssets: bigint;
  totalBorrows: bigint;
  interestRate: bigint;
  interestAccumulator: bigint;
  collaterals: string[];
}

/** What a chain source keeps of Euler between passes in one process (see the module comment). */
export class EulerCache {
  /**
   * Per controller vault: its collateral vaults as its last head listed them (their logs are
   * read); null when it is not an Euler vault; absent before it answered.
   */
  readonly vaults = new Map<string, string[] | null>();
  /** Per controller vault: the collateral list its accounts were last read with (joined). */
  readonly listed = new Map<string, string>();
  /** Per collateral vault: its asset; null when it does not answer `asset()`. */
  readonly assetOf = new Map<string, string | null>();
  readonly tokens = new Map<string, TokenMeta>();
  /**
   * Per controller vault and account: the account as last read; null when the vault does not
   * control it. Those without a balance are listed per vault (they hold no position).
   */
  readonly accounts = new AccountReads<EulerAccount>((a) => a.balances.size === 0);
  /** `${vault}:${user}` whose read failed, or whose vault could not be read: read next pass. */
  readonly retry = new Set<string>();
  /** Per controller vault and collateral vault: the accounts holding a balance of it (setAccount). */
  private readonly holders = new Map<string, Map<string, Set<string>>>();

  clear(): void {
    this.vaults.clear();
    this.listed.clear();
    this.assetOf.clear();
    this.tokens.clear();
    this.accounts.clear();
    this.retry.clear();
    this.holders.clear();
  }

  /** An account read at `block` (null: the vault does not control it), its holdings indexed. */
  setAccount(vault: string, user: string, state: EulerAccount | null, block: number): void {
    const was = this.accounts.get(vault, user);
    const byCollateral = this.holders.get(vault) ?? new Map<string, Set<string>>();
    this.holders.set(vault, byCollateral);
    for (const c of was?.balances.keys() ?? []) {
      const users = byCollateral.get(c);
      if (users?.delete(user) && users.size === 0) byCollateral.delete(c);
    }
    for (const c of state?.balances.keys() ?? []) {
      const users = byCollateral.get(c) ?? new Set<string>();
      byCollateral.set(c, users.add(user));
    }
    if (byCollateral.size === 0) this.holders.delete(vault);
    this.accounts.set(vault, user, state, block);
  }

  /** Forgets a vault's accounts. */
  forgetVault(vault: string): void {
    this.accounts.forget(vault);
    this.holders.delete(vault);
  }

  /** The accounts of `vault` holding a balance of `collateral`. */
  holdersOf(vault: string, collateral: string): ReadonlySet<string> {
    return this.holders.get(vault)?.get(collateral) ?? NO_HOLDERS;
  }
}

const NO_HOLDERS: ReadonlySet<string> = new Set<string>();

/**
 * The calls that value one collateral of a vault in its unit of account (as the pass reads them):
 * the oracle's quote of one whole asset, of one whole collateral share, and that share's assets.
 */
export function collateralQuoteCalls(
  vault: Pick<EulerVaultRead, 'oracle' | 'unitOfAccount' | 'asset'>,
  c: EulerCollateral,
) {
  const uoa = vault.unitOfAccount as Hex;
  const oneAsset = 10n ** BigInt(vault.asset.decimals ?? 18);
  const oneShare = 10n ** BigInt(c.share.decimals ?? 18);
  return [
    {
      address: vault.oracle as Hex,
      abi: oracleAbi,
      functionName: 'getQuote',
      args: [oneAsset, vault.asset.address as Hex, uoa],
    },
    {
      address: vault.oracle as Hex,
      abi: oracleAbi,
      functionName: 'getQuote',
      args: [oneShare, c.vault as Hex, uoa],
    },
    { address: c.vault as Hex, abi: vaultAbi, functionName: 'convertToAssets', args: [oneShare] },
  ] as const;
}

/** An account's debt now from the exact debt read at `accumulator`: EVault's `debtOf` (rounded up). */
export function eulerDebt(account: EulerAccount, accumulatorNow: bigint): bigint {
  if (account.owedExact === 0n) return 0n;
  const owed = (account.owedExact * accumulatorNow) / account.accumulator;
  return (owed + (1n << DEBT_SHIFT) - 1n) >> DEBT_SHIFT;
}

type Known = {
  controllers: readonly string[];
  accounts: readonly { vault: string; user: string }[];
  /** Vaults the last run served (a restarted process does not take one refusal for "not a vault"). */
  served?: readonly string[];
};

/** The controller vaults and the `${vault}:${user}` accounts known before a pass's logs. */
function knownState(known: Known, cache: EulerCache): { controllers: Set<string>; pairs: Set<string> } {
  const controllers = new Set([...known.controllers, ...(known.served ?? [])].map((v) => v.toLowerCase()));
  const pairs = new Set<string>();
  for (const a of known.accounts) pairs.add(`${a.vault.toLowerCase()}:${a.user.toLowerCase()}`);
  // (The accounts this process holds join once a log names them: knownState does not walk them.)
  for (const key of cache.retry) pairs.add(key);
  for (const key of pairs) controllers.add(key.slice(0, key.indexOf(':')));
  return { controllers, pairs };
}

/**
 * The EVC and the vaults whose logs a pass reads: the controllers and, once served whole, their
 * collateral vaults: those that answered `asset()` (read for served vaults only). A vault anyone
 * creates may list any token as a collateral: a plain token's `Transfer` logs (USDC's: thousands a
 * block) are never read.
 */
function logAddresses(evc: string, controllers: Iterable<string>, cache: EulerCache): Set<string> {
  const out = new Set([evc.toLowerCase()]);
  for (const v of controllers) {
    const collaterals = cache.vaults.get(v);
    if (collaterals === null) continue;
    out.add(v);
    for (const c of collaterals ?? []) if (typeof cache.assetOf.get(c) === 'string') out.add(c);
  }
  return out;
}

/** The addresses whose logs the next pass reads first (for a chain's one shared getLogs). */
export function eulerLogAddresses(evc: string, known: Known, cache: EulerCache): string[] {
  return [...logAddresses(evc, knownState(known, cache).controllers, cache)];
}

/** A head's values, or what no EVault would answer. */
function parseHead(results: readonly CallResult[]): Head | { problem: string } {
  const bad = results.find((r) => r.status !== 'success');
  if (bad) return { problem: firstLine(bad.error) };
  const h = Object.fromEntries(
    VAULT_FUNCTIONS.map((f, i) => [f, must(results[i], `${f} answer`).result]),
  ) as Record<(typeof VAULT_FUNCTIONS)[number], unknown>;
  const collaterals = (h.LTVList as readonly string[]).map((c) => c.toLowerCase());
  const head: Head = {
    asset: String(h.asset).toLowerCase(),
    oracle: String(h.oracle).toLowerCase(),
    unitOfAccount: String(h.unitOfAccount).toLowerCase(),
    governorAdmin: String(h.governorAdmin).toLowerCase(),
    interestFee: BigInt(h.interestFee as number),
    totalAssets: h.totalAssets as bigint,
    totalBorrows: h.totalBorrows as bigint,
    interestRate: h.interestRate as bigint,
    interestAccumulator: h.interestAccumulator as bigint,
    collaterals,
  };
  if (head.interestAccumulator < RAY) return { problem: 'its interest accumulator is below 1e27' };
  if (head.interestFee > CONFIG_SCALE) return { problem: 'its interest fee is above 100 %' };
  if (head.interestRate > MAX_RATE) return { problem: 'its interest rate is above 100 a year' };
  if (collaterals.length > MAX_COLLATERALS)
    return { problem: `it lists more than ${MAX_COLLATERALS} collaterals` };
  if (new Set(collaterals).size !== collaterals.length) return { problem: 'a collateral is listed twice' };
  if (head.asset === zeroAddress) return { problem: 'no asset' };
  return head;
}

/**
 * One pass over Euler at `block`: the logs of [fromBlock, block] name borrowers (with their
 * controllers) and the accounts to read again; every known controller vault is read at `block`.
 */
export async function readEuler(
  rpc: ChainRpc,
  evc: string,
  range: { fromBlock: bigint; block: bigint; logsTo?: bigint },
  known: Known,
  cache: EulerCache = new EulerCache(),
  shared?: SharedLogs,
  factory: string | null = null,
): Promise<EulerRead> {
  const at = { blockNumber: range.block, allowFailure: true, ...(await rpc.multicallOptions()) } as const;
  const logsTo = range.logsTo ?? range.block;
  // A multicall at the block; none sent for no calls.
  const call = async (
    contracts: readonly { address: Hex; abi: Abi; functionName: string; args?: readonly unknown[] }[],
  ): Promise<CallResult[]> => {
    if (contracts.length === 0) return [];
    const results = (await rpc.multicall({ ...at, contracts: contracts as never })) as CallResult[];
    throwIfUnread(results);
    return results;
  };
  const evcAddress = evc.toLowerCase();
  const { controllers, pairs } = knownState(known, cache);
  const touched = new Set<string>();
  const failures: EulerRead['failures'] = [];
  const liquidations: Omit<EulerLiquidationRead, 'timestamp'>[] = [];

  // 1. Logs: the EVC's and the known vaults' in one read; the logs of controllers the EVC's logs
  // name for the first time in a second.
  const events = [...EVC_EVENTS, ...EVAULT_EVENTS];
  type Log = GetLogsReturnType<undefined, typeof events, true>[number];
  // One range of logs at a time (a first sync walks millions of them): what they name is kept,
  // not the logs. A range holds whole blocks, so a Liquidate's DebtSocialized is with it.
  const readLogs = async (addresses: string[], take: (logs: readonly Log[]) => void) => {
    if (addresses.length === 0 || range.fromBlock > logsTo) return;
    await takeLogs(
      rpc,
      shared,
      {
        what: 'euler',
        address: addresses as Hex[],
        events,
        fromBlock: range.fromBlock,
        toBlock: logsTo,
      },
      take,
    );
  };
  const seen = logAddresses(evcAddress, controllers, cache);
  // Debt a liquidation socializes is logged just before its Liquidate (same transaction, vault, violator).
  const socialized = new Map<string, bigint>();
  const take = (logs: readonly Log[]) => {
    for (const l of logs) {
      const address = l.address.toLowerCase();
      const args = l.args as Record<string, unknown>;
      const addr = (field: string) => String(args[field]).toLowerCase();
      const tx = l.transactionHash.toLowerCase();
      switch (l.eventName) {
        case 'AccountStatusCheck':
        case 'ControllerStatus': {
          // Only the EVC's status events make an account a vault's borrower.
          if (address !== evcAddress) break;
          const vault = addr('controller');
          if (cache.vaults.get(vault) === null) break;
          controllers.add(vault);
          pairs.add(`${vault}:${addr('account')}`);
          touched.add(addr('account'));
          break;
        }
        case 'CollateralStatus':
          if (address === evcAddress) touched.add(addr('account'));
          break;
        case 'Borrow':
        case 'Repay':
          touched.add(addr('account'));
          break;
        case 'DebtSocialized':
          touched.add(addr('account'));
          socialized.set(`${tx}:${address}:${addr('account')}`, args['assets'] as bigint);
          break;
        case 'PullDebt':
        case 'Transfer':
          for (const field of ['from', 'to']) if (addr(field) !== zeroAddress) touched.add(addr(field));
          break;
        case 'Liquidate': {
          touched.add(addr('violator'));
          touched.add(addr('liquidator'));
          if (!controllers.has(address)) break;
          const key = `${tx}:${address}:${addr('violator')}`;
          liquidations.push({
            vault: address,
            collateral: addr('collateral'),
            txHash: tx,
            logIndex: l.logIndex,
            block: Number(l.blockNumber),
            liquidator: addr('liquidator'),
            violator: addr('violator'),
            repayAssets: args['repayAssets'] as bigint,
            yieldBalance: args['yieldBalance'] as bigint,
            socialized: socialized.get(key) ?? 0n,
          });
          socialized.delete(key);
        }
      }
    }
  };
  await readLogs([...seen], take);
  const fresh = [...controllers].filter((v) => !seen.has(v) && cache.vaults.get(v) !== null);
  if (fresh.length > 0) await readLogs(fresh, take);

  // 2. Controllers met for the first time: made by the vault factory (when it is given)?
  const servedBefore = new Set(known.served ?? []);
  const notAVault = (vault: string, why: string) => {
    cache.vaults.set(vault, null);
    cache.forgetVault(vault);
    failures.push({ id: vault, error: `vault ${vault}: not read as an Euler vault (${why})` });
  };
  if (factory) {
    const unknown = [...controllers].filter((v) => !cache.vaults.has(v) && !servedBefore.has(v)) as Hex[];
    const made = await call(
      unknown.map((v) => ({
        address: factory as Hex,
        abi: factoryAbi as Abi,
        functionName: 'isProxy',
        args: [v],
      })),
    );
    unknown.forEach((v, i) => {
      const r = must(made[i], 'isProxy answer');
      if (r.status !== 'success' || r.result !== true) notAVault(v, 'not made by the vault factory');
    });
  }

  // 3. Every controller's head: asset, oracle, unit of account, totals, rate, accumulator, LTV list.
  const vaults = [...controllers].filter((v) => cache.vaults.get(v) !== null).sort() as Hex[];
  const heads = await call(
    vaults.flatMap((address) =>
      VAULT_FUNCTIONS.map((functionName) => ({ address, abi: vaultAbi as Abi, functionName })),
    ),
  );
  const head = new Map<string, Head>();
  vaults.forEach((vault, i) => {
    const parsed = parseHead(heads.slice(i * VAULT_FUNCTIONS.length, (i + 1) * VAULT_FUNCTIONS.length));
    if ('problem' in parsed) {
      // Never answered: not an Euler vault. Answered before: kept, named each pass.
      if (!cache.vaults.has(vault) && !servedBefore.has(vault)) notAVault(vault, parsed.problem);
      else
        failures.push({ id: vault, error: `vault ${vault}: not read as an Euler vault (${parsed.problem})` });
      return;
    }
    head.set(vault, parsed);
    // Its collateral vaults' logs are read from the next pass on.
    cache.vaults.set(vault, parsed.collaterals);
  });
  const served = [...head].map(([vault, h]) => ({ vault: vault as Hex, h }));
  const liquidated = liquidations.filter((l) => cache.vaults.get(l.vault) !== null);
  const times = await blockTimes(
    rpc,
    liquidated.map((l) => BigInt(l.block)),
  );

  // 4. The collateral vaults' assets, and tokens not seen before (vault shares, assets); then
  // quotes, LTVs, share prices and the accounts to read.
  const newCollaterals = [
    ...new Set(served.flatMap(({ h }) => h.collaterals).filter((c) => !cache.assetOf.has(c))),
  ] as Hex[];
  const assets = await call(
    newCollaterals.map((address) => ({ address, abi: vaultAbi as Abi, functionName: 'asset' })),
  );
  newCollaterals.forEach((c, i) => {
    const r = must(assets[i], 'asset answer');
    cache.assetOf.set(c, r.status === 'success' ? String(r.result).toLowerCase() : null);
  });
  const newTokens = [
    ...new Set(
      served.flatMap(({ vault: v, h }) => {
        const cs = h.collaterals;
        return [v, h.asset, ...cs, ...cs.flatMap((c) => cache.assetOf.get(c) ?? [])];
      }),
    ),
  ].filter((t) => !cache.tokens.has(t)) as Hex[];
  keepTokens(newTokens, await call(tokenCalls(newTokens)), cache.tokens);
  // A vault whose collateral list changed: every account it knows is read again (one may hold a
  // newly listed collateral).
  const relisted = new Set<string>(
    served
      .filter(({ vault, h }) => cache.listed.get(vault) !== h.collaterals.join())
      .map(({ vault }) => vault),
  );
  // The accounts this process holds that a log named, or of a vault whose list changed (read
  // again). A log names a user, not its controller: each user is looked up under each vault,
  // or, when that is more lookups than the accounts held (a catch-up naming many users), each
  // account held is checked instead.
  for (const vault of relisted)
    for (const user of cache.accounts.of(vault).keys()) pairs.add(`${vault}:${user}`);
  if (touched.size * controllers.size <= cache.accounts.size) {
    for (const vault of controllers)
      for (const user of touched) if (cache.accounts.has(vault, user)) pairs.add(`${vault}:${user}`);
  } else
    for (const key of cache.accounts.keys()) {
      const cut = key.indexOf(':');
      if (touched.has(key.slice(cut + 1)) && controllers.has(key.slice(0, cut))) pairs.add(key);
    }
  const pairsToRead = [...pairs].flatMap((key) => {
    const vault = key.slice(0, key.indexOf(':'));
    const user = key.slice(key.indexOf(':') + 1);
    const h = head.get(vault);
    return h &&
      (relisted.has(vault) || touched.has(user) || cache.retry.has(key) || !cache.accounts.has(vault, user))
      ? [{ key, vault, user, h }]
      : [];
  });

  const unit = (v: string) => 10n ** BigInt(cache.tokens.get(v)?.decimals ?? 18);
  const reads = await call([
    ...served.flatMap(({ vault, h }) => {
      const oracle = h.oracle as Hex;
      const uoa = h.unitOfAccount as Hex;
      return [
        {
          address: oracle,
          abi: oracleAbi,
          functionName: 'getQuote',
          args: [unit(h.asset), h.asset as Hex, uoa],
        } as const,
        ...h.collaterals.flatMap(
          (c) =>
            [
              { address: vault, abi: vaultAbi, functionName: 'LTVLiquidation', args: [c as Hex] },
              { address: oracle, abi: oracleAbi, functionName: 'getQuote', args: [unit(c), c as Hex, uoa] },
              { address: c as Hex, abi: vaultAbi, functionName: 'convertToAssets', args: [unit(c)] },
            ] as const,
        ),
      ];
    }),
    ...pairsToRead.flatMap(({ vault, user, h }) => [
      { address: vault as Hex, abi: vaultAbi, functionName: 'debtOfExact', args: [user as Hex] } as const,
      {
        address: evcAddress as Hex,
        abi: evcAbi,
        functionName: 'getCollaterals',
        args: [user as Hex],
      } as const,
      {
        address: evcAddress as Hex,
        abi: evcAbi,
        functionName: 'getControllers',
        args: [user as Hex],
      } as const,
      ...h.collaterals.map(
        (c) =>
          ({ address: c as Hex, abi: vaultAbi, functionName: 'balanceOf', args: [user as Hex] }) as const,
      ),
    ]),
  ] as { address: Hex; abi: Abi; functionName: string; args?: readonly unknown[] }[]);
  let k = 0;
  const states = new Map<string, Omit<EulerVaultRead, 'accounts'>>();
  const next = () => must(reads[k++], 'vault answer');
  for (const { vault, h } of served) {
    const assetQuote = next();
    const parts = h.collaterals.map((c) => ({ c, ltv: next(), quote: next(), perShare: next() }));
    const asset = cache.tokens.get(h.asset);
    const share = cache.tokens.get(vault);
    // A vault whose asset is its unit of account values its debt as is (EVault asks no oracle).
    const sameUnit = h.asset === h.unitOfAccount;
    const quoted = sameUnit
      ? unit(h.asset)
      : assetQuote.status === 'success'
        ? (assetQuote.result as bigint)
        : 0n;
    // Any part that cannot be read leaves the vault out (it keeps its last records): an account's
    // health needs every collateral's quote and decimals.
    let problem = !asset
      ? `asset ${h.asset} does not answer decimals()`
      : !share
        ? 'its shares do not answer decimals()'
        : quoted === 0n
          ? `its oracle does not quote its asset: ${firstLine(assetQuote.error)}`
          : null;
    const out: EulerCollateral[] = [];
    for (const { c, ltv, quote, perShare } of parts) {
      // Not (or no longer) a collateral: an LTV of 0 (EVault values it at 0).
      if (ltv.status !== 'success' || (ltv.result as number) === 0 || problem) continue;
      const cAsset = cache.tokens.get(cache.assetOf.get(c) ?? '');
      const cShare = cache.tokens.get(c);
      const ltvValue = BigInt(ltv.result as number);
      if (ltvValue >= CONFIG_SCALE) problem = `collateral ${c}: a liquidation LTV of 100 % or more`;
      else if (cache.assetOf.get(c) === null) problem = `collateral ${c}: it does not answer asset()`;
      else if (!cAsset || !cShare) problem = `collateral ${c}: its shares or asset do not answer decimals()`;
      else if (quote.status !== 'success' || perShare.status !== 'success')
        problem = `collateral ${c}: ${firstLine((quote.status !== 'success' ? quote : perShare).error)}`;
      else
        out.push({
          vault: c,
          share: cShare,
          asset: cAsset,
          liquidationLTV: ltvValue,
          quote: quote.result as bigint,
          assetsPerShare: perShare.result as bigint,
        });
    }
    if (problem) {
      failures.push({ id: vault, error: `vault ${vault}: ${problem}` });
      continue;
    }
    states.set(vault, {
      vault,
      share: must(share, `shares of vault ${vault}`),
      asset: must(asset, `asset of vault ${vault}`),
      unitOfAccount: h.unitOfAccount,
      governorAdmin: h.governorAdmin,
      interestFee: h.interestFee,
      totalAssets: h.totalAssets,
      totalBorrows: h.totalBorrows,
      interestRate: h.interestRate,
      interestAccumulator: h.interestAccumulator,
      oracle: h.oracle,
      assetQuote: quoted,
      collaterals: out,
    });
  }
  for (const { key, vault, user, h } of pairsToRead) {
    const listed = h.collaterals;
    const r = reads.slice(k, k + 3 + listed.length);
    k += 3 + listed.length;
    if (!accountAnswered(key, r, cache.retry, failures)) continue;
    const [owed, collaterals, controllers] = mustSlice(r, 0, 3, `answers of account ${key}`);
    const enabled = new Set((collaterals.result as readonly string[]).map((c) => c.toLowerCase()));
    const controlled = (controllers.result as readonly string[]).some((c) => c.toLowerCase() === vault);
    const balances = new Map<string, bigint>();
    listed.forEach((c, i) => {
      const balance = must(r[3 + i], `balanceOf answer of ${key}`).result as bigint;
      if (enabled.has(c) && balance > 0n) balances.set(c, balance);
    });
    // Kept while the vault controls the account (a controller is released only with no debt):
    // it may deposit collateral or borrow again without a status check naming it.
    cache.setAccount(
      vault,
      user,
      controlled ? { owedExact: owed.result as bigint, accumulator: h.interestAccumulator, balances } : null,
      Number(range.block),
    );
  }
  // Its accounts are read with this list now (a failed request above leaves it to the next pass).
  for (const { vault, h } of served) cache.listed.set(vault, h.collaterals.join());
  // Accounts of a vault not read this pass (its head refused, served before): read once it is
  // (those known from the store, and those the logs named).
  for (const key of pairs) {
    const vault = key.slice(0, key.indexOf(':'));
    if (cache.vaults.get(vault) === null) cache.retry.delete(key);
    else if (!head.has(vault)) cache.retry.add(key);
  }

  const out: EulerVaultRead[] = [];
  for (const [vault, state] of states) out.push({ ...state, accounts: cache.accounts.of(vault) });
  const pendingOf = (vault: string, all: boolean): string[] => {
    const keys = new Set<string>();
    const valued = new Set((states.get(vault)?.collaterals ?? []).map((c) => c.vault));
    if (all) {
      for (const [user, account] of cache.accounts.of(vault)) if (account) keys.add(`${vault}:${user}`);
    } else {
      // Without a position: without a balance, or with balances only of collaterals the vault
      // lists and does not value (their holders, not every account).
      for (const user of cache.accounts.markedIn(vault)) keys.add(`${vault}:${user}`);
      for (const c of head.get(vault)?.collaterals ?? []) {
        if (valued.has(c)) continue;
        for (const user of cache.holdersOf(vault, c)) {
          const account = cache.accounts.get(vault, user);
          if (account && ![...account.balances.keys()].some((b) => valued.has(b)))
            keys.add(`${vault}:${user}`);
        }
      }
    }
    for (const key of cache.retry) if (key.startsWith(`${vault}:`)) keys.add(key);
    return [...keys];
  };
  return {
    vaults: out,
    liquidations: liquidated.map((l) => ({
      ...l,
      timestamp: must(times.get(BigInt(l.block)), `time of block ${l.block}`),
    })),
    failures,
    accountsRead: pairsToRead.length,
    read: new Set(pairsToRead.filter(({ key }) => !cache.retry.has(key)).map(({ key }) => key)),
    controllers: [...controllers].filter((v) => cache.vaults.get(v) !== null).sort(),
    pendingOf,
  };
}
