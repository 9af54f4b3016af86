import type { Area } from '../types.ts';
import { registerWalletPositions } from './list.ts';
import { PositionSchema } from './schemas.ts';

/** Positions: a wallet's positions (category position). */
export const positions: Area = {
  scope: 'data',
  tag: {
    name: 'Positions',
    description: "A wallet's positions, and liquidations (position category).",
  },
  schemas: { Position: PositionSchema },
  register(app, deps) {
    registerWalletPositions(app, deps);
  },
};
