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
