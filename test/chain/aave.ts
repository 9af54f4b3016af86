/**
 * A real Aave v3 market (v3.0.x) on the local chain, for the tests: deployed from the compiled
 * artifacts npm ships in @aave/core-v3 (BUSL: loaded from node_modules at test time, never
 * committed), with TestTokens as its reserves and TestAggregators as their price feeds; with
 * `rewards`, its tokens' incentives controller is @aave/periphery-v3's RewardsController.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { type Abi, type Hex, maxUint256, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ACCOUNTS, type Anvil, type Artifact, compileContracts, deploy, readAt, sendTx } from './anvil.ts';

const require = createRequire(import.meta.url);
const ARTIFACTS = [
  join(dirname(require.resolve('@aave/core-v3/package.json')), 'artifacts/contracts'),
  join(dirname(require.resolve('@aave/periphery-v3/package.json')), 'artifacts/contracts'),
];

type Address = `0x${string}`;
/** Hardhat's link references: source unit → library name → byte ranges of the placeholders. */
type LinkReferences = Record<string, Record<string, { start: number; length: number }[]>>;
export type AaveArtifact = Artifact & { linkReferences: LinkReferences };

let index: Map<string, string[]> | undefined;

/**
 * The compiled artifact `<name>.json` of @aave/core-v3, else of @aave/periphery-v3 (its abi,
 * bytecode and link references).
 */
export function aaveArtifact(name: string): AaveArtifact {
  if (!index) {
    index = new Map();
    for (const dir of ARTIFACTS)
      for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.json') || file.endsWith('.dbg.json')) continue;
        const base = basename(file, '.json');
        // The core's artifact first: the periphery ships copies of some core interfaces.
        if (!index.has(base)) index.set(base, [join(dir, file)]);
        else if (dir === ARTIFACTS[0]) index.get(base)!.push(join(dir, file));
      }
  }
  const paths = index.get(name) ?? [];
  if (paths.length !== 1) throw new Error(`${paths.length} artifacts named ${name} in @aave/core-v3`);
  const { abi, bytecode, linkReferences } = JSON.parse(readFileSync(paths[0]!, 'utf8'));
  return { abi, bytecode, linkReferences };
}

/** The bytecode with each library's `__$…$__` placeholders replaced by its address. */
function link(artifact: AaveArtifact, libraries: Record<string, Address>): Hex {
  let code = artifact.bytecode.slice(2);
  for (const unit of Object.values(artifact.linkReferences))
    for (const [lib, ranges] of Object.entries(unit)) {
      const address = libraries[lib];
      if (!address) throw new Error(`library ${lib} not deployed`);
      for (const { start, length } of ranges)
        code = code.slice(0, start * 2) + address.slice(2).toLowerCase() + code.slice((start + length) * 2);
    }
  return `0x${code}`;
}

/**
 * Deploys an Aave contract, first the libraries it links (and theirs: FlashLoanLogic links
 * BorrowLogic), each once per `libraries`.
 */
async function deployLinked(
  client: ReturnType<Anvil['client']>,
  name: string,
  args: readonly unknown[],
  libraries: Record<string, Address>,
): Promise<Address> {
  const artifact = aaveArtifact(name);
  for (const unit of Object.values(artifact.linkReferences))
    for (const lib of Object.keys(unit)) libraries[lib] ??= await deployLinked(client, lib, [], libraries);
  return deploy(client, { abi: artifact.abi, bytecode: link(artifact, libraries) }, args);
}

/** A transaction with more gas than sendTx gives (initReserves deploys three proxies a reserve). */
async function sendBig(
  anvil: Pick<Anvil, 'client'>,
  from: number,
  address: Address,
  abi: Abi,
  functionName: string,
  args: readonly unknown[],
) {
  const c = anvil.client(from);
  const hash = await c.writeContract({ address, abi, functionName, args, gas: 15_000_000n } as never);
  const receipt = await c.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`${functionName} reverted`);
  return receipt;
}

export type AaveSymbol = 'WETH' | 'WBTC' | 'USDC' | 'DAI';
export const AAVE_SYMBOLS: readonly AaveSymbol[] = ['WETH', 'WBTC', 'USDC', 'DAI'];

/** A reserve to list: risk parameters in basis points, the price with 8 decimals (USD). */
export interface ReserveSpec {
  decimals: number;
  price: bigint;
  /** The feed's description, e.g. "ETH / USD". */
  feed: string;
  ltv: number;
  liquidationThreshold: number;
  liquidationBonus: number;
  borrowable: boolean;
  /** The rate strategy's kink, in basis points. */
  optimalUsage: number;
  /** 0: none. */
  eModeCategory: number;
}

export const DEFAULT_RESERVES: Record<AaveSymbol, ReserveSpec> = {
  WETH: {
    decimals: 18,
    price: 2_000n * 10n ** 8n,
    feed: 'ETH / USD',
    ltv: 8000,
    liquidationThreshold: 8250,
    liquidationBonus: 10500,
    borrowable: true,
    optimalUsage: 8000,
    eModeCategory: 0,
  },
  WBTC: {
    decimals: 8,
    price: 60_000n * 10n ** 8n,
    feed: 'BTC / USD',
    ltv: 7000,
    liquidationThreshold: 7500,
    liquidationBonus: 10650,
    borrowable: true,
    optimalUsage: 8000,
    eModeCategory: 0,
  },
  USDC: {
    decimals: 6,
    price: 10n ** 8n,
    feed: 'USDC / USD',
    ltv: 7700,
    liquidationThreshold: 8000,
    liquidationBonus: 10450,
    borrowable: true,
    optimalUsage: 9000,
    eModeCategory: 1,
  },
  DAI: {
    decimals: 18,
    price: 10n ** 8n,
    feed: 'DAI / USD',
    ltv: 7500,
    liquidationThreshold: 7800,
    liquidationBonus: 10500,
    borrowable: true,
    optimalUsage: 9000,
    eModeCategory: 1,
  },
};

export interface AaveOptions {
  /** Overrides of the default reserves' parameters. */
  reserves?: Partial<Record<AaveSymbol, Partial<ReserveSpec>>>;
  /** Basis points; 10 % unless given. */
  reserveFactor?: number;
  /** The flash loan premium, basis points; 0.05 % unless given. */
  flashLoanPremium?: number;
  /**
   * The protocol's share of the liquidation bonus, basis points: 0 unless given, so that a
   * LiquidationCall's collateral is the debt covered times the bonus exactly.
   */
  liquidationProtocolFee?: number;
  /** Deploys a RewardsController (ACCOUNTS[0] its emission manager) as every token's incentives controller. */
  rewards?: boolean;
  /**
   * A reserve as the oracle's base currency (unit 1e18; the others' feeds are then read as
   * prices in it), rather than USD (8 decimals).
   */
  baseCurrency?: AaveSymbol;
}

export interface AaveReserve {
  asset: Address;
  aToken: Address;
  stableDebt: Address;
  variableDebt: Address;
  feed: Address;
  rateStrategy: Address;
  decimals: number;
}

export interface AaveMarket {
  admin: Address;
  treasury: Address;
  provider: Address;
  pool: Address;
  configurator: Address;
  oracle: Address;
  dataProvider: Address;
  aclManager: Address;
  /** The tokens' incentives controller (zero without `rewards`). */
  rewardsController: Address;
  rewardsAbi: Abi;
  /** The block of the PoolAddressesProvider's deployment: every Aave event is at or after it. */
  deployBlock: bigint;
  reserves: Record<AaveSymbol, AaveReserve>;
  poolAbi: Abi;
  configuratorAbi: Abi;
  providerAbi: Abi;
  aclManagerAbi: Abi;
  oracleAbi: Abi;
  dataProviderAbi: Abi;
  aTokenAbi: Abi;
  stableDebtAbi: Abi;
  variableDebtAbi: Abi;
  rateStrategyAbi: Abi;
  aggregatorAbi: Abi;
  tokenAbi: Abi;
}

const RAY = 10n ** 27n;
/** Basis points as a ray (the rate strategy's unit). */
const bpsRay = (bps: number) => (BigInt(bps) * RAY) / 10_000n;

/** Deploys an Aave v3 market from ACCOUNTS[0], its admin (ACL admin, pool, risk and emergency admin). */
export async function deployAave(anvil: Anvil, opts: AaveOptions = {}): Promise<AaveMarket> {
  const art = compileContracts();
  const c = anvil.client(0);
  const admin = privateKeyToAccount(ACCOUNTS[0]).address;
  const treasury = admin;
  const specs = Object.fromEntries(
    AAVE_SYMBOLS.map((s) => [s, { ...DEFAULT_RESERVES[s], ...opts.reserves?.[s] }]),
  ) as Record<AaveSymbol, ReserveSpec>;
  const tx = (address: Address, abi: Abi, fn: string, args: readonly unknown[] = []) =>
    sendTx(anvil, 0, address, abi, fn, args);
  const libraries: Record<string, Address> = {};

  const assets = {} as Record<AaveSymbol, Address>;
  const feeds = {} as Record<AaveSymbol, Address>;
  for (const s of AAVE_SYMBOLS) {
    assets[s] = await deploy(c, art.TestToken!, [s, s, specs[s].decimals]);
    feeds[s] = await deploy(c, art.TestAggregator!, [8, specs[s].feed, specs[s].price]);
  }

  const providerArt = aaveArtifact('PoolAddressesProvider');
  const provider = await deploy(c, providerArt, ['Test', admin]);
  const deployBlock = await c.getBlockNumber({ cacheTime: 0 });
  const get = (fn: string) => readAt<Address>(anvil, provider, providerArt.abi, fn);

  // The ACLManager's constructor reads its admin from the provider.
  await tx(provider, providerArt.abi, 'setACLAdmin', [admin]);
  const aclArt = aaveArtifact('ACLManager');
  const aclManager = await deploy(c, aclArt, [provider]);
  await tx(provider, providerArt.abi, 'setACLManager', [aclManager]);
  for (const fn of ['addPoolAdmin', 'addRiskAdmin', 'addEmergencyAdmin', 'addAssetListingAdmin'])
    await tx(aclManager, aclArt.abi, fn, [admin]);

  // The provider deploys the proxies and initializes them with itself.
  const poolImpl = await deployLinked(c, 'Pool', [provider], libraries);
  await tx(provider, providerArt.abi, 'setPoolImpl', [poolImpl]);
  const pool = await get('getPool');
  const configuratorImpl = await deployLinked(c, 'PoolConfigurator', [], libraries);
  await tx(provider, providerArt.abi, 'setPoolConfiguratorImpl', [configuratorImpl]);
  const configurator = await get('getPoolConfigurator');

  const oracleArt = aaveArtifact('AaveOracle');
  const zero = '0x0000000000000000000000000000000000000000';
  const oracle = await deploy(c, oracleArt, [
    provider,
    AAVE_SYMBOLS.map((s) => assets[s]),
    AAVE_SYMBOLS.map((s) => feeds[s]),
    zero,
    opts.baseCurrency ? assets[opts.baseCurrency] : zero,
    opts.baseCurrency ? 10n ** 18n : 10n ** 8n,
  ]);
  await tx(provider, providerArt.abi, 'setPriceOracle', [oracle]);
  const dataProviderArt = aaveArtifact('AaveProtocolDataProvider');
  const dataProvider = await deploy(c, dataProviderArt, [provider]);
  await tx(provider, providerArt.abi, 'setPoolDataProvider', [dataProvider]);

  // The token implementations check, when a proxy initializes them, that it names their pool.
  const aTokenArt = aaveArtifact('AToken');
  const stableArt = aaveArtifact('StableDebtToken');
  const variableArt = aaveArtifact('VariableDebtToken');
  const aTokenImpl = await deploy(c, aTokenArt, [pool]);
  const stableImpl = await deploy(c, stableArt, [pool]);
  const variableImpl = await deploy(c, variableArt, [pool]);

  const rateArt = aaveArtifact('DefaultReserveInterestRateStrategy');
  const rateStrategies = {} as Record<AaveSymbol, Address>;
  for (const s of AAVE_SYMBOLS)
    rateStrategies[s] = await deploy(c, rateArt, [
      provider,
      bpsRay(specs[s].optimalUsage),
      0n, // base variable rate
      bpsRay(400), // variable slope 1
      bpsRay(6000), // variable slope 2
      bpsRay(50), // stable slope 1
      bpsRay(6000), // stable slope 2
      bpsRay(100), // base stable rate offset
      bpsRay(800), // stable rate excess offset
      bpsRay(2000), // optimal stable to total debt
    ]);

  const rewardsArt = aaveArtifact('RewardsController');
  const rewardsController = opts.rewards ? await deploy(c, rewardsArt, []) : zero;
  if (opts.rewards) await tx(rewardsController, rewardsArt.abi, 'initialize', [admin]);
  const configuratorArt = aaveArtifact('PoolConfigurator');
  const cfg = (fn: string, args: readonly unknown[]) => tx(configurator, configuratorArt.abi, fn, args);
  await sendBig(anvil, 0, configurator, configuratorArt.abi, 'initReserves', [
    AAVE_SYMBOLS.map((s) => ({
      aTokenImpl,
      stableDebtTokenImpl: stableImpl,
      variableDebtTokenImpl: variableImpl,
      underlyingAssetDecimals: specs[s].decimals,
      interestRateStrategyAddress: rateStrategies[s],
      underlyingAsset: assets[s],
      treasury,
      incentivesController: rewardsController,
      aTokenName: `Aave Test ${s}`,
      aTokenSymbol: `aTest${s}`,
      variableDebtTokenName: `Aave Test Variable Debt ${s}`,
      variableDebtTokenSymbol: `variableDebtTest${s}`,
      stableDebtTokenName: `Aave Test Stable Debt ${s}`,
      stableDebtTokenSymbol: `stableDebtTest${s}`,
      params: '0x',
    })),
  ]);
  for (const s of AAVE_SYMBOLS) {
    const spec = specs[s];
    await cfg('configureReserveAsCollateral', [
      assets[s],
      spec.ltv,
      spec.liquidationThreshold,
      spec.liquidationBonus,
    ]);
    if (spec.borrowable) await cfg('setReserveBorrowing', [assets[s], true]);
    await cfg('setReserveFactor', [assets[s], opts.reserveFactor ?? 1000]);
    await cfg('setReserveFlashLoaning', [assets[s], true]);
    if (opts.liquidationProtocolFee)
      await cfg('setLiquidationProtocolFee', [assets[s], opts.liquidationProtocolFee]);
  }
  await tx(configurator, configuratorArt.abi, 'updateFlashloanPremiumTotal', [opts.flashLoanPremium ?? 5]);
  // The category's threshold must exceed its assets' own, so it is set before they join it.
  await cfg('setEModeCategory', [1, 9300, 9500, 10100, zero, 'Stablecoins']);
  for (const s of AAVE_SYMBOLS)
    if (specs[s].eModeCategory !== 0) await cfg('setAssetEModeCategory', [assets[s], specs[s].eModeCategory]);

  const poolArt = aaveArtifact('Pool');
  const reserves = {} as Record<AaveSymbol, AaveReserve>;
  for (const s of AAVE_SYMBOLS) {
    const data = await readAt<{
      aTokenAddress: Address;
      stableDebtTokenAddress: Address;
      variableDebtTokenAddress: Address;
    }>(anvil, pool, poolArt.abi, 'getReserveData', [assets[s]]);
    reserves[s] = {
      asset: assets[s],
      aToken: data.aTokenAddress,
      stableDebt: data.stableDebtTokenAddress,
      variableDebt: data.variableDebtTokenAddress,
      feed: feeds[s],
      rateStrategy: rateStrategies[s],
      decimals: specs[s].decimals,
    };
  }

  return {
    rewardsController,
    rewardsAbi: rewardsArt.abi,
    admin,
    treasury,
    provider,
    pool,
    configurator,
    oracle,
    dataProvider,
    aclManager,
    deployBlock,
    reserves,
    poolAbi: poolArt.abi,
    configuratorAbi: configuratorArt.abi,
    providerAbi: providerArt.abi,
    aclManagerAbi: aclArt.abi,
    oracleAbi: oracleArt.abi,
    dataProviderAbi: dataProviderArt.abi,
    aTokenAbi: aTokenArt.abi,
    stableDebtAbi: stableArt.abi,
    variableDebtAbi: variableArt.abi,
    rateStrategyAbi: rateArt.abi,
    aggregatorAbi: art.TestAggregator!.abi,
    tokenAbi: art.TestToken!.abi,
  };
}

const addressOf = (from: number) => privateKeyToAccount(ACCOUNTS[from]!).address;

/** Mints `amount` of the reserve's token to ACCOUNTS[from] and lets the pool take it. */
async function fund(anvil: Anvil, aave: AaveMarket, from: number, symbol: AaveSymbol, amount: bigint) {
  const { asset } = aave.reserves[symbol];
  await sendTx(anvil, from, asset, aave.tokenAbi, 'mint', [addressOf(from), amount]);
  await sendTx(anvil, from, asset, aave.tokenAbi, 'approve', [aave.pool, maxUint256]);
}

/** What to mint to repay all of `user`'s variable debt: the debt with some margin for interest. */
async function wholeDebt(anvil: Anvil, aave: AaveMarket, symbol: AaveSymbol, user: Address) {
  const debt = await readAt<bigint>(
    anvil,
    aave.reserves[symbol].variableDebt,
    aave.variableDebtAbi,
    'balanceOf',
    [user],
  );
  return debt + debt / 1000n + 1n;
}

/** ACCOUNTS[from] supplies `amount` (token units), minted for it. */
export async function supply(
  anvil: Anvil,
  aave: AaveMarket,
  from: number,
  symbol: AaveSymbol,
  amount: bigint,
): Promise<TransactionReceipt> {
  await fund(anvil, aave, from, symbol, amount);
  const args = [aave.reserves[symbol].asset, amount, addressOf(from), 0];
  return sendTx(anvil, from, aave.pool, aave.poolAbi, 'supply', args);
}

/** ACCOUNTS[from] borrows `amount` at the variable rate. */
export async function borrow(
  anvil: Anvil,
  aave: AaveMarket,
  from: number,
  symbol: AaveSymbol,
  amount: bigint,
): Promise<TransactionReceipt> {
  const args = [aave.reserves[symbol].asset, amount, 2, 0, addressOf(from)];
  return sendTx(anvil, from, aave.pool, aave.poolAbi, 'borrow', args);
}

/** ACCOUNTS[from] repays `amount` of its variable debt (maxUint256: all of it), minted for it. */
export async function repay(
  anvil: Anvil,
  aave: AaveMarket,
  from: number,
  symbol: AaveSymbol,
  amount: bigint,
): Promise<TransactionReceipt> {
  const mint = amount === maxUint256 ? await wholeDebt(anvil, aave, symbol, addressOf(from)) : amount;
  await fund(anvil, aave, from, symbol, mint);
  const args = [aave.reserves[symbol].asset, amount, 2, addressOf(from)];
  return sendTx(anvil, from, aave.pool, aave.poolAbi, 'repay', args);
}

/** ACCOUNTS[from] withdraws `amount` (maxUint256: all it supplied). */
export async function withdraw(
  anvil: Anvil,
  aave: AaveMarket,
  from: number,
  symbol: AaveSymbol,
  amount: bigint,
): Promise<TransactionReceipt> {
  const args = [aave.reserves[symbol].asset, amount, addressOf(from)];
  return sendTx(anvil, from, aave.pool, aave.poolAbi, 'withdraw', args);
}

/** A new round of the reserve's feed: `answer` in USD with 8 decimals. */
export async function setPrice(
  anvil: Anvil,
  aave: AaveMarket,
  symbol: AaveSymbol,
  answer: bigint,
): Promise<TransactionReceipt> {
  return sendTx(anvil, 0, aave.reserves[symbol].feed, aave.aggregatorAbi, 'updateAnswer', [answer]);
}

/**
 * ACCOUNTS[from] liquidates `user`: covers `debtToCover` of its debt (maxUint256: as much as the
 * close factor allows), minted for it, and seizes the collateral (as aTokens if `receiveAToken`).
 */
export async function liquidate(
  anvil: Anvil,
  aave: AaveMarket,
  from: number,
  collateralSymbol: AaveSymbol,
  debtSymbol: AaveSymbol,
  user: Address,
  debtToCover: bigint,
  receiveAToken = false,
): Promise<TransactionReceipt> {
  const mint = debtToCover === maxUint256 ? await wholeDebt(anvil, aave, debtSymbol, user) : debtToCover;
  await fund(anvil, aave, from, debtSymbol, mint);
  const args = [
    aave.reserves[collateralSymbol].asset,
    aave.reserves[debtSymbol].asset,
    user,
    debtToCover,
    receiveAToken,
  ];
  return sendTx(anvil, from, aave.pool, aave.poolAbi, 'liquidationCall', args);
}

/**
 * Rewards for suppliers (the reserve's aToken) or variable borrowers (its debt token) of `symbol`:
 * `reward` emitted at `perSecond` until `end` (unix seconds), priced by `oracle` (a feed answering
 * `latestAnswer`), paid from ACCOUNTS[0]'s balance (a pull strategy). Needs `rewards`.
 */
export async function addRewards(
  anvil: Anvil,
  aave: AaveMarket,
  o: {
    symbol: AaveSymbol;
    side: 'supply' | 'borrow';
    reward: Address;
    oracle: Address;
    perSecond: bigint;
    end: number;
  },
): Promise<TransactionReceipt> {
  const strategy = await deploy(anvil.client(0), aaveArtifact('PullRewardsTransferStrategy'), [
    aave.rewardsController,
    aave.admin,
    aave.admin,
  ]);
  const r = aave.reserves[o.symbol];
  return sendTx(anvil, 0, aave.rewardsController, aave.rewardsAbi, 'configureAssets', [
    [
      {
        emissionPerSecond: o.perSecond,
        totalSupply: 0n,
        distributionEnd: o.end,
        asset: o.side === 'supply' ? r.aToken : r.variableDebt,
        reward: o.reward,
        transferStrategy: strategy,
        rewardOracle: o.oracle,
      },
    ],
  ]);
}
