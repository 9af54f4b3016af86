import type { Area } from '../types.ts';
import { registerPortfolio } from './detail.ts';
import { PortfolioSchema } from './schemas.ts';

/** Portfolios: a wallet across protocols and chains (category portfolio). */
export const portfolios: Area = {
  scope: 'data',
  tag: {
    name: 'Portfolios',
    description: 'A wallet across protocols and chains (portfolio category).',
  },
  schemas: { Portfolio: PortfolioSchema },
  register(app, deps) {
    registerPortfolio(app, deps);
  },
};
