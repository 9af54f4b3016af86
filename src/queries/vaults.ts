import type { ReadModel } from '../data/read-model.ts';
import { type AllocationValue, allocationValues, type VaultEntry } from '../data/vaults.ts';
import type { RiskLevel } from '../domain/enums.ts';
import { fraction, significant, significantOrNull, usdOrNull } from '../domain/precision.ts';
import type { MorphoVaultGovernance, OracleHealth } from '../domain/types.ts';
import { chainAddressPage } from './cursor.ts';
import { QueryError } from './errors.ts';
import type { Found } from './types.ts';

/**
 * Vaults: Morpho vaults with their curator, Euler vaults with their governor. Every figure is
 * computed from the markets' current state when the answer is built: an allocation's USD is
 * the vault's share of its market's supply now; totalAssetsUsd their sum; apy the allocations'
 * supply APYs weighted by their USD, net of the vault's fee: a Morpho vault's performance fee is
 * taken from what its markets pay it; an Euler vault's interest fee is already out of its markets'
 * supply APY (EVault takes it from the interest before its depositors earn it), so it is not
 * taken twice.
 */

export interface AllocationView {
  marketId: string;
  collateral: string | null;
  loan: string | null;
  /** Null when the market has no USD price of the vault's asset (docs/decisions.md "Real sources"). */
  supplyUsd: number | null;
  /** The allocation's part of the vault's assets, 0 to 1. */
  share: number;
  /** Null without a cap, or when the market has no USD price of the asset (supplyCap says which). */
  supplyCapUsd: number | null;
  /** The cap in units of the asset; null without one. */
  supplyCap: number | null;
  /** What the vault supplies over its cap (in units of the asset, else USD); null without a cap. */
  capUsage: number | null;
  supplyApy: number | null;
  strategyType: string | null;
  riskLevel: RiskLevel | null;
  oracleHealth: OracleHealth | null;
}

export interface VaultView {
  protocol: 'morpho' | 'euler';
  chainId: number;
  address: string;
  name: string;
  symbol: string;
  asset: { address: string; symbol: string };
  curator: string | null;
  governor: string | null;
  fee: number;
  /** Null when a market it supplies has no USD price of its asset (docs/decisions.md "Real sources"). */
  totalAssetsUsd: number | null;
  apy: number;
  allocations: AllocationView[];
  /** A Morpho vault read from its contract: roles, queues, what is pending; null otherwise. */
  governance: GovernanceView | null;
}

/** When a change a vault's timelock holds may be accepted, and whether it may be now. */
interface Due {
  validAt: string;
  acceptable: boolean;
}

export interface GovernanceView {
  owner: string;
  guardian: string | null;
  feeRecipient: string | null;
  timelockSeconds: number;
  supplyQueue: string[];
  withdrawQueue: string[];
  totalAssets: number;
  idleAssets: number;
  lostAssets: number | null;
  pendingCaps: ({ marketId: string; cap: number | null } & Due)[];
  pendingRemovals: { marketId: string; removableAt: string; removable: boolean }[];
  pendingTimelock: ({ seconds: number } & Due) | null;
  pendingGuardian: ({ guardian: string | null } & Due) | null;
  block: number;
}

/** A vault's governance as served at `nowSec`: times in ISO 8601, each pending change's due state. */
function governanceView(g: MorphoVaultGovernance, nowSec: number): GovernanceView {
  const due = (at: number): Due => ({ validAt: new Date(at * 1000).toISOString(), acceptable: nowSec >= at });
  return {
    owner: g.owner,
    guardian: g.guardian,
    feeRecipient: g.feeRecipient,
    timelockSeconds: g.timelockSeconds,
    supplyQueue: g.supplyQueue,
    withdrawQueue: g.withdrawQueue,
    totalAssets: significant(g.totalAssets),
    idleAssets: significant(g.idleAssets ?? 0),
    lostAssets: significantOrNull(g.lostAssets),
    pendingCaps: g.pendingCaps.map((p) => ({
      marketId: p.marketKey,
      cap: significantOrNull(p.cap),
      ...due(p.validAt),
    })),
    pendingRemovals: g.pendingRemovals.map((p) => ({
      marketId: p.marketKey,
      removableAt: new Date(p.removableAt * 1000).toISOString(),
      removable: nowSec >= p.removableAt,
    })),
    pendingTimelock: g.pendingTimelock && {
      seconds: g.pendingTimelock.seconds,
      ...due(g.pendingTimelock.validAt),
    },
    pendingGuardian: g.pendingGuardian && {
      guardian: g.pendingGuardian.guardian,
      ...due(g.pendingGuardian.validAt),
    },
    block: g.block,
  };
}

function vaultView(model: ReadModel, e: VaultEntry, nowSec: number): VaultView {
  const { catalog } = model;
  const r = e.record;
  // Shares and the APY weigh the allocations by USD, else by amounts of the asset.
  const { parts, totalUsd: total, totalWeight: weightTotal } = allocationValues(catalog, e, nowSec);
  let apy = 0;
  for (const p of parts) if (p.m && weightTotal > 0) apy += (p.weight / weightTotal) * p.m.supplyApy;
  const allocations = parts
    .map(({ a, m, usd: value, assets, cap, weight }) => ({
      weight,
      marketId: a.marketKey,
      collateral: m?.collateral ?? null,
      loan: m?.loan ?? null,
      supplyUsd: usdOrNull(value),
      share: weightTotal > 0 ? fraction(weight / weightTotal) : 0,
      supplyCapUsd: usdOrNull(cap?.usd ?? null),
      supplyCap: significantOrNull(cap?.assets ?? null),
      capUsage: capUsage(value, assets, cap),
      supplyApy: m ? m.supplyApy : null,
      strategyType: m ? m.strategyType : null,
      riskLevel: m ? m.strategyInfo.riskLevel : null,
      oracleHealth: m ? m.oracleHealth : null,
    }))
    .sort((x, y) => y.weight - x.weight || (x.marketId < y.marketId ? -1 : 1))
    .map(({ weight: _, ...view }) => view);
  return {
    protocol: r.protocol,
    chainId: r.chainId,
    address: r.address,
    name: r.name,
    symbol: r.symbol,
    asset: { address: r.assetAddress, symbol: r.assetSymbol },
    curator: r.curator,
    governor: r.governor,
    fee: fraction(r.fee),
    totalAssetsUsd: usdOrNull(total),
    apy: fraction(r.protocol === 'euler' ? apy : apy * (1 - r.fee)),
    allocations,
    governance: r.governance ? governanceView(r.governance, nowSec) : null,
  };
}

/** Supply over cap: in units of the asset where both are known, else in USD; null without a cap. */
function capUsage(usd: number | null, assets: number | null, cap: AllocationValue['cap']): number | null {
  if (cap === null) return null;
  if (assets !== null && cap.assets !== null) return cap.assets > 0 ? fraction(assets / cap.assets) : null;
  return usd !== null && cap.usd !== null && cap.usd > 0 ? fraction(usd / cap.usd) : null;
}

export interface VaultListParams {
  protocol?: 'morpho' | 'euler' | undefined;
  chainIds?: readonly number[] | undefined;
  /** Only vaults of this asset symbol (case-insensitive). */
  asset?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Vaults in scope by (chainId, address), paged by cursor. */
export function listVaults(model: ReadModel, p: VaultListParams, nowMs: number): Found<VaultView> {
  const nowSec = Math.floor(nowMs / 1000);
  const asset = p.asset?.trim().toUpperCase();
  const page = chainAddressPage(
    'vaults',
    model.vaults.entries,
    ({ record: r }) =>
      (p.protocol === undefined || r.protocol === p.protocol) &&
      (p.chainIds === undefined || p.chainIds.includes(r.chainId)) &&
      (asset === undefined || r.assetSymbol.toUpperCase() === asset),
    p.cursor,
    p.limit,
    (e) => vaultView(model, e, nowSec),
    (e) => e.record,
  );
  const scope = p.protocol
    ? [p.protocol]
    : (['euler', 'morpho'] as const).filter((x) => model.catalog.protocols.includes(x));
  return {
    items: page.items,
    itemProtocols: page.entries.map((e) => e.record.protocol),
    scopeProtocols: scope,
    total: page.total,
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** One vault; VAULT_NOT_FOUND when there is none at that address on that chain. */
export function getVault(
  model: ReadModel,
  chainId: number,
  address: string,
  nowMs: number,
): Found<VaultView> {
  const e = model.vaults.get(chainId, address);
  if (!e) throw QueryError.notFound('vault', chainId, address.toLowerCase());
  return {
    items: [vaultView(model, e, Math.floor(nowMs / 1000))],
    itemProtocols: [e.record.protocol],
    scopeProtocols: [e.record.protocol],
  };
}
