import type { Protocol } from '../../domain/enums.ts';

/** The API's PositionAtRisk (its OpenAPI schema; docs/decisions.md "Positions at risk"). */
export interface PositionAtRiskView {
  protocol: Protocol;
  chainId: number;
  user: { address: string };
  healthFactor: number;
  state: { collateralUsd: number; borrowAssetsUsd: number; supplyAssetsUsd: number };
  market: {
    uniqueKey: string;
    collateralAsset: { symbol: string };
    loanAsset: { symbol: string };
    lltv: number;
  };
  leverage: number | null;
  distanceToLiq: number;
}

export interface RiskQuery {
  /** Positions with healthFactor strictly below this are returned (0 < x <= 10). */
  healthFactorThreshold: number;
  protocol?: Protocol | undefined;
  /** Chains in scope; undefined = every chain. */
  chainIds?: readonly number[] | undefined;
  /** Market ord in the catalog. */
  marketOrd?: number | undefined;
  minBorrowUsd: number;
  limit: number;
}
