/** What one liquidation may take, by the protocol's rules (see the sandbox's marketTerms()). */
export interface LiquidationTerms {
  /** Share of the debt one liquidation may repay while the health factor is at least FULL_CLOSE_HF. */
  closeFactor: number;
  /** Paid to the liquidator over the debt repaid, as a fraction of it (0.05 = 5 %). */
  liquidationBonus: number;
}

/** Below this health factor a partial-close protocol (Aave, Spark) lets the whole debt be repaid. */
export const FULL_CLOSE_HF = 0.95;

export interface LiquidationOutcome {
  /** Loan tokens repaid by the liquidator. */
  repaid: number;
  /** Collateral tokens seized. */
  seized: number;
  /** Loan tokens of debt the collateral no longer covers (written off), 0 when covered. */
  badDebt: number;
  /** What the position holds afterwards (debt 0 once bad debt is written off). */
  collateralLeft: number;
  debtLeft: number;
}

/**
 * One liquidation of a position with `collateral` and `debt` (token amounts) at USD prices
 * `collateralPrice` and `loanPrice`, whose health factor is `healthFactor` (< 1): the
 * liquidator repays closeFactor of the debt (all of it below FULL_CLOSE_HF) and seizes that
 * value times 1 + the bonus in collateral; when the collateral does not cover that, it takes
 * all of it, repays what it is worth, and the debt left is bad debt.
 */
export function liquidate(
  collateral: number,
  debt: number,
  healthFactor: number,
  collateralPrice: number,
  loanPrice: number,
  terms: LiquidationTerms,
): LiquidationOutcome {
  const bonus = 1 + terms.liquidationBonus;
  const cf = healthFactor < FULL_CLOSE_HF ? 1 : terms.closeFactor;
  let repaid = cf * debt;
  let seized = (repaid * loanPrice * bonus) / collateralPrice;
  let badDebt = 0;
  if (seized >= collateral) {
    seized = collateral;
    repaid = (collateral * collateralPrice) / (loanPrice * bonus);
    badDebt = Math.max(0, debt - repaid);
  }
  const debtLeft = badDebt > 0 ? 0 : Math.max(0, debt - repaid);
  return { repaid, seized, badDebt, collateralLeft: Math.max(0, collateral - seized), debtLeft };
}

/**
 * One leg of an account being liquidated: a position (one collateral token, one debt token),
 * token amounts at USD prices, with the share of its debt the liquidation may repay and the bonus
 * paid on it (the collateral's: Aave's per-reserve liquidation bonus, Euler's discount as a bonus).
 */
export interface AccountLiquidationLeg {
  collateral: number;
  debt: number;
  collateralPrice: number;
  loanPrice: number;
  closeFactor: number;
  liquidationBonus: number;
}

/**
 * A liquidation of an account (Aave, Spark, Euler): each leg's debt is repaid up to its close
 * factor and its collateral seized at its bonus (liquidate(), the leg's close factor taken as
 * given). Debt is bad debt only when the account has no collateral left at all (Aave v3.3's
 * deficit, Euler's socialization): while any collateral remains, what a leg's collateral could
 * not cover stays owed.
 */
export function liquidateAccount(legs: readonly AccountLiquidationLeg[]): LiquidationOutcome[] {
  const out = legs.map((l) =>
    l.debt > 0
      ? liquidate(l.collateral, l.debt, Number.POSITIVE_INFINITY, l.collateralPrice, l.loanPrice, {
          closeFactor: l.closeFactor,
          liquidationBonus: l.liquidationBonus,
        })
      : { repaid: 0, seized: 0, badDebt: 0, collateralLeft: l.collateral, debtLeft: 0 },
  );
  const collateralLeft = out.reduce((s, o) => s + o.collateralLeft, 0);
  if (collateralLeft > 0)
    for (const o of out)
      if (o.badDebt > 0) {
        o.debtLeft = o.badDebt;
        o.badDebt = 0;
      }
  return out;
}

/**
 * Compound v3's absorb of an account: every collateral is taken, valued at its liquidation
 * factor (value x (1 - bonus), the sandbox stating Compound's liquidationFactor as a bonus of
 * 1 - factor), and the whole debt is absorbed: `repaid` is the debt that collateral covers (at
 * most the debt), `badDebt` the rest of the debt absorbed (repaid + badDebt = debt); what the
 * collateral is worth over the debt is credited to the account as supply of the base token
 * (`surplus`, in loan tokens). Per leg, repaid and bad debt are shared by the collateral's value
 * at its liquidation factor (evenly without any).
 */
export function absorbAccount(legs: readonly AccountLiquidationLeg[]): {
  legs: LiquidationOutcome[];
  surplus: number;
} {
  const credited = legs.map((l) => ({ l, usd: l.collateral * l.collateralPrice * (1 - l.liquidationBonus) }));
  const creditedUsd = credited.reduce((s, c) => s + c.usd, 0);
  const debtUsd = legs.reduce((s, l) => s + l.debt * l.loanPrice, 0);
  const repaidUsd = Math.min(debtUsd, creditedUsd);
  const badDebtUsd = debtUsd - repaidUsd;
  const loanPrice = legs.find((l) => l.loanPrice > 0)?.loanPrice ?? 1;
  const out = credited.map(({ l, usd }) => {
    const share = creditedUsd > 0 ? usd / creditedUsd : 1 / legs.length;
    return {
      repaid: (repaidUsd * share) / l.loanPrice,
      seized: l.collateral,
      badDebt: (badDebtUsd * share) / l.loanPrice,
      collateralLeft: 0,
      debtLeft: 0,
    };
  });
  return { legs: out, surplus: Math.max(0, creditedUsd - debtUsd) / loanPrice };
}
