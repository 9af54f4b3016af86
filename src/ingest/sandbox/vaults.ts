/**
 * The sandbox's vaults (see reference/SOURCES.md, "Vaults"): real Morpho vaults of the
 * reference allocating to the dataset's Morpho markets of their asset, and the Euler
 * borrowable vaults of the dataset with their collateral pairs. Allocations, caps and fees are
 * drawn from seeded streams; the same dataset and seed give the same vaults.
 */
import type { PricedMarketRecord, VaultAllocation, VaultRecord } from '../../domain/types.ts';
import type { ReferenceData } from './reference.ts';
import { rngFor, roundTo, unitHash } from './rng.ts';

/** Morpho vaults kept per profile (in reference file order). */
export const MORPHO_VAULTS: Readonly<Record<'default' | 'large', number>> = { default: 300, large: 2000 };
const MAX_ALLOCATIONS = 8;
const FEES = [0, 0.05, 0.1, 0.15, 0.2] as const;
const EULER_INTEREST_FEE = 0.1;

/** The curator a vault's name announces: its first word (`Steakhouse USDC` -> Steakhouse). */
export function curatorOf(name: string): string | null {
  const first = name.trim().split(/\s+/)[0];
  return first ? first : null;
}

export function sandboxVaults(
  ref: ReferenceData,
  markets: readonly PricedMarketRecord[],
  seed: number,
  profile: 'default' | 'large',
): VaultRecord[] {
  // Morpho markets by chain and loan token; what is left of each market's supply to allocate.
  const lending = new Map<string, PricedMarketRecord[]>();
  for (const m of markets) {
    if (m.protocol !== 'morpho' || !(m.supply > 0)) continue;
    const key = `${m.chainId}:${m.loanAddress.toLowerCase()}`;
    const list = lending.get(key);
    if (list) list.push(m);
    else lending.set(key, [m]);
  }
  const left = new Map<string, number>();
  const vaults: VaultRecord[] = [];
  const seen = new Set<string>();
  for (const v of ref.morphoVaults) {
    if (vaults.length >= MORPHO_VAULTS[profile]) break;
    const address = v.address.toLowerCase();
    const id = `${v.chainId}:${address}`;
    if (seen.has(id) || !/^0x[0-9a-f]{40}$/.test(address)) continue;
    const candidates = lending.get(`${v.chainId}:${v.asset.toLowerCase()}`);
    if (!candidates) continue;
    seen.add(id);
    const rng = rngFor(seed, `vault|${id}`);
    // Each candidate's hash once (not twice per comparison: the large profile has thousands of
    // candidates per vault); the order is the same.
    const chosen = candidates
      .map((m) => ({ m, h: unitHash(seed, `${id}|${m.uniqueKey}`) }))
      .sort((a, b) => a.h - b.h)
      .slice(0, rng.int(1, Math.min(MAX_ALLOCATIONS, candidates.length)))
      .map((c) => c.m);
    const allocations: VaultAllocation[] = [];
    for (const m of chosen) {
      const free = left.get(m.uniqueKey) ?? 1;
      const share = roundTo(Math.min(rng.float(0.05, 0.6), free * 0.8), 6);
      if (!(share > 0)) continue;
      left.set(m.uniqueKey, free - share);
      const usd = m.supply * share;
      allocations.push({
        marketKey: m.uniqueKey,
        supplyShare: share,
        supplyCapUsd: rng.chance(0.1) ? null : roundTo(usd * rng.float(1.2, 3), 2),
      });
    }
    if (allocations.length === 0) continue;
    vaults.push({
      protocol: 'morpho',
      chainId: v.chainId,
      address,
      name: v.name,
      symbol: v.symbol,
      assetAddress: v.asset.toLowerCase(),
      assetSymbol: v.assetSymbol,
      curator: curatorOf(v.name),
      governor: null,
      fee: rng.pick(FEES),
      allocations,
    });
  }
  // Euler: each borrowable vault lends to the borrowers of its collateral pairs (its markets).
  const names = new Map(ref.eulerVaults.map((v) => [`${v.chainId}:${v.address.toLowerCase()}`, v.name]));
  const euler = new Map<string, VaultRecord>();
  for (const m of markets) {
    if (m.protocol !== 'euler' || m.vaultAddress === null) continue;
    const address = m.vaultAddress.toLowerCase();
    const id = `${m.chainId}:${address}`;
    let v = euler.get(id);
    if (!v) {
      v = {
        protocol: 'euler',
        chainId: m.chainId,
        address,
        name: names.get(id) ?? m.vaultSymbol ?? address,
        symbol: m.vaultSymbol ?? '',
        assetAddress: m.loanAddress.toLowerCase(),
        assetSymbol: m.loan,
        curator: null,
        governor: m.governor,
        fee: EULER_INTEREST_FEE,
        allocations: [],
      };
      euler.set(id, v);
    }
    v.allocations.push({ marketKey: m.uniqueKey, supplyShare: 1, supplyCapUsd: null });
  }
  return [...vaults, ...euler.values()];
}
