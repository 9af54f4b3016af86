/**
 * Fluid: T1 vaults (one supply token as collateral, one borrow token as loan). Identifier
 * `<vaultAddress>`. The native placeholder 0xeeee... is the chain's native asset (ETH on most
 * chains). T2-T4 vaults (DEX smart collateral or smart debt) are not pairs and are skipped, as
 * are vaults whose tokens no reference file names. Fluid's liquidation thresholds are not in the
 * reference: they are plausible values by asset family.
 */
import { defaultLltv, familyCurve, familyReserveFactor } from '../prices.ts';
import type { BuildContext, DraftLists } from './draft.ts';
import { pairLabel, structuralUnit } from './draft.ts';

export function fluidDrafts(ctx: BuildContext): DraftLists {
  const lists: DraftLists = { primary: [], extended: [] };
  for (const v of ctx.ref.fluidVaults) {
    if (v.vaultType !== 'T1' || typeof v.supplyToken !== 'string' || typeof v.borrowToken !== 'string')
      continue;
    const { chainId, address } = v;
    const collateral = ctx.tokens.byAddress(chainId, v.supplyToken);
    const loan = ctx.tokens.byAddress(chainId, v.borrowToken);
    if (!collateral || !loan) continue;
    const lltv = Math.min(0.95, defaultLltv(collateral.symbol, loan.symbol, structuralUnit(address)) + 0.02);
    lists.primary.push({
      protocol: 'fluid',
      chainId,
      identifier: address,
      label: pairLabel(collateral, loan),
      collateral,
      loan,
      lltv: Math.round(lltv * 1000) / 1000,
      vault: null,
      oracle: () => {
        const route = ctx.oracles.route(chainId, collateral.symbol, loan.symbol, address);
        const first = route?.feeds[0];
        if (!route || !first) return null;
        return ctx.oracles.build(first.address, route.feeds, false, route.warnings);
      },
      curve: familyCurve(loan.symbol, 0.8 + 0.4 * structuralUnit(`jitter|${address}`)),
      reserveFactor: familyReserveFactor(loan.symbol),
      liquidationBonus: null,
      sizeScale: 1,
      emptyChance: 0.05,
    });
  }
  return lists;
}
