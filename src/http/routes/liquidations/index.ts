import { positions } from '../positions/index.ts';
import type { Area } from '../types.ts';
import { registerLiquidations } from './list.ts';
import { LiquidationSchema } from './schemas.ts';

/** Liquidations, streamed (category position; listed with the positions). */
export const liquidations: Area = {
  scope: 'data',
  tag: positions.tag,
  schemas: { Liquidation: LiquidationSchema },
  register(app, deps) {
    registerLiquidations(app, deps);
  },
};
