import type { ReadModel } from '../data/read-model.ts';
import type { Protocol } from '../domain/enums.ts';
import { QueryError } from './errors.ts';
import type { Found, Scope } from './types.ts';

export interface PositionsAtRiskParams extends Scope {
  /** Positions with healthFactor strictly below this (0 < x <= 10). */
  healthFactorThreshold: number;
  /** Only positions of this market (uniqueKey, lower-case), of protocol `marketProtocol`. */
  market?: { key: string; protocol: Protocol } | undefined;
  minBorrowUsd: number;
  limit: number;
}

/**
 * Borrow positions below the health factor threshold, by health factor ascending, then borrowed
 * USD descending. Items are risk index positions; MARKET_NOT_FOUND for an unknown market.
 */
export function positionsAtRisk(model: ReadModel, p: PositionsAtRiskParams): Found<number> {
  let marketOrd: number | undefined;
  if (p.market) {
    marketOrd = model.catalog.ordOf(p.market.key);
    if (marketOrd === undefined) throw QueryError.marketNotFound(p.market.key);
  }
  const hits = model.risk.query({
    healthFactorThreshold: p.healthFactorThreshold,
    protocol: p.protocol,
    chainIds: p.chainIds,
    marketOrd,
    minBorrowUsd: p.minBorrowUsd,
    limit: p.limit,
  });
  const scopeProtocols = p.market
    ? [p.market.protocol]
    : model.catalog.protocolsIn({ protocol: p.protocol, chainIds: p.chainIds });
  return {
    items: hits,
    itemProtocols: hits.map((i) => model.risk.protocolOf(i)),
    scopeProtocols,
  };
}
