/**
 * Euler v2: vault-based markets. A market is a borrowable vault (the loan: its asset) and one
 * collateral vault of the same product (cluster) on the same chain. Identifier
 * `<vaultAddress>_<collateralAddress>`. Only these markets carry vaultSymbol, vaultAddress and
 * governor (docs/decisions.md "Enumerations").
 *
 * The reference names each vault and its governor but gives the asset for a few mainnet
 * vaults only; the asset is otherwise read from the vault name ("Euler Prime USDC" -> USDC)
 * and looked up on that chain. Vaults whose asset cannot be found on their chain are skipped.
 */
import { assetFamily } from '../../../domain/asset-family.ts';
import { defaultLltv, familyCurve } from '../prices.ts';
import type { RefEulerVault } from '../reference.ts';
import type { TokenRef } from '../tokens.ts';
import type { BuildContext, DraftLists, MarketDraft } from './draft.ts';
import { pairLabel, structuralUnit } from './draft.ts';

/** Collaterals per borrowable vault in the primary list; the rest of the cluster is extended. */
const PRIMARY_COLLATERALS = 3;

/** Words of vault names that describe the vault, not its asset. */
const GENERIC_WORDS = new Set(['vault', 'borrow', 'borrowable', 'lend', 'escrow', 'escrowed', 'collateral']);

interface ResolvedVault {
  vault: RefEulerVault;
  asset: TokenRef;
  symbol: string;
  governor: string;
}

function assetFromName(ctx: BuildContext, v: RefEulerVault): TokenRef | null {
  if (v.asset) return ctx.tokens.byAddress(v.chainId, v.asset);
  if (!v.name) return null;
  const words = v.name
    .split(/\s+/)
    .filter((w) => w.length > 0 && !GENERIC_WORDS.has(w.toLowerCase()))
    .reverse()
    .slice(0, 2);
  for (const w of words) {
    const hit = ctx.tokens.bySymbol(v.chainId, w.replace(/[(),]/g, ''));
    if (hit) return hit;
  }
  return null;
}

export function eulerDrafts(ctx: BuildContext): DraftLists {
  const lists: DraftLists = { primary: [], extended: [] };
  const governorNames = new Map<string, string>();
  for (const g of ctx.ref.eulerGovernors) governorNames.set(`${g.chainId}:${g.entityId}`, g.name);

  // Resolve assets; number vaults per (chain, asset symbol) in file order: eUSDC-1, eUSDC-2...
  const counters = new Map<string, number>();
  const clusters = new Map<string, ResolvedVault[]>();
  for (const v of ctx.ref.eulerVaults) {
    const asset = assetFromName(ctx, v);
    if (!asset) continue;
    const counterKey = `${v.chainId}:${asset.symbol.toUpperCase()}`;
    const n = (counters.get(counterKey) ?? 0) + 1;
    counters.set(counterKey, n);
    const entity = v.governorEntities[0];
    const governor = (entity && governorNames.get(`${v.chainId}:${entity}`)) || v.governor;
    const resolved: ResolvedVault = { vault: v, asset, symbol: `e${asset.symbol}-${n}`, governor };
    const clusterKey = `${v.chainId}:${v.product}`;
    const list = clusters.get(clusterKey);
    if (list) list.push(resolved);
    else clusters.set(clusterKey, [resolved]);
  }

  for (const members of clusters.values()) {
    for (const loanVault of members) {
      // PT vaults are collateral-only in practice.
      if (assetFamily(loanVault.asset.symbol) === 'pt') continue;
      const { chainId, address } = loanVault.vault;
      const candidates = members
        .filter((c) => c.asset.address !== loanVault.asset.address)
        .map((c) => ({ c, h: structuralUnit(`${address}|${c.vault.address}`) }))
        .sort((a, b) => a.h - b.h)
        .map((x) => x.c);
      candidates.forEach((col, i) => {
        const collateral = col.asset;
        const loan = loanVault.asset;
        const identifier = `${address}_${collateral.address}`;
        const deprecated = loanVault.vault.status === 'deprecated';
        const d: MarketDraft = {
          protocol: 'euler',
          chainId,
          identifier,
          label: pairLabel(collateral, loan),
          collateral,
          loan,
          lltv: defaultLltv(collateral.symbol, loan.symbol, structuralUnit(identifier)),
          vault: { symbol: loanVault.symbol, address, governor: loanVault.governor },
          oracle: () => {
            const route = ctx.oracles.route(chainId, collateral.symbol, loan.symbol, address);
            const first = route?.feeds[0];
            if (!route || !first) return null;
            return ctx.oracles.build(first.address, route.feeds, false, route.warnings);
          },
          curve: familyCurve(loan.symbol, 0.8 + 0.4 * structuralUnit(`jitter|${identifier}`)),
          reserveFactor: 0.1,
          liquidationBonus: null,
          sizeScale: deprecated ? 0.3 : 1,
          emptyChance: deprecated ? 0.3 : 0.05,
        };
        (i < PRIMARY_COLLATERALS ? lists.primary : lists.extended).push(d);
      });
    }
  }
  return lists;
}
