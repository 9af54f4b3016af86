/**
 * The API's views a risk event carries as its body, built as the routes build them: an oracle
 * as `GET /oracles/{chainId}/{address}` serves it, a liquidation as `GET /liquidations` does.
 * The composition root hands them to the events loop (the events layer imports no query).
 */

import type { ReadModel } from '../data/read-model.ts';
import type { LiquidationEvent } from '../domain/records/history.ts';
import { getOracle, listOracles, type OracleDetailView, type OracleView } from './assets.ts';
import { type LiquidationView, liquidationView } from './history.ts';

export const eventViews = {
  staleOracles: (model: ReadModel, nowMs: number): readonly OracleView[] =>
    listOracles(model, { stale: true, limit: Number.MAX_SAFE_INTEGER }, nowMs).items,
  oracle: (model: ReadModel, chainId: number, address: string, nowMs: number): OracleDetailView | undefined =>
    getOracle(model, chainId, address, nowMs).items[0],
  liquidation: (model: ReadModel, l: LiquidationEvent): LiquidationView => liquidationView(model, l),
};
