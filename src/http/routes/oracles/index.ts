import type { Area } from '../types.ts';
import { registerOracleDetail } from './detail.ts';
import { registerOraclesList } from './list.ts';
import { registerOracleRounds } from './rounds.ts';
import { OracleDetailSchema, OracleRoundSchema, OracleSchema } from './schemas.ts';

/** Oracles: list, one oracle, its rounds (category core). */
export const oracles: Area = {
  scope: 'data',
  tag: {
    name: 'Oracles',
    description: 'Price oracles, their feeds, freshness and rounds (core category).',
  },
  schemas: { Oracle: OracleSchema, OracleDetail: OracleDetailSchema, OracleRound: OracleRoundSchema },
  register(app, deps) {
    registerOraclesList(app, deps);
    registerOracleDetail(app, deps);
    registerOracleRounds(app, deps);
  },
};
