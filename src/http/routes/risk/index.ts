import type { Area } from '../types.ts';
import { registerMarketRisk } from './market.ts';
import { registerPositionsAtRisk } from './positions-at-risk.ts';
import { MarketRiskSchema, PositionAtRiskSchema, StressSchema } from './schemas.ts';
import { registerStressTest } from './stress.ts';

/** Risk: positions at risk, a market's risk, stress tests (category risk). */
export const risk: Area = {
  scope: 'data',
  tag: {
    name: 'Risk',
    description: 'Positions close to liquidation, market risk and stress tests (risk category).',
  },
  schemas: { PositionAtRisk: PositionAtRiskSchema, MarketRisk: MarketRiskSchema, Stress: StressSchema },
  register(app, deps) {
    registerPositionsAtRisk(app, deps);
    registerMarketRisk(app, deps);
    registerStressTest(app, deps);
  },
};
